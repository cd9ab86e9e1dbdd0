// The byte budget (CacheOptions::max_bytes) and the accounting it reads (memory_used): exact
// bookkeeping of what keys and values own, eviction before the budget is passed, refusal under
// TtlOnly, and the host hooks evict_one, note_heap_resize and reset_policy. On a ManualClock.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/memory/heap_bytes.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/ttl_only.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using LruStrings = Cache<std::string, std::string, Lru, ManualClock>;
using TtlStrings = Cache<std::string, std::string, TtlOnly, ManualClock>;

// memory_used() recomputed from scratch: what the running counter must always equal.
template <class C>
std::size_t recount(const C& cache) {
  std::size_t heap = 0;
  cache.for_each_live(cache.clock().now(),
                      [&](const std::string& k, const std::string& v, TimePoint) {
                        heap += HeapBytes<std::string>::of(k) + HeapBytes<std::string>::of(v);
                      });
  return cache.memory_bytes() + heap;
}

TEST(HeapBytes, InlineStringsOwnNothingLongOnesTheirBuffer) {
  EXPECT_EQ(HeapBytes<std::string>::of(std::string("short")), 0u);
  const std::string long_one(100, 'x');
  EXPECT_GE(HeapBytes<std::string>::of(long_one), 101u);
  EXPECT_LE(HeapBytes<std::string>::of(long_one), 101u + 32u);
  EXPECT_EQ(HeapBytes<int>::of(42), 0u);
}

TEST(CacheByteBudget, MemoryUsedCountsTableAndHeapExactlyThroughEveryChange) {
  LruStrings cache;
  EXPECT_EQ(cache.memory_used(), cache.memory_bytes());
  cache.put("a", std::string(200, 'v'));
  cache.put(std::string(40, 'k'), "small", 5s);
  EXPECT_EQ(cache.memory_used(), recount(cache));
  cache.put("a", std::string(1000, 'w'));  // overwrite with a bigger value
  EXPECT_EQ(cache.memory_used(), recount(cache));
  cache.put("a", "tiny");
  EXPECT_EQ(cache.memory_used(), recount(cache));
  EXPECT_TRUE(cache.erase("a"));
  EXPECT_EQ(cache.memory_used(), recount(cache));
  cache.clock().advance(5s);
  cache.reclaim_expired(1'000'000);
  EXPECT_EQ(cache.stored_size(), 0u);
  EXPECT_EQ(cache.memory_used(), cache.memory_bytes());
  cache.put("b", std::string(300, 'x'));
  cache.clear();
  EXPECT_EQ(cache.memory_used(), cache.memory_bytes());
}

