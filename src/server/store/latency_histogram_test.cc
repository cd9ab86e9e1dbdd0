// Pins LatencyHistogram (latency_histogram.h): HdrHistogram's buckets at two significant digits,
// its percentiles and the power-of-two view LATENCY HISTOGRAM prints, checked against figures a
// real redis-server 7 printed for the same recorded values.
#include "server/store/latency_histogram.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace chronocached {
namespace {

TEST(LatencyHistogram, EveryValueIsReportedWithinOnePercentAndExactlyBelow256) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(0.0, 9.0);
  for (int i = 0; i < 100'000; ++i) {
    const auto v = static_cast<std::int64_t>(std::pow(10.0, exponent(rng)));
    if (v < LatencyHistogram::kLowest || v > LatencyHistogram::kHighest) continue;
    const std::int64_t top = LatencyHistogram::highest_equivalent(v);
    ASSERT_GE(top, v);
    ASSERT_LE(static_cast<double>(top - v), 0.01 * static_cast<double>(v)) << v;
    if (v < 256) {
      ASSERT_EQ(top, v);
    }
  }
}

// Redis 7 after five SETs of 8-10 µs: p50=8.031, p99=10.047; a GET of 5 µs: 5.023; and
// LATENCY HISTOGRAM set: 8 -> 3, 16 -> 5.
TEST(LatencyHistogram, PercentilesAndPowersOfTwoAreRedissFigures) {
  auto h = std::make_unique<LatencyHistogram>();
  EXPECT_EQ(h->value_at_percentile(50), 0);  // nothing recorded
  for (std::int64_t ns : {8'000, 8'000, 8'000, 10'000, 10'000}) h->record(ns);
  EXPECT_EQ(h->total(), 5u);
  EXPECT_EQ(h->value_at_percentile(50), 8'031);
  EXPECT_EQ(h->value_at_percentile(99), 10'047);
  EXPECT_EQ(h->value_at_percentile(100), 10'047);
  EXPECT_EQ(h->value_at_percentile(0), 8'000);  // the bottom of the first value's bucket
  std::vector<std::pair<std::int64_t, std::uint64_t>> cdf;
  h->for_each_power_of_two_usec(
      [&](std::int64_t usec, std::uint64_t n) { cdf.emplace_back(usec, n); });
  EXPECT_EQ(cdf, (std::vector<std::pair<std::int64_t, std::uint64_t>>{{8, 3}, {16, 5}}));

  auto g = std::make_unique<LatencyHistogram>();
  g->record(5'000);
  EXPECT_EQ(g->value_at_percentile(99.9), 5'023);
}

TEST(LatencyHistogram, ValuesAboveOneSecondCountAsOneSecond) {
  auto h = std::make_unique<LatencyHistogram>();
  h->record(1);
  h->record(1);
  h->record(300);
  h->record(5'000'000'000);
  EXPECT_EQ(h->value_at_percentile(25), 1);
  EXPECT_EQ(h->value_at_percentile(50), 1);
  EXPECT_EQ(h->value_at_percentile(75), 301);  // 300's bucket is 2 wide
  EXPECT_EQ(h->value_at_percentile(100), LatencyHistogram::highest_equivalent(1'000'000'000));
  std::vector<std::pair<std::int64_t, std::uint64_t>> cdf;
  h->for_each_power_of_two_usec(
      [&](std::int64_t usec, std::uint64_t n) { cdf.emplace_back(usec, n); });
  ASSERT_EQ(cdf.size(), 2u);
  EXPECT_EQ(cdf[0], (std::pair<std::int64_t, std::uint64_t>{1, 3}));
  EXPECT_EQ(cdf[1].second, 4u);
  EXPECT_GE(cdf[1].first, 1'000'000);
}

TEST(LatencyHistogram, TheSumIsWithinHalfABucketAndCountsAtBoundsAreCumulative) {
  auto h = std::make_unique<LatencyHistogram>();
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::int64_t> ns(300, 2'000'000);
  double exact = 0;
  for (int i = 0; i < 10'000; ++i) {
    const std::int64_t v = ns(rng);
    h->record(v);
    exact += static_cast<double>(v);
  }
  EXPECT_EQ(h->total(), 10'000u);
  EXPECT_NEAR(static_cast<double>(h->sum_ns()), exact, exact * 0.004);
  const std::int64_t bounds[] = {1'000, 100'000, 1'000'000, 1'000'000'000};
  std::vector<std::uint64_t> counts;
  h->for_each_count_at_or_below(bounds,
                                [&](std::int64_t, std::uint64_t n) { counts.push_back(n); });
  ASSERT_EQ(counts.size(), 4u);
  EXPECT_NEAR(static_cast<double>(counts[1]), 10'000 * (100'000 - 300) / 1'999'700.0, 300);
  EXPECT_LE(counts[0], counts[1]);
  EXPECT_EQ(counts[3], 10'000u);
}

TEST(LatencyHistogram, BucketsTileTheRangeInOrder) {
  // Each value's bucket top is at or above it, and a value one past a top opens the next bucket.
  std::int64_t v = 1;
  int buckets = 0;
  while (v <= LatencyHistogram::kHighest) {
    const std::int64_t top = LatencyHistogram::highest_equivalent(v);
    ASSERT_GE(top, v);
    ASSERT_EQ(LatencyHistogram::highest_equivalent(top), top);
    v = top + 1;
    ++buckets;
  }
  // 1..255 one wide, 128 per doubling from 256 to 2^29, then 2^29 .. 1 s in units of 2^22.
  EXPECT_EQ(buckets, 255 + 21 * 128 + ((1'000'000'000 >> 22) - 128 + 1));
}

}  // namespace
}  // namespace chronocached
