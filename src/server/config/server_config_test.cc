// Pins how configs read their values where the compatibility suite cannot: the values past
// Redis's bounds that we store differently (saturated or capped), and the clamp hz applies.
// Every error text below is redis-server 7.0.15's CONFIG SET answer.
#include "server/config/server_config.h"

#include <limits>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace chronocached {
namespace {

constexpr unsigned long long kUint64Max = std::numeric_limits<unsigned long long>::max();

std::optional<std::string> set(ServerConfig& config, std::string_view name,
                               std::string_view value) {
  const ConfigParam* param = find_config_param(name);
  EXPECT_NE(param, nullptr) << name;
  return param->set(config, value);
}

TEST(ParseMemory, ReadsAsMemtoull) {
  EXPECT_EQ(parse_memory("1gb"), 1073741824ULL);
  EXPECT_EQ(parse_memory("1GB"), 1073741824ULL);
  EXPECT_EQ(parse_memory("2k"), 2000ULL);
  EXPECT_EQ(parse_memory("007"), 7ULL);  // leading zeros are digits to strtoull
  EXPECT_EQ(parse_memory(""), 0ULL);     // no digits read as 0, as in Redis
  EXPECT_EQ(parse_memory("kb"), 0ULL);
  for (std::string_view refused : {"-0", "-1", "+1", " 1", "1 ", "1.5gb", "1tb", "0x10"})
    EXPECT_EQ(parse_memory(refused), std::nullopt) << refused;
}

TEST(ParseMemory, SaturatesWhereRedisWouldWrapAndRefuses128Digits) {
  EXPECT_EQ(parse_memory("18446744073709551615"), kUint64Max);
  EXPECT_EQ(parse_memory("18446744073709551616"), kUint64Max);  // strtoull saturates
  EXPECT_EQ(parse_memory("17179869184gb"), kUint64Max);         // Redis's product wraps to 0
  EXPECT_EQ(parse_memory(std::string(127, '1')), kUint64Max);
  EXPECT_EQ(parse_memory(std::string(128, '1')), std::nullopt);  // memtoull's 128-byte buffer
}

TEST(MemoryConfigs, KeepRedisBounds) {
  ServerConfig config;
  const std::string floor = "argument must be between 1048576 and 9223372036854775807 inclusive";
  EXPECT_EQ(set(config, "proto-max-bulk-len", "0"), floor);
  EXPECT_EQ(set(config, "proto-max-bulk-len", "1000"), floor);
  EXPECT_EQ(set(config, "client-query-buffer-limit", "1000"), floor);
  EXPECT_EQ(set(config, "proto-max-bulk-len", "-0"), "argument must be a memory value");
  EXPECT_EQ(config.proto_max_bulk_len, 512LL << 20) << "a refused value changes nothing";
  EXPECT_EQ(set(config, "proto-max-bulk-len", "1mb"), std::nullopt);
  EXPECT_EQ(config.proto_max_bulk_len, 1LL << 20);
  EXPECT_EQ(set(config, "active-defrag-ignore-bytes", "0"),
            "argument must be between 1 and 9223372036854775807 inclusive");
  // maxmemory takes Redis's whole range; past int64 it is held at the int64 maximum.
  EXPECT_EQ(set(config, "maxmemory", "18446744073709551615"), std::nullopt);
  EXPECT_EQ(config.maxmemory, std::numeric_limits<long long>::max());
}

TEST(IntegerConfigs, ReadAsString2ll) {
  ServerConfig config;
  for (std::string_view refused : {"-0", "007", "+1", " 1", "1 "})
    EXPECT_EQ(set(config, "timeout", refused), "argument couldn't be parsed into an integer")
        << refused;
  EXPECT_EQ(set(config, "timeout", "5"), std::nullopt);
  EXPECT_EQ(config.timeout, 5);
}

TEST(IntegerConfigs, HzRunsAtTheNearestRateRedisRuns) {
  ServerConfig config;
  EXPECT_EQ(set(config, "hz", "0"), std::nullopt);
  EXPECT_EQ(config.hz, 1);
  EXPECT_EQ(set(config, "hz", "1000"), std::nullopt);
  EXPECT_EQ(config.hz, 500);
  const std::string range = "argument must be between 0 and 2147483647 inclusive";
  EXPECT_EQ(set(config, "hz", "-1"), range);
  EXPECT_EQ(set(config, "hz", "2147483648"), range);
  EXPECT_EQ(config.hz, 500);
}

}  // namespace
}  // namespace chronocached
