// Pins the adaptive TTL rule (adaptive_ttl.h) alone: growing by `increase` while unchanged,
// halving when changed, both clamped to [min_ttl, max_ttl]; where that settles for a key that
// changes at a steady pace; and what "changed" means with and without a fingerprint.
// LoadingCache's use of it is pinned in loading_cache_test.cc.
#include "chronocache/loading/adaptive_ttl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;

constexpr AdaptiveTtlOptions kBounds{.enabled = true, .min_ttl = 1s, .max_ttl = 8s, .increase = 2s};

TEST(AdaptiveTtl, UnchangedGrowsByTheIncreaseUpToMax) {
  EXPECT_EQ(next_adaptive_ttl(1s, false, kBounds), 3s);
  EXPECT_EQ(next_adaptive_ttl(3s, false, kBounds), 5s);
  EXPECT_EQ(next_adaptive_ttl(7s, false, kBounds), 8s);  // not 9 s
  EXPECT_EQ(next_adaptive_ttl(8s, false, kBounds), 8s);
}

TEST(AdaptiveTtl, ChangedHalvesDownToMin) {
  EXPECT_EQ(next_adaptive_ttl(8s, true, kBounds), 4s);
  EXPECT_EQ(next_adaptive_ttl(2s, true, kBounds), 1s);
  EXPECT_EQ(next_adaptive_ttl(1s, true, kBounds), 1s);
  EXPECT_EQ(next_adaptive_ttl(1500ms, true, kBounds), 1s);  // not 750 ms
}

TEST(AdaptiveTtl, ATtlOutsideTheBoundsIsBroughtInside) {
  EXPECT_EQ(next_adaptive_ttl(100s, true, kBounds), 8s);
  EXPECT_EQ(next_adaptive_ttl(10ms, false, kBounds), 2010ms);
  EXPECT_EQ(next_adaptive_ttl(10ms, true, kBounds), 1s);
}

// A key whose value changes every `interval` (at a random phase each time, as independent
// writers would), reloaded each time its TTL runs out: the mean TTL over many reloads.
Duration settled_ttl(Duration interval, const AdaptiveTtlOptions& options) {
  std::mt19937_64 rng(7);
  Duration ttl = options.min_ttl;
  double sum_ms = 0;
  constexpr int kWarmup = 2'000;
  constexpr int kReloads = 20'000;
  for (int i = 0; i < kWarmup + kReloads; ++i) {
    // The chance that a change fell within the last TTL (at most one per interval).
    const double p =
        std::min(1.0, static_cast<double>(ttl.count()) / static_cast<double>(interval.count()));
    const bool changed = std::uniform_real_distribution<double>(0, 1)(rng) < p;
    ttl = next_adaptive_ttl(ttl, changed, options);
    if (i >= kWarmup) sum_ms += static_cast<double>(ttl.count());
  }
  return Duration(static_cast<Duration::rep>(sum_ms / kReloads));
}

// The property the rule is chosen for (adaptive_ttl.h): TTL near sqrt(2 * increase * interval),
// so a key that changes 100 times less often gets a TTL about 10 times longer, not max_ttl.
TEST(AdaptiveTtl, SettlesNearTheSquareRootOfTwiceTheIncreaseTimesTheChangeInterval) {
  constexpr AdaptiveTtlOptions kWide{
      .enabled = true, .min_ttl = 10ms, .max_ttl = 1h, .increase = 250ms};
  for (const Duration interval : {60s, 600s, 6000s}) {
    const double expected = std::sqrt(2.0 * 250.0 * static_cast<double>(interval.count()));  // ms
    const auto settled = static_cast<double>(settled_ttl(interval, kWide).count());
    EXPECT_GT(settled, 0.8 * expected) << interval.count();
    EXPECT_LT(settled, 1.1 * expected) << interval.count();
  }
}

TEST(ChangeDetector, UsesEqualityByDefault) {
  const ChangeDetector<std::string> detector;
  EXPECT_FALSE(detector.changed("a", "a"));
  EXPECT_TRUE(detector.changed("a", "b"));
}

TEST(ChangeDetector, AFingerprintDecidesInsteadOfEquality) {
  struct Row {
    std::uint64_t version;
    std::string cached_at;  // differs on every load, yet is no change of the source
  };
  const ChangeDetector<Row> detector([](const Row& row) { return row.version; });
  EXPECT_FALSE(detector.changed(Row{3, "t1"}, Row{3, "t2"}));
  EXPECT_TRUE(detector.changed(Row{3, "t1"}, Row{4, "t1"}));
}

}  // namespace
}  // namespace chronocache
