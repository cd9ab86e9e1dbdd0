// Pins the adaptive TTL rule (adaptive_ttl.h) alone: doubling while unchanged, halving when
// changed, both clamped to [min_ttl, max_ttl]; and what "changed" means with and without a
// fingerprint. LoadingCache's use of it is pinned in loading_cache_test.cc.
#include "chronocache/loading/adaptive_ttl.h"

#include <chrono>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;

constexpr AdaptiveTtlOptions kBounds{.enabled = true, .min_ttl = 1s, .max_ttl = 8s};

TEST(AdaptiveTtl, UnchangedDoublesUpToMax) {
  EXPECT_EQ(next_adaptive_ttl(1s, false, kBounds), 2s);
  EXPECT_EQ(next_adaptive_ttl(4s, false, kBounds), 8s);
  EXPECT_EQ(next_adaptive_ttl(8s, false, kBounds), 8s);
  EXPECT_EQ(next_adaptive_ttl(5s, false, kBounds), 8s);  // not 10 s
}

TEST(AdaptiveTtl, ChangedHalvesDownToMin) {
  EXPECT_EQ(next_adaptive_ttl(8s, true, kBounds), 4s);
  EXPECT_EQ(next_adaptive_ttl(2s, true, kBounds), 1s);
  EXPECT_EQ(next_adaptive_ttl(1s, true, kBounds), 1s);
  EXPECT_EQ(next_adaptive_ttl(1500ms, true, kBounds), 1s);  // not 750 ms
}

TEST(AdaptiveTtl, ATtlOutsideTheBoundsIsBroughtInside) {
  EXPECT_EQ(next_adaptive_ttl(100s, true, kBounds), 8s);
  EXPECT_EQ(next_adaptive_ttl(10ms, false, kBounds), 1s);
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
