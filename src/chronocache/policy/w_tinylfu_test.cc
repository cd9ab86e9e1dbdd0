// Pins WTinyLfu through Cache (policy/w_tinylfu.h): the admission contest (a key seen more often
// than the victim enters main, a new one does not), the window -> probation -> protected path, and
// the direction in which each adaptation (hill climber, shadow ghosts) moves the window on a
// recency-skewed and on a frequency-skewed stream.
#include "chronocache/policy/w_tinylfu.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/mini_lru.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;

using TinyLfuCache = Cache<int, int, WTinyLfu, ManualClock>;

WTinyLfu fixed_window() {
  WTinyLfu::Options options;
  options.adaptation = WTinyLfu::Adaptation::kFixed;
  return WTinyLfu(options);
}

int count_held(const TinyLfuCache& cache, int begin, int end) {
  int held = 0;
  for (int key = begin; key < end; ++key) held += cache.contains(key) ? 1 : 0;
  return held;
}

TEST(WTinyLfu, WhileFillingTheRegionsKeepTheirShares) {
  TinyLfuCache cache({.max_entries = 100});
  cache.policy() = fixed_window();
  for (int key = 0; key < 100; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.policy().window_size(), 1u);  // 1 % of 100
  EXPECT_EQ(cache.policy().probation_size(), 99u);
  EXPECT_EQ(cache.policy().protected_size(), 0u);
}

TEST(WTinyLfu, AHitInProbationPromotesTheEntryWhenTheVictimSearchReachesIt) {
  TinyLfuCache cache({.max_entries = 100});
  cache.policy() = fixed_window();
  for (int key = 0; key < 100; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.get(0), 0);  // probation's oldest, hit: a hit moves nothing ...
  EXPECT_EQ(cache.get(0), 0);
  EXPECT_EQ(cache.policy().protected_size(), 0u);
  // ... until 100 pushes 99 out of the window: the search promotes 0 and takes 1 as the victim;
  // 99 and 1 were both seen once, so the candidate 99 loses.
  cache.put(100, 100, 1h);
  EXPECT_EQ(cache.policy().protected_size(), 1u);
  EXPECT_TRUE(cache.contains(0));
  EXPECT_FALSE(cache.contains(99));
  EXPECT_TRUE(cache.contains(1));
  // 100 is hit in the window, so when 101 pushes it out it has been seen twice and beats 1.
  EXPECT_EQ(cache.get(100), 100);
  cache.put(101, 101, 1h);
  EXPECT_TRUE(cache.contains(100));
  EXPECT_FALSE(cache.contains(1));
  EXPECT_EQ(cache.policy().window_size(), 1u);
  EXPECT_EQ(cache.policy().probation_size(), 98u);
}

TEST(WTinyLfu, ProtectedOverflowsBackIntoProbation) {
  TinyLfuCache cache({.max_entries = 100});
  cache.policy() = fixed_window();
  for (int key = 0; key < 100; ++key) cache.put(key, key, 1h);
  cache.put(100, 100, 1h);  // the first eviction sets the capacity: protected <= 80 % of 99
  for (int key = 0; key < 100; ++key) (void)cache.get(key);
  cache.put(200, 200, 1h);  // the search promotes every hit entry; protected overflows
  EXPECT_EQ(cache.policy().protected_size(), 79u);
  EXPECT_EQ(cache.policy().window_size() + cache.policy().probation_size() +
                cache.policy().protected_size(),
            cache.size());
  EXPECT_EQ(cache.size(), 100u);
}

