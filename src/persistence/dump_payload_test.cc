// Pins the DUMP payload (dump_payload.h): its exact bytes, a round trip for any value, and that a
// payload damaged anywhere (cut at any length, any bit flipped), Redis's own payloads and a valid
// footer around an unknown type are refused, each with the status RESTORE turns into Redis's text.
#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <xxhash.h>

#include "persistence/dump_payload.h"
#include "persistence/snapshot_format.h"

namespace chronocache::persistence {
namespace {

using namespace std::string_view_literals;

TEST(DumpPayload, LayoutIsTypeValueVersionChecksum) {
  const std::string payload = encode_dump_payload("hello");
  ASSERT_EQ(payload.size(), 1 + 5 + 2 + 8);
  EXPECT_EQ(payload[0], '\0');  // kTypeString
  EXPECT_EQ(payload.substr(1, 5), "hello");
  EXPECT_EQ(payload.substr(6, 2), "\x01\xCC"sv);  // 0xCC01, little-endian
  EXPECT_EQ(get_u64(payload.data() + 8), XXH3_64bits(payload.data(), 8));
}

TEST(DumpPayload, RoundTripsAnyValue) {
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  for (const std::string& value : {std::string(), std::string("123"), std::string(1000, 'x'),
                                   binary, std::string("a\0b", 3)}) {
    const std::string payload = encode_dump_payload(value);
    const DecodedDump decoded = decode_dump_payload(payload);
    ASSERT_EQ(decoded.status, DumpStatus::kOk);
    EXPECT_EQ(decoded.value, value);
  }
}

TEST(DumpPayload, EveryTruncationIsRefused) {
  const std::string payload = encode_dump_payload("some value");
  for (std::size_t size = 0; size < payload.size(); ++size) {
    EXPECT_EQ(decode_dump_payload(std::string_view(payload).substr(0, size)).status,
              DumpStatus::kBadVersionOrChecksum)
        << "cut to " << size << " bytes";
  }
}

TEST(DumpPayload, EveryFlippedBitIsRefused) {
  const std::string payload = encode_dump_payload("some value");
  for (std::size_t byte = 0; byte < payload.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = payload;
      damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << bit));
      EXPECT_EQ(decode_dump_payload(damaged).status, DumpStatus::kBadVersionOrChecksum)
          << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(DumpPayload, ExtraBytesAreRefused) {
  const std::string payload = encode_dump_payload("v");
  EXPECT_EQ(decode_dump_payload(payload + "x").status, DumpStatus::kBadVersionOrChecksum);
  EXPECT_EQ(decode_dump_payload("x" + payload).status, DumpStatus::kBadVersionOrChecksum);
}

TEST(DumpPayload, RedisPayloadsAreRefusedByTheirVersion) {
  // redis-server 7.0.15's DUMP of "hello" and of the integer 123: RDB version 10.
  EXPECT_EQ(decode_dump_payload("\x00\x05hello\n\x00"
                                "cr\xdfve4 \n"sv)
                .status,
            DumpStatus::kBadVersionOrChecksum);
  EXPECT_EQ(decode_dump_payload("\x00\xc0{\n\x00H\xe2S\xe1\x00zg\xb9"sv).status,
            DumpStatus::kBadVersionOrChecksum);
  // Ten zero bytes: Redis takes them (version 0, and CRC64 of nothing is 0); we do not.
  EXPECT_EQ(decode_dump_payload(std::string(10, '\0')).status, DumpStatus::kBadVersionOrChecksum);
}

TEST(DumpPayload, IntactFooterAroundUnknownTypeIsBadData) {
  std::string payload = encode_dump_payload("v");
  payload[0] = 7;
  put_u64(payload.data() + payload.size() - 8, XXH3_64bits(payload.data(), payload.size() - 8));
  EXPECT_EQ(decode_dump_payload(payload).status, DumpStatus::kBadData);
}

// A footer that checks out with nothing before it: Redis's verifyDumpPayload passes it and the
// load then fails, "Bad data format", not a checksum error.
TEST(DumpPayload, IntactFooterAroundNothingIsBadData) {
  std::string payload(kDumpFooterBytes, '\0');
  payload[0] = static_cast<char>(kDumpFormatVersion & 0xFF);
  payload[1] = static_cast<char>(kDumpFormatVersion >> 8);
  put_u64(payload.data() + 2, XXH3_64bits(payload.data(), 2));
  EXPECT_EQ(decode_dump_payload(payload).status, DumpStatus::kBadData);
}

}  // namespace
}  // namespace chronocache::persistence