TEST(CacheByteBudget, RandomLoadOfMixedSizesNeverPassesTheBudget) {
  constexpr std::size_t kBudget = 256 * 1024;
  LruStrings cache({.max_bytes = kBudget});
  std::mt19937_64 rng(7);
  std::size_t puts = 0;
  for (int i = 0; i < 20'000; ++i) {
    const std::string key = "key:" + std::to_string(rng() % 5'000);
    const std::size_t size = 1 + rng() % 2'000;  // 1 B .. 2 KB values
    if (rng() % 4 == 0) {
      cache.get(key);
    } else {
      EXPECT_NE(cache.put(key, std::string(size, 'v'), 60s), PutOutcome::kRejectedFull);
      ++puts;
      EXPECT_LE(cache.memory_used(), kBudget) << "after put " << puts;
      // The put always lands, however full the cache was.
      EXPECT_TRUE(cache.contains(key));
    }
  }
  EXPECT_GT(cache.stats().evicted, 1'000u);
  EXPECT_EQ(cache.memory_used(), recount(cache));
  EXPECT_GT(cache.memory_used(), kBudget / 2) << "the budget is used, not left idle";
}

TEST(CacheByteBudget, EvictsInPolicyOrderAndNeverTheEntryJustWritten) {
  LruStrings probe;
  probe.put("k0", std::string(500, 'v'));
  const std::size_t one_entry = probe.memory_used();
  // Room for about three such entries.
  LruStrings cache({.max_bytes = one_entry + 2 * (one_entry - probe.memory_bytes()) + 64});
  cache.put("k0", std::string(500, 'v'));
  cache.put("k1", std::string(500, 'v'));
  cache.put("k2", std::string(500, 'v'));
  ASSERT_EQ(cache.stored_size(), 3u);
  cache.get("k0");  // k1 is now least recent
  cache.put("k3", std::string(500, 'v'));
  EXPECT_FALSE(cache.contains("k1"));
  EXPECT_TRUE(cache.contains("k0"));
  EXPECT_TRUE(cache.contains("k3"));
  // An overwrite that grows a value evicts others (least recent first), never itself.
  cache.put("k2", std::string(1200, 'v'));
  EXPECT_TRUE(cache.contains("k2"));
  EXPECT_FALSE(cache.contains("k0"));
  EXPECT_LE(cache.memory_used(), cache.options().max_bytes);
}

TEST(CacheByteBudget, TtlOnlyRefusesNewKeysOnceFullAndKeepsWhatItHas) {
  TtlStrings cache({.max_bytes = 64 * 1024});
  std::size_t stored = 0;
  PutOutcome last = PutOutcome::kInserted;
  for (int i = 0; i < 1'000 && last != PutOutcome::kRejectedFull; ++i) {
    last = cache.put("key:" + std::to_string(i), std::string(1'000, 'v'));
    if (last == PutOutcome::kInserted) ++stored;
  }
  EXPECT_EQ(last, PutOutcome::kRejectedFull);
  EXPECT_EQ(cache.stored_size(), stored);
  EXPECT_LE(cache.memory_used(), 64u * 1024);
  EXPECT_EQ(cache.stats().evicted, 0u);
  EXPECT_TRUE(cache.contains("key:0"));
  // Deleting makes room again (a few keys: one freed slot may sit in another segment than the
  // new key's, whose growth would still not fit).
  for (std::size_t i = 0; i < stored / 2; ++i) cache.erase("key:" + std::to_string(i));
  EXPECT_EQ(cache.put("again", std::string(1'000, 'v')), PutOutcome::kInserted);
  EXPECT_LE(cache.memory_used(), 64u * 1024);
}

// A put the budget refuses builds no key: an rvalue key it was given is left as it was, for the
// caller to use again (try_emplace's rule).
TEST(CacheByteBudget, ARefusedPutLeavesItsRvalueKeyUntouched) {
  TtlStrings cache({.max_bytes = 64 * 1024});
  for (int i = 0; i < 1'000; ++i)
    if (cache.put("key:" + std::to_string(i), std::string(1'000, 'v')) == PutOutcome::kRejectedFull)
      break;
  const std::string original = "a key longer than a short string's inline buffer";
  std::string key = original;
  EXPECT_EQ(cache.put(std::move(key), std::string(1'000, 'v')), PutOutcome::kRejectedFull);
  EXPECT_EQ(key, original);  // NOLINT(bugprone-use-after-move): not moved from, as promised
  EXPECT_FALSE(cache.contains(original));
}

TEST(CacheByteBudget, EvictOneNamesTheVictimToTheHost) {
  LruStrings cache;
  cache.put("old", "1");
  cache.put("new", "2");
  std::vector<std::string> evicted;
  const auto record = [&](const std::string& key, const std::string&) { evicted.push_back(key); };
  EXPECT_TRUE(cache.evict_one(cache.clock().now(), record));
  EXPECT_EQ(evicted, std::vector<std::string>{"old"});
  EXPECT_EQ(cache.stats().evicted, 1u);
  EXPECT_TRUE(cache.evict_one(cache.clock().now(), record));
  EXPECT_FALSE(cache.evict_one(cache.clock().now(), record));
  EXPECT_EQ(cache.stored_size(), 0u);

  TtlStrings unordered;
  unordered.put("k", "v");
  EXPECT_FALSE(unordered.evict_one(unordered.clock().now(), record));
  EXPECT_TRUE(unordered.contains("k"));
}

TEST(CacheByteBudget, AnInPlaceChangeReportedByTheHostKeepsTheCountExact) {
  LruStrings cache;
  cache.put("k", "v");
  const TimePoint now = cache.clock().now();
  std::string* value = cache.find_prehashed("k", Hashed{cache.hash_of("k")}, now);
  ASSERT_NE(value, nullptr);
  const std::size_t before = HeapBytes<std::string>::of(*value);
  value->append(std::string(500, 'x'));
  cache.note_heap_resize(before, HeapBytes<std::string>::of(*value));
  EXPECT_EQ(cache.memory_used(), recount(cache));
  EXPECT_TRUE(cache.erase("k"));
  EXPECT_EQ(cache.memory_used(), cache.memory_bytes());
}

TEST(CacheByteBudget, ResetPolicyRegistersEveryEntryAgain) {
  Cache<int, int, Lru, ManualClock> cache;
  for (int i = 0; i < 5'000; ++i) cache.put(i, i);
  cache.reset_policy();
  std::size_t evicted = 0;
  while (cache.evict_one(cache.clock().now(), [](int, int) {})) ++evicted;
  EXPECT_EQ(evicted, 5'000u) << "every entry is known to the rebuilt policy exactly once";
}

}  // namespace
}  // namespace chronocache
