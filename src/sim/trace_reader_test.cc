// read_trace on the real sample traces of ../shared/data/traces: every compression, every
// format, and the request / unique-key counts the README's table states for each file.
#include "sim/trace_reader.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "sim/trace.h"

namespace chronocache::sim {
namespace {

std::string trace_path(std::string_view relative) {
  std::string path = CC_TRACES_DIR;
  path.append("/");
  path.append(relative);
  return path;
}

struct Expected {
  std::string_view file;
  TraceFormat format;  // as recognised from the name or sniffed
  std::size_t requests;
  std::size_t unique_keys;
};

// The README's counts (§1), which both reference simulators agree with.
constexpr Expected kSmallTraces[] = {
    {"lirs/cpp.trace.gz", TraceFormat::kText, 9'047, 1'223},
    {"lirs/cs.trace.gz", TraceFormat::kText, 6'781, 1'409},      // has "*" lines
    {"lirs/loop.trace.gz", TraceFormat::kText, 505'500, 1'011},  // CRLF line ends
    {"cache2k/web07.trace.xz", TraceFormat::kInt32BigEndian, 76'118, 20'484},
    {"libcachesim/cloudPhysicsIO.oracleGeneral.bin", TraceFormat::kOracleGeneral, 113'872, 48'974},
    {"libcachesim/cloudPhysicsIO.csv", TraceFormat::kCsv, 113'872, 48'974},
};

TEST(TraceReader, SampleTracesHaveTheReadmesRequestAndUniqueKeyCounts) {
  for (const Expected& expected : kSmallTraces) {
    SCOPED_TRACE(expected.file);
    const TraceFile file = read_trace(trace_path(expected.file));
    EXPECT_EQ(file.format, expected.format);
    EXPECT_EQ(file.trace.requests(), expected.requests);
    EXPECT_EQ(count_unique_keys(file.trace), expected.unique_keys);
  }
}

TEST(TraceReader, ArcLisFromZstdExpandsToTheArcPapersCounts) {
  // ARC paper Table III: OLTP has 914,145 requests over 186,880 blocks.
  const TraceFile file = read_trace(trace_path("arc/OLTP.lis.zst"));
  EXPECT_EQ(file.format, TraceFormat::kArcLis);
  EXPECT_EQ(file.trace.requests(), 914'145u);
  EXPECT_EQ(count_unique_keys(file.trace), 186'880u);
}

TEST(TraceReader, CsvAndOracleGeneralCopiesOfCloudPhysicsGiveTheSameStream) {
  const Trace csv = read_trace(trace_path("libcachesim/cloudPhysicsIO.csv")).trace;
  const Trace bin = read_trace(trace_path("libcachesim/cloudPhysicsIO.oracleGeneral.bin")).trace;
  EXPECT_EQ(csv.keys, bin.keys);
}

TEST(TraceReader, ExplicitFormatOverridesRecognition) {
  // Read as text, the cache2k binary is one run of junk: the decoder refuses it.
  EXPECT_THROW(read_trace(trace_path("cache2k/web07.trace.xz"), TraceFormat::kText),
               std::runtime_error);
  EXPECT_EQ(read_trace(trace_path("lirs/cpp.trace.gz"), TraceFormat::kText).trace.requests(),
            9'047u);
}

TEST(TraceReader, ReportsProgressUpToTheFileSize) {
  std::uint64_t last_consumed = 0;
  std::uint64_t last_total = 0;
  read_trace(trace_path("lirs/sprite.trace.gz"), std::nullopt,
             [&](std::uint64_t consumed, std::uint64_t total) {
               EXPECT_GE(consumed, last_consumed);
               last_consumed = consumed;
               last_total = total;
             });
  EXPECT_EQ(last_total, 146'988u);  // the README's byte count of the file
  EXPECT_EQ(last_consumed, last_total);
}

TEST(TraceReader, MissingFileNamesThePath) {
  try {
    read_trace(trace_path("no/such.trace.gz"));
    FAIL() << "no exception";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no/such.trace.gz"), std::string::npos);
  }
}

}  // namespace
}  // namespace chronocache::sim