TEST(WTinyLfu, AFrequentKeyBeatsANewOneAtAdmission) {
  TinyLfuCache cache({.max_entries = 50});
  cache.policy() = fixed_window();
  for (int key = 0; key < 50; ++key) cache.put(key, key, 1h);
  for (int round = 0; round < 3; ++round) {
    for (int key = 0; key < 49; ++key) ASSERT_EQ(cache.get(key), key);
  }
  // Keys 0..48 were seen 4 times. New keys leave the window and lose the contest: the cache
  // keeps its frequent keys however many new ones pass.
  for (int key = 100; key < 130; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(count_held(cache, 0, 49), 49);
  EXPECT_EQ(count_held(cache, 100, 130), 1) << "only the newest, still in the window";
  EXPECT_TRUE(cache.contains(129));
  // A key asked for again and again (each time a miss and a put) gains frequency until it beats
  // the victim: then it stays, and one of the frequent keys leaves.
  bool admitted = false;
  for (int round = 0; round < 10 && !admitted; ++round) {
    if (!cache.contains(200)) cache.put(200, 200, 1h);
    cache.put(300 + round, 300 + round, 1h);  // pushes 200 out of the window
    admitted = cache.contains(200);
  }
  EXPECT_TRUE(admitted);
  EXPECT_EQ(count_held(cache, 0, 49), 48);
}

// Each key is asked for twice, the second time soon after the first, and never again: only
// recency helps (a larger window), frequency never does.
double window_share_after_recency_stream(WTinyLfu::Adaptation adaptation) {
  constexpr int kCapacity = 1000;
  TinyLfuCache cache({.max_entries = kCapacity});
  WTinyLfu::Options options;
  options.adaptation = adaptation;
  cache.policy() = WTinyLfu(options);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> gap(1, kCapacity / 2);
  std::vector<int> pending(kCapacity, -1);  // a ring of scheduled second requests
  int next_key = 0;
  for (int t = 0; t < 400'000; ++t) {
    int& due = pending[t % kCapacity];
    const int key = due >= 0 ? due : next_key++;
    if (due >= 0) {
      due = -1;
    } else {
      int& slot = pending[(t + gap(rng)) % kCapacity];
      if (slot < 0) slot = key;
    }
    if (!cache.get(key)) cache.put(key, key, 1h);
  }
  return cache.policy().window_share();
}

// A loop over more keys than fit: LRU (a large window) hits nothing, TinyLFU's admission keeps a
// stable part of the loop. Starts from a half-cache window; returns the final share and counts
// the hits.
double window_share_after_loop(WTinyLfu::Adaptation adaptation, std::uint64_t& hits) {
  constexpr int kCapacity = 1000;
  TinyLfuCache cache({.max_entries = kCapacity});
  WTinyLfu::Options options;
  options.adaptation = adaptation;
  options.initial_window = 0.5;
  cache.policy() = WTinyLfu(options);
  hits = 0;
  for (int t = 0; t < 400'000; ++t) {
    const int key = t % (kCapacity * 3 / 2);
    if (cache.get(key)) {
      ++hits;
    } else {
      cache.put(key, key, 1h);
    }
  }
  return cache.policy().window_share();
}

TEST(WTinyLfu, HillClimberGrowsTheWindowOnARecencySkewedStream) {
  EXPECT_GT(window_share_after_recency_stream(WTinyLfu::Adaptation::kHillClimber), 0.2);
}

TEST(WTinyLfu, HillClimberShrinksTheWindowOnAFrequencySkewedStream) {
  std::uint64_t hits = 0;
  EXPECT_LT(window_share_after_loop(WTinyLfu::Adaptation::kHillClimber, hits), 0.1);
  EXPECT_GT(hits, 400'000u / 3) << "most of the cache holds a fixed part of the loop";
}

TEST(WTinyLfu, ShadowGhostsGrowTheWindowOnARecencySkewedStream) {
  EXPECT_GT(window_share_after_recency_stream(WTinyLfu::Adaptation::kShadowGhosts), 0.2);
}

TEST(WTinyLfu, ShadowGhostsShrinkTheWindowOnAFrequencySkewedStream) {
  std::uint64_t hits = 0;
  EXPECT_LT(window_share_after_loop(WTinyLfu::Adaptation::kShadowGhosts, hits), 0.1);
  EXPECT_GT(hits, 400'000u / 3) << "most of the cache holds a fixed part of the loop";
}

TEST(WTinyLfu, AFixedWindowStaysPut) {
  std::uint64_t hits = 0;
  EXPECT_DOUBLE_EQ(window_share_after_loop(WTinyLfu::Adaptation::kFixed, hits), 0.5);
  EXPECT_DOUBLE_EQ(window_share_after_recency_stream(WTinyLfu::Adaptation::kFixed), 0.01);
}

// Each key is asked for twice, the second time within half the capacity's worth of requests:
// LRU hits every second request, while a small window plus the filter (which has seen the key
// once) loses most of them. Returns the hits over the last half of the stream.
std::uint64_t recency_stream_hits(bool lru_duel, bool& recency_mode) {
  constexpr int kCapacity = 1000;
  TinyLfuCache cache({.max_entries = kCapacity});
  WTinyLfu::Options options;
  options.lru_duel = lru_duel;
  options.adaptation = WTinyLfu::Adaptation::kHillClimber;  // slow to grow on its own
  cache.policy() = WTinyLfu(options);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> gap(1, kCapacity / 2);
  std::vector<int> pending(kCapacity, -1);
  int next_key = 0;
  std::uint64_t hits = 0;
  for (int t = 0; t < 100'000; ++t) {
    int& due = pending[t % kCapacity];
    const int key = due >= 0 ? due : next_key++;
    if (due >= 0) {
      due = -1;
    } else {
      int& slot = pending[(t + gap(rng)) % kCapacity];
      if (slot < 0) slot = key;
    }
    if (cache.get(key)) {
      hits += t >= 50'000 ? 1 : 0;
    } else {
      cache.put(key, key, 1h);
    }
  }
  recency_mode = cache.policy().recency_mode();
  return hits;
}

TEST(WTinyLfu, TheLruDuelTurnsARecencyStreamIntoLruHits) {
  bool recency_mode = false;
  const std::uint64_t without = recency_stream_hits(false, recency_mode);
  EXPECT_FALSE(recency_mode);
  const std::uint64_t with = recency_stream_hits(true, recency_mode);
  EXPECT_TRUE(recency_mode);
  EXPECT_GT(with, without + 50'000u / 20) << "without the duel: " << without;
}

TEST(WTinyLfu, TheLruDuelLeavesALoopToTheFilter) {
  std::uint64_t hits = 0;
  window_share_after_loop(WTinyLfu::Adaptation::kShadowGhosts, hits);
  TinyLfuCache cache({.max_entries = 1000});
  for (int t = 0; t < 100'000; ++t) {
    const int key = t % 1500;  // LRU hits nothing here
    if (!cache.get(key)) cache.put(key, key, 1h);
  }
  EXPECT_FALSE(cache.policy().recency_mode());
  EXPECT_GT(hits, 400'000u / 3);
}

TEST(MiniLru, IsAnExactLru) {
  detail::MiniLru lru;
  lru.set_capacity(3);
  EXPECT_FALSE(lru.access(1));
  EXPECT_FALSE(lru.access(2));
  EXPECT_FALSE(lru.access(3));
  EXPECT_TRUE(lru.access(1));   // order now 2, 3, 1 (least recent first)
  EXPECT_FALSE(lru.access(4));  // evicts 2
  EXPECT_FALSE(lru.access(2));  // evicts 3
  EXPECT_TRUE(lru.access(1));
  EXPECT_TRUE(lru.access(4));
  EXPECT_FALSE(lru.access(3));
  EXPECT_EQ(lru.size(), 3u);
  // Many colliding and non-colliding keys: a cyclic pass over capacity + 1 keys never hits, over
  // capacity keys always hits after the first round.
  lru.set_capacity(100);
  int hits = 0;
  for (int round = 0; round < 5; ++round) {
    for (std::uint32_t key = 0; key < 101; ++key) hits += lru.access(key * 7919u) ? 1 : 0;
  }
  EXPECT_EQ(hits, 0);
  lru.clear();
  for (int round = 0; round < 5; ++round) {
    for (std::uint32_t key = 0; key < 100; ++key) hits += lru.access(key * 7919u) ? 1 : 0;
  }
  EXPECT_EQ(hits, 4 * 100);
}

TEST(WTinyLfu, ClearRestartsFromTheInitialWindow) {
  TinyLfuCache cache({.max_entries = 20});
  for (int key = 0; key < 100; ++key) cache.put(key, key, 1h);
  cache.clear();
  EXPECT_EQ(cache.policy().size(), 0u);
  EXPECT_DOUBLE_EQ(cache.policy().window_share(), 0.01);
  for (int key = 0; key < 20; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.size(), 20u);
}

}  // namespace
}  // namespace chronocache
