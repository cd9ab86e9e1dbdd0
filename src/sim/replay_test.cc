// replay<Policy> through the engine: cross-checked against an independent list-based LRU, against
// LRU hit counts known by construction (loops and zigzags, whose stack distances are fixed), and
// for TTL expiry with the ManualClock. The traces are generated here, not read from files.
#include "sim/replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <string>
#include <unordered_map>

#include "chronocache/base/hash.h"
#include "chronocache/policy/lru.h"
#include "sim/experiment.h"
#include "sim/policy_registry.h"

namespace chronocache::sim {
namespace {

// `requests` keys among `distinct_keys`, skewed towards small keys (key = n * u^2 for u uniform
// in [0, 1), u drawn from a hash of the request's index): the same trace on every machine.
Trace skewed_trace(std::size_t requests, std::uint64_t distinct_keys) {
  Trace trace;
  for (std::uint64_t i = 0; i < requests; ++i) {
    const double u = static_cast<double>(hash_integer(i) >> 11) * 0x1.0p-53;
    trace.keys.push_back(static_cast<std::uint64_t>(static_cast<double>(distinct_keys) * u * u));
  }
  return trace;
}

// `rounds` passes over keys 0 .. n-1 in the same order.
Trace loop_trace(std::uint64_t n, std::size_t rounds) {
  Trace trace;
  for (std::size_t r = 0; r < rounds; ++r)
    for (std::uint64_t key = 0; key < n; ++key) trace.keys.push_back(key);
  return trace;
}

// `passes` sweeps over keys 0 .. n-1, alternately up and down (0..n-1, n-1..0, 0..n-1, ...).
Trace zigzag_trace(std::uint64_t n, std::size_t passes) {
  Trace trace;
  for (std::size_t p = 0; p < passes; ++p)
    for (std::uint64_t i = 0; i < n; ++i) trace.keys.push_back(p % 2 == 0 ? i : n - 1 - i);
  return trace;
}

// The textbook LRU: a list in recency order and a map into it. Shares no code with the engine.
std::uint64_t reference_lru_hits(const std::vector<std::uint64_t>& keys, std::size_t capacity) {
  std::list<std::uint64_t> order;  // front = most recent
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where;
  std::uint64_t hits = 0;
  for (const std::uint64_t key : keys) {
    const auto it = where.find(key);
    if (it != where.end()) {
      ++hits;
      order.splice(order.begin(), order, it->second);
      continue;
    }
    if (order.size() == capacity) {
      where.erase(order.back());
      order.pop_back();
    }
    order.push_front(key);
    where[key] = order.begin();
  }
  return hits;
}

TEST(Replay, LruAgreesWithAListBasedLruOnASkewedTrace) {
  const Trace trace = skewed_trace(20'000, 3'000);
  for (const std::size_t size : {1, 20, 61, 200, 1000, 3000}) {
    SCOPED_TRACE(size);
    const ReplayResult ours = replay<Lru>(trace, size);
    EXPECT_EQ(ours.requests, 20'000u);
    const std::uint64_t expected = reference_lru_hits(trace.keys, size);
    EXPECT_EQ(ours.hits, expected);
    if (size >= 20) {
      EXPECT_GT(expected, 0u);  // the skew gives every real size some hits
    }
  }
}

TEST(Replay, LruMissesEveryRequestOfALoopLargerThanTheCacheAndHitsEveryRepeatOfOneThatFits) {
  // LRU's textbook failure: with n keys in a loop and fewer than n slots, each key was evicted
  // n - size requests before it comes back. With n slots only the first round misses.
  const Trace trace = loop_trace(500, 8);
  EXPECT_EQ(replay<Lru>(trace, 1).hits, 0u);
  EXPECT_EQ(replay<Lru>(trace, 499).hits, 0u);
  EXPECT_EQ(replay<Lru>(trace, 500).hits, 7u * 500);
  EXPECT_EQ(replay<Lru>(trace, 5000).hits, 7u * 500);
}

TEST(Replay, LruHitsOnAZigzagAreTheCacheSizePerTurn) {
  // After the first sweep, the i-th key of a sweep was last requested i distinct keys ago (the
  // sweep before went the other way), so exactly min(size, n) keys of each later sweep hit.
  constexpr std::uint64_t kKeys = 1000;
  constexpr std::size_t kPasses = 10;
  const Trace trace = zigzag_trace(kKeys, kPasses);
  for (const std::size_t size : {1, 2, 61, 250, 999, 1000, 4000}) {
    SCOPED_TRACE(size);
    const ReplayResult ours = replay<Lru>(trace, size);
    EXPECT_EQ(ours.requests, kKeys * kPasses);
    EXPECT_EQ(ours.hits, (kPasses - 1) * std::min<std::uint64_t>(size, kKeys));
  }
}

TEST(Replay, EveryPolicyHitsOnEveryRepeatWhenTheCacheHoldsAllKeys) {
  const Trace trace = skewed_trace(20'000, 2'000);
  const std::size_t unique = count_unique_keys(trace);
  ASSERT_GT(unique, 1'000u);
  for (const PolicyEntry& policy : all_policies()) {
    SCOPED_TRACE(policy.name);
    const ReplayResult all = policy.replay(trace, unique, nullptr);
    EXPECT_EQ(all.hits, trace.requests() - unique);  // only compulsory misses
    const ReplayResult small = policy.replay(trace, unique / 20, nullptr);
    EXPECT_LT(small.hits, all.hits);
  }
}

TEST(Replay, ZeroSizedCacheNeverHits) {
  Trace trace;
  trace.keys = {1, 1, 1};
  std::atomic<std::uint64_t> progress{0};
  EXPECT_EQ(replay<Lru>(trace, 0, &progress).hits, 0u);
  EXPECT_EQ(progress.load(), 3u);
}

TEST(Replay, TtlsExpireEntriesByTheTracesTimestamps) {
  Trace trace;
  // key, time (s), ttl (s)
  trace.keys = {1, 1, 1, 2, 2, 3, 3};
  trace.times_s = {100, 105, 120, 120, 9000, 9001, 9001};
  trace.ttls_s = {10, 10, 10, 0, 0, 1, 1};
  // 1@100 miss (put, expires 110); 1@105 hit; 1@120 miss (expired at 110); 2@120 miss (no TTL);
  // 2@9000 hit; 3@9001 miss; 3@9001 hit (same second: the clock did not move).
  const ReplayResult result = replay<Lru>(trace, 10);
  EXPECT_EQ(result.requests, 7u);
  EXPECT_EQ(result.hits, 3u);
}

TEST(Experiment, ThreadedRunsEqualSequentialReplaysInPolicyMajorOrder) {
  const Trace trace = skewed_trace(7'000, 1'400);
  std::vector<const PolicyEntry*> policies;
  for (const PolicyEntry& entry : all_policies()) policies.push_back(&entry);
  const std::vector<std::size_t> sizes = {70, 352, 704};
  std::vector<std::uint64_t> ticks;
  const std::vector<RunResult> results =
      run_experiment(trace, policies, sizes, 2, [&](std::uint64_t done) { ticks.push_back(done); });
  ASSERT_EQ(results.size(), policies.size() * sizes.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const PolicyEntry& policy = *policies[i / sizes.size()];
    EXPECT_EQ(results[i].policy, policy.name);
    EXPECT_EQ(results[i].cache_size, sizes[i % sizes.size()]);
    EXPECT_EQ(results[i].replay.hits, policy.replay(trace, sizes[i % sizes.size()], nullptr).hits);
  }
  ASSERT_FALSE(ticks.empty());
  EXPECT_EQ(ticks.back(), trace.requests() * results.size());  // the last tick sees all the work
}

}  // namespace
}  // namespace chronocache::sim
