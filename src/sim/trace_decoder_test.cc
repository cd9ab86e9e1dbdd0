// TraceDecoder on hand-written inputs: the parsing rules of trace_format.h,
// one format at a time, and chunk boundaries anywhere.
#include "sim/trace_decoder.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/trace_format.h"

namespace chronocache::sim {
namespace {

using Keys = std::vector<std::uint64_t>;

// The same bytes fed one at a time: every line and record straddles a chunk boundary.
Trace decode_bytewise(std::string_view bytes, TraceFormat format) {
  Trace trace;
  TraceDecoder decoder(format, trace);
  for (const char c : bytes) decoder.feed(std::string_view(&c, 1));
  decoder.finish();
  return trace;
}

std::string oracle_record(std::uint32_t time, std::uint64_t id, std::uint32_t size,
                          std::int64_t next) {
  std::string record;
  for (int i = 0; i < 4; ++i) record.push_back(static_cast<char>(time >> (8 * i)));
  for (int i = 0; i < 8; ++i) record.push_back(static_cast<char>(id >> (8 * i)));
  for (int i = 0; i < 4; ++i) record.push_back(static_cast<char>(size >> (8 * i)));
  for (int i = 0; i < 8; ++i)
    record.push_back(static_cast<char>(static_cast<std::uint64_t>(next) >> (8 * i)));
  return record;
}

TEST(TraceDecoder, TextSkipsCheckpointStarsAndEmptyLinesAndAcceptsCrlf) {
  const std::string input = "1\n*\n\n22\r\n*\r\n333\r\n4";  // the last line has no newline
  EXPECT_EQ(decode_trace(input, TraceFormat::kText).keys, (Keys{1, 22, 333, 4}));
  EXPECT_EQ(decode_bytewise(input, TraceFormat::kText).keys, (Keys{1, 22, 333, 4}));
}

TEST(TraceDecoder, TextHashesKeysThatAreNotNumbers) {
  const Keys keys = decode_trace("user:1\nuser:1\nuser:2\n", TraceFormat::kText).keys;
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[0], keys[1]);
  EXPECT_NE(keys[0], keys[2]);
}

TEST(TraceDecoder, TextRejectsABinaryFileReadAsOneHugeLine) {
  const std::string no_newline(100 * 1024, 'x');
  EXPECT_THROW(decode_trace(no_newline, TraceFormat::kText), std::runtime_error);
}

TEST(TraceDecoder, CsvTimestampAndKeyOnly) {
  const Trace trace = decode_trace("10,5\n11,6\n12,5\n", TraceFormat::kCsv);
  EXPECT_EQ(trace.keys, (Keys{5, 6, 5}));
  EXPECT_FALSE(trace.has_ttls());
}

TEST(TraceDecoder, CsvWithSizeKeepsNoTimes) {
  const Trace trace = decode_trace("10,5,512\n11,6,4096\n", TraceFormat::kCsv);
  EXPECT_EQ(trace.keys, (Keys{5, 6}));
  EXPECT_FALSE(trace.has_ttls());
  EXPECT_TRUE(trace.times_s.empty());
}

TEST(TraceDecoder, CsvWithTtlKeepsTimesAndTtls) {
  const std::string input = "100,5,512,30\r\n102,6,512,0\n105.9,5,512,\n";
  for (const Trace& trace :
       {decode_trace(input, TraceFormat::kCsv), decode_bytewise(input, TraceFormat::kCsv)}) {
    EXPECT_EQ(trace.keys, (Keys{5, 6, 5}));
    ASSERT_TRUE(trace.has_ttls());
    EXPECT_EQ(trace.times_s, (std::vector<std::uint32_t>{100, 102, 105}));
    EXPECT_EQ(trace.ttls_s, (std::vector<std::uint32_t>{30, 0, 0}));
  }
}

TEST(TraceDecoder, CsvHeaderNamesTheColumnsLikeLibCacheSimsCloudPhysicsSample) {
  const Trace trace = decode_trace(
      "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633898,28,6656,40409911\n",
      TraceFormat::kCsv);
  EXPECT_EQ(trace.keys, (Keys{42932745, 40409911}));
  EXPECT_FALSE(trace.has_ttls());
}

TEST(TraceDecoder, CsvHeaderWithTtlColumn) {
  const Trace trace = decode_trace("key,ttl,timestamp\nk1,60,7\n", TraceFormat::kCsv);
  ASSERT_EQ(trace.keys.size(), 1u);
  EXPECT_EQ(trace.times_s, (std::vector<std::uint32_t>{7}));
  EXPECT_EQ(trace.ttls_s, (std::vector<std::uint32_t>{60}));
}

TEST(TraceDecoder, CsvHeaderWithoutAKeyColumnIsAnError) {
  EXPECT_THROW(decode_trace("time,size\n1,2\n", TraceFormat::kCsv), std::runtime_error);
}

TEST(TraceDecoder, OracleGeneralReadsTheLittleEndianObjectId) {
  const std::string input = oracle_record(1, 42932745, 512, -1) +
                            oracle_record(2, 0x0123456789abcdefULL, 69632, 7) +
                            oracle_record(3, 42932745, 512, -1);
  const Keys expected{42932745, 0x0123456789abcdefULL, 42932745};
  EXPECT_EQ(decode_trace(input, TraceFormat::kOracleGeneral).keys, expected);
  EXPECT_EQ(decode_bytewise(input, TraceFormat::kOracleGeneral).keys, expected);
}

TEST(TraceDecoder, OracleGeneralRejectsATruncatedRecord) {
  const std::string input = oracle_record(1, 5, 512, -1).substr(0, 20);
  EXPECT_THROW(decode_trace(input, TraceFormat::kOracleGeneral), std::runtime_error);
}

TEST(TraceDecoder, ArcLisExpandsEachLineIntoARunOfBlocks) {
  const std::string input = "100 3 0 1\n7 1 0 2\n\n5 0 0 3\n";  // n = 0 adds nothing
  EXPECT_EQ(decode_trace(input, TraceFormat::kArcLis).keys, (Keys{100, 101, 102, 7}));
  EXPECT_EQ(decode_bytewise(input, TraceFormat::kArcLis).keys, (Keys{100, 101, 102, 7}));
  EXPECT_THROW(decode_trace("x 1 0 0\n", TraceFormat::kArcLis), std::runtime_error);
}

TEST(TraceDecoder, Int32BigEndianIsSignedAndBigEndian) {
  const std::string input("\x00\x00\x00\x01\x00\x00\x01\x00\xff\xff\xff\xff\x80\x00\x00\x00", 16);
  const Keys expected{1, 256, static_cast<std::uint64_t>(std::int64_t{-1}),
                      static_cast<std::uint64_t>(std::int64_t{-2147483648LL})};
  EXPECT_EQ(decode_trace(input, TraceFormat::kInt32BigEndian).keys, expected);
  EXPECT_EQ(decode_bytewise(input, TraceFormat::kInt32BigEndian).keys, expected);
  EXPECT_THROW(decode_trace(input.substr(0, 6), TraceFormat::kInt32BigEndian), std::runtime_error);
}

TEST(TraceFormat, ExtensionDecidesUnderACompressionSuffix) {
  EXPECT_EQ(format_from_path("a/OLTP.lis.zst"), TraceFormat::kArcLis);
  EXPECT_EQ(format_from_path("x.oracleGeneral.bin"), TraceFormat::kOracleGeneral);
  EXPECT_EQ(format_from_path("x.csv.gz"), TraceFormat::kCsv);
  EXPECT_EQ(format_from_path("x.txt.xz"), TraceFormat::kText);
  EXPECT_EQ(format_from_path("lirs/cpp.trace.gz"), std::nullopt);  // LIRS text or cache2k binary
}

TEST(TraceFormat, SniffingTellsLirsTextFromCache2kBinary) {
  EXPECT_EQ(sniff_format("0\r\n1\r\n*\n"), TraceFormat::kText);
  EXPECT_EQ(sniff_format("user:1\tx\n"), TraceFormat::kText);
  EXPECT_EQ(sniff_format(std::string_view("\x00\x00\x00\x01\x00\x00\x00\x02", 8)),
            TraceFormat::kInt32BigEndian);
}

TEST(TraceFormat, NamesRoundTrip) {
  for (const TraceFormat format :
       {TraceFormat::kText, TraceFormat::kCsv, TraceFormat::kOracleGeneral, TraceFormat::kArcLis,
        TraceFormat::kInt32BigEndian}) {
    EXPECT_EQ(parse_trace_format(trace_format_name(format)), format);
  }
  EXPECT_EQ(parse_trace_format("cache2k"), TraceFormat::kInt32BigEndian);
  EXPECT_EQ(parse_trace_format("parquet"), std::nullopt);
}

}  // namespace
}  // namespace chronocache::sim
