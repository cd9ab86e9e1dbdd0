// read_trace on trace files written by the test itself (trace_writer.h): every format in every
// compression gives back exactly the keys that were written, the format is recognised from the
// name or sniffed from the bytes, and progress runs up to the file's size.
#include "sim/trace_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/trace.h"
#include "sim/trace_writer.h"
#include "testing/scratch_dir.h"

namespace chronocache::sim {
namespace {

using chronocache::test_support::ScratchDir;
using test_support::KeyRun;
using test_support::write_trace_file;

// The keys every file holds: 200 runs of 300 consecutive keys, run r starting at
// kBase + 100 * (r % 10). Every key lies in [kBase, kBase + 900 + 300), and each of them is
// requested, so the unique keys are exactly those 1,200. kBase < 2^24 keeps the cache2k file's
// first byte NUL (sniffed as binary) and every key a valid int32.
constexpr std::uint64_t kBase = 1 << 20;
constexpr std::size_t kRuns = 200;
constexpr std::size_t kRunLength = 300;
constexpr std::size_t kRequests = kRuns * kRunLength;  // 60,000
constexpr std::size_t kUniqueKeys = 900 + kRunLength;  // 1,200

std::vector<KeyRun> key_runs() {
  std::vector<KeyRun> runs;
  for (std::size_t r = 0; r < kRuns; ++r) runs.push_back({kBase + 100 * (r % 10), kRunLength});
  return runs;
}

struct Flavour {
  std::string_view name;    // file name without the compression suffix
  TraceFormat format;       // what read_trace must recognise
  std::string (*encode)();  // the file's decompressed bytes
};

std::vector<std::uint64_t> keys() { return test_support::expand_runs(key_runs()); }

// One per format, with each quirk of the real sample traces: LIRS text with "*" checkpoints, in
// LF and in CRLF; positional and header-named CSV; libCacheSim's binary; cache2k's ".trace"
// binary, which only sniffing tells from the LIRS text; ARC's run-length .lis.
const Flavour kFlavours[] = {
    {"lirs.trace", TraceFormat::kText, [] { return test_support::encode_text(keys(), "\n"); }},
    {"crlf.trace", TraceFormat::kText, [] { return test_support::encode_text(keys(), "\r\n"); }},
    {"positional.csv", TraceFormat::kCsv, [] { return test_support::encode_csv(keys()); }},
    {"cloudphysics.csv", TraceFormat::kCsv,
     [] { return test_support::encode_csv_with_header(keys()); }},
    {"sample.oracleGeneral.bin", TraceFormat::kOracleGeneral,
     [] { return test_support::encode_oracle_general(keys()); }},
    {"cache2k.trace", TraceFormat::kInt32BigEndian,
     [] { return test_support::encode_int32_big_endian(keys()); }},
    {"arc.lis", TraceFormat::kArcLis, [] { return test_support::encode_arc_lis(key_runs()); }},
};

constexpr std::string_view kCompressionSuffixes[] = {"", ".gz", ".xz", ".zst"};

TEST(TraceReader, EveryFormatInEveryCompressionGivesBackTheKeysWritten) {
  const ScratchDir dir;
  const std::vector<std::uint64_t> expected = keys();
  ASSERT_EQ(expected.size(), kRequests);
  for (const Flavour& flavour : kFlavours) {
    const std::string bytes = flavour.encode();
    for (const std::string_view suffix : kCompressionSuffixes) {
      const std::string name = std::string(flavour.name) + std::string(suffix);
      SCOPED_TRACE(name);
      write_trace_file(dir.path(name), bytes);
      const TraceFile file = read_trace(dir.path(name));
      EXPECT_EQ(file.format, flavour.format);
      EXPECT_EQ(file.trace.requests(), kRequests);
      EXPECT_EQ(count_unique_keys(file.trace), kUniqueKeys);
      EXPECT_EQ(file.trace.keys, expected);
      EXPECT_FALSE(file.trace.has_ttls());
    }
  }
}

TEST(TraceReader, CsvWithATtlColumnKeepsTimesAndTtls) {
  const ScratchDir dir;
  const std::string path = dir.path("ttl.csv.zst");
  write_trace_file(path, "100,7,512,30\n101,8,512,0\n140,7,512,30\n");
  const TraceFile file = read_trace(path);
  EXPECT_EQ(file.trace.keys, (std::vector<std::uint64_t>{7, 8, 7}));
  EXPECT_EQ(file.trace.times_s, (std::vector<std::uint32_t>{100, 101, 140}));
  EXPECT_EQ(file.trace.ttls_s, (std::vector<std::uint32_t>{30, 0, 30}));
}

TEST(TraceReader, ExplicitFormatOverridesRecognition) {
  const ScratchDir dir;
  // Read as text, the cache2k binary is one run of junk: the decoder refuses it.
  const std::string binary = dir.path("cache2k.trace.xz");
  write_trace_file(binary, test_support::encode_int32_big_endian(keys()));
  EXPECT_THROW(read_trace(binary, TraceFormat::kText), std::runtime_error);
  // Text under a .csv name: recognised as CSV it is refused (one field, no key column); read
  // as text it is the keys.
  const std::string text = dir.path("really_text.csv.gz");
  write_trace_file(text, test_support::encode_text(keys(), "\n"));
  EXPECT_THROW(read_trace(text), std::runtime_error);
  const TraceFile file = read_trace(text, TraceFormat::kText);
  EXPECT_EQ(file.format, TraceFormat::kText);
  EXPECT_EQ(file.trace.keys, keys());
}

TEST(TraceReader, ReportsProgressUpToTheFileSize) {
  // 1.44 MB of oracleGeneral records, uncompressed: more than one of read_trace's 1 MB chunks, so
  // progress is reported part-way and then at the end.
  const ScratchDir dir;
  const std::string path = dir.path("progress.oracleGeneral.bin");
  write_trace_file(path, test_support::encode_oracle_general(keys()));
  const std::uint64_t size = std::filesystem::file_size(path);
  ASSERT_EQ(size, kRequests * 24);
  std::vector<std::uint64_t> consumed;
  read_trace(path, std::nullopt, [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_EQ(total, size);
    if (!consumed.empty()) {
      EXPECT_GE(done, consumed.back());
    }
    consumed.push_back(done);
  });
  ASSERT_GE(consumed.size(), 2u);
  EXPECT_LT(consumed.front(), size);
  EXPECT_EQ(consumed.back(), size);
}

TEST(TraceReader, MissingFileNamesThePath) {
  const ScratchDir dir;
  try {
    read_trace(dir.path("no_such.trace.gz"));
    FAIL() << "no exception";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no_such.trace.gz"), std::string::npos);
  }
}

}  // namespace
}  // namespace chronocache::sim
