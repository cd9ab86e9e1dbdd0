// replay<Policy> through the engine: cross-checked against an independent list-based LRU, against
// the README's reference LRU hit ratios (both reference simulators agree on LRU to 0.00 pp), and
// for TTL expiry with the ManualClock.
#include "sim/replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <list>
#include <string>
#include <unordered_map>

#include "chronocache/policy/lru.h"
#include "sim/experiment.h"
#include "sim/policy_registry.h"
#include "sim/trace_reader.h"

namespace chronocache::sim {
namespace {

Trace read_sample(std::string_view relative) {
  std::string path = CC_TRACES_DIR;
  path.append("/");
  path.append(relative);
  return read_trace(path).trace;
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

TEST(Replay, LruAgreesWithAListBasedLruOnTheFirstRequestsOfCpp) {
  Trace prefix = read_sample("lirs/cpp.trace.gz");
  ASSERT_EQ(prefix.requests(), 9'047u);
  prefix.keys.resize(4'000);
  for (const std::size_t size : {1, 20, 61, 200, 1000}) {
    SCOPED_TRACE(size);
    const ReplayResult ours = replay<Lru>(prefix, size);
    EXPECT_EQ(ours.requests, 4'000u);
    EXPECT_EQ(ours.hits, reference_lru_hits(prefix.keys, size));
  }
}

struct ReferenceLru {
  std::string_view file;
  std::size_t size;
  double hit_pct;  // README §3/§5, LRU column: libCacheSim and Caffeine print the same value
};

constexpr ReferenceLru kReferenceLru[] = {
    {"lirs/cpp.trace.gz", 61, 19.35},       {"lirs/cpp.trace.gz", 122, 75.72},
    {"lirs/cpp.trace.gz", 306, 83.60},      {"lirs/cpp.trace.gz", 612, 85.87},
    {"lirs/gli.trace.gz", 250, 0.91},       {"lirs/gli.trace.gz", 1000, 11.21},
    {"lirs/gli.trace.gz", 2000, 57.41},     {"lirs/ps.trace.gz", 771, 48.55},
    {"cache2k/web07.trace.xz", 205, 39.17}, {"cache2k/web07.trace.xz", 5121, 62.88},
};

TEST(Replay, LruReproducesTheReferenceSimulatorsHitRatiosExactly) {
  for (const ReferenceLru& reference : kReferenceLru) {
    SCOPED_TRACE(std::string(reference.file) + " @" + std::to_string(reference.size));
    const Trace trace = read_sample(reference.file);
    const ReplayResult ours = replay<Lru>(trace, reference.size);
    const double pct = 100.0 * static_cast<double>(ours.hits) / static_cast<double>(ours.requests);
    // The references print two decimals: equal after the same rounding.
    EXPECT_EQ(std::lround(pct * 100), std::lround(reference.hit_pct * 100)) << pct;
  }
}

TEST(Replay, EveryPolicyHitsOnEveryRepeatWhenTheCacheHoldsAllKeys) {
  const Trace trace = read_sample("lirs/ps.trace.gz");
  const std::size_t unique = count_unique_keys(trace);
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
  const Trace trace = read_sample("lirs/cs.trace.gz");
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
