// The API a host such as chronocached uses beside put/get: in-place access (find_prehashed),
// moving a deadline (set_deadline_prehashed), walking live entries (for_each_live), the
// stateless scan cursor and sampling. On a ManualClock, like cache_test.cc.
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "chronocache/base/hash.h"
#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/lfu.h"
#include "chronocache/policy/ttl_only.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using IntCache = Cache<int, int, TtlOnly, ManualClock>;
using StringCache = Cache<std::string, std::string, TtlOnly, ManualClock>;

TEST(CacheHostApi, FindGivesTheLiveValueInPlaceAndCountsAHit) {
  StringCache cache;
  cache.put("k", "v", 10s);
  const TimePoint now = cache.clock().now();
  std::string* value = cache.find_prehashed("k", Hashed{cache.hash_of("k")}, now);
  ASSERT_NE(value, nullptr);
  value->append("w");
  EXPECT_EQ(cache.get("k"), "vw");
  EXPECT_EQ(cache.stats().hits, 2u);
  EXPECT_EQ(cache.find_prehashed("x", Hashed{cache.hash_of("x")}, now), nullptr);
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST(CacheHostApi, FindRemovesAnExpiredEntryItMeets) {
  IntCache cache;
  cache.put(1, 10, 5ms);
  cache.clock().advance(5ms);
  EXPECT_EQ(cache.find_prehashed(1, Hashed{cache.hash_of(1)}, cache.clock().now()), nullptr);
  EXPECT_EQ(cache.stats().expired, 1u);
  // Removed, not just hidden: a caller whose clock lags sees nothing either.
  EXPECT_FALSE(cache.contains_prehashed(1, Hashed{cache.hash_of(1)}, cache.clock().now() - 5ms));
}

TEST(CacheHostApi, FindKeyPeekCountsNoHitOrMissButStillRemovesAnExpiredEntry) {
  IntCache cache;
  cache.put(1, 10, 5ms);
  cache.put(2, 20);
  const auto peek = [&](int key) {
    return cache.find_key_prehashed(key, Hashed{cache.hash_of(key)}, cache.clock().now(),
                                    Access::kPeek);
  };
  const int* found = peek(2);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, 2);
  EXPECT_EQ(peek(3), nullptr);
  cache.clock().advance(5ms);
  EXPECT_EQ(peek(1), nullptr);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().misses, 0u);
  EXPECT_EQ(cache.stats().expired, 1u);
  EXPECT_EQ(cache.stored_size(), 1u);
  EXPECT_EQ(cache.find_key_prehashed(2, Hashed{cache.hash_of(2)}, cache.clock().now()),
            found);  // kRead: a hit
  EXPECT_EQ(cache.stats().hits, 1u);
}

TEST(CacheHostApi, InspectCountsAHitOrAMissAndLeavesTheEvictionOrderAlone) {
  Cache<int, int, Lfu, ManualClock> cache({.max_entries = 2});
  cache.put(1, 10);
  cache.put(2, 20);
  ASSERT_EQ(cache.get(2), 20);  // 2 has two accesses, 1 one: 1 is the victim
  const auto inspect = [&](int key) {
    return cache.inspect_prehashed(key, Hashed{cache.hash_of(key)}, cache.clock().now());
  };
  for (int i = 0; i < 5; ++i) {
    const auto found = inspect(1);
    ASSERT_NE(found.key, nullptr);
    EXPECT_EQ(*found.key, 1);
    EXPECT_EQ(cache.policy().count_of(*found.meta), 1u) << "looking is no access";
  }
  EXPECT_EQ(cache.policy().count_of(*inspect(2).meta), 2u);
  EXPECT_EQ(inspect(3).key, nullptr);
  EXPECT_EQ(inspect(3).meta, nullptr);
  EXPECT_EQ(cache.stats().hits, 1u + 6u);
  EXPECT_EQ(cache.stats().misses, 2u);
  cache.put(3, 30);  // evicts the least frequent: still 1, however often it was inspected
  EXPECT_FALSE(cache.contains(1));
  EXPECT_TRUE(cache.contains(2));
}

TEST(CacheHostApi, AWriteLookupIsAnAccessForThePolicyButNoHitOrMiss) {
  Cache<int, int, Lfu, ManualClock> cache({.max_entries = 2});
  cache.put(1, 10);
  cache.put(2, 20);
  ASSERT_EQ(cache.get(2), 20);  // 2 has two accesses, 1 one
  const auto write_lookup = [&](int key) {
    return cache.find_key_prehashed(key, Hashed{cache.hash_of(key)}, cache.clock().now(),
                                    Access::kWrite);
  };
  for (int i = 0; i < 3; ++i) ASSERT_NE(write_lookup(1), nullptr);  // as INCR would: 1 has four
  EXPECT_EQ(write_lookup(3), nullptr);
  EXPECT_EQ(cache.stats().hits, 1u) << "only the get";
  EXPECT_EQ(cache.stats().misses, 0u);
  cache.put(3, 30);  // evicts the least frequent: now 2
  EXPECT_TRUE(cache.contains(1));
  EXPECT_FALSE(cache.contains(2));
}

TEST(CacheHostApi, SetDeadlineMovesPersistsOrDeletes) {
  IntCache cache;
  cache.put(1, 10, 5s);
  const auto now = [&] { return cache.clock().now(); };
  const Hashed h{cache.hash_of(1)};
  ASSERT_TRUE(cache.set_deadline_prehashed(1, h, now() + 1h, now()));
  EXPECT_EQ(cache.deadline(1), now() + 1h);
  ASSERT_TRUE(cache.set_deadline_prehashed(1, h, kNoExpiry, now()));  // PERSIST
  EXPECT_EQ(cache.deadline(1), kNoExpiry);
  cache.clock().advance(std::chrono::hours(24 * 365));
  EXPECT_EQ(cache.get(1), 10);
  ASSERT_TRUE(cache.set_deadline_prehashed(1, h, now(), now()));  // a deadline now deletes
  EXPECT_FALSE(cache.contains(1));
  EXPECT_FALSE(cache.set_deadline_prehashed(1, h, now() + 1s, now()));
}

TEST(CacheHostApi, SetDeadlineBeyondTheWindowIsKeptExactly) {
  IntCache cache;
  cache.put(1, 10);
  const TimePoint far = cache.clock().now() + std::chrono::hours(24 * 400);
  ASSERT_TRUE(cache.set_deadline_prehashed(1, Hashed{cache.hash_of(1)}, far, cache.clock().now()));
  EXPECT_EQ(cache.deadline(1), far);
  ASSERT_TRUE(cache.set_deadline_prehashed(1, Hashed{cache.hash_of(1)}, cache.clock().now() + 1s,
                                           cache.clock().now()));
  EXPECT_EQ(cache.deadline(1), cache.clock().now() + 1s);
}

TEST(CacheHostApi, StoredSizeCountsExpiredEntriesUntilReclaimed) {
  IntCache cache;
  cache.put(1, 10, 5ms);
  cache.put(2, 20);
  cache.clock().advance(5ms);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.stored_size(), 2u);
  while (cache.reclaim_expired(64) == 0 && cache.stored_size() == 2) {
  }
  EXPECT_EQ(cache.stored_size(), 1u);
}

TEST(CacheHostApi, ForEachLiveSkipsExpiredEntriesAndReportsDeadlines) {
  IntCache cache;
  cache.put(1, 10, 5ms);
  cache.put(2, 20, 1h);
  cache.put(3, 30);
  cache.clock().advance(5ms);
  std::set<int> seen;
  cache.for_each_live(cache.clock().now(), [&](int key, int value, TimePoint deadline) {
    seen.insert(key);
    EXPECT_EQ(value, key * 10);
    EXPECT_EQ(deadline, key == 3 ? kNoExpiry : cache.clock().now() - 5ms + 1h);
  });
  EXPECT_EQ(seen, (std::set<int>{2, 3}));
}

// Walks the whole scan from cursor 0, calling between(step) after each call.
template <class Between>
std::multiset<int> scan_all(IntCache& cache, std::size_t slots, Between between) {
  std::multiset<int> seen;
  std::uint64_t cursor = 0;
  int step = 0;
  do {
    cursor =
        cache.scan(cursor, slots, cache.clock().now(), [&](int key, int) { seen.insert(key); });
    between(step++);
  } while (cursor != 0);
  return seen;
}

TEST(CacheHostApi, ScanVisitsEveryEntryExactlyOnceWhenNothingChanges) {
  IntCache cache;
  for (int i = 0; i < 20000; ++i) cache.put(i, i);
  const auto seen = scan_all(cache, 37, [](int) {});
  ASSERT_EQ(seen.size(), 20000u);
  EXPECT_EQ(std::set<int>(seen.begin(), seen.end()).size(), 20000u);
}

TEST(CacheHostApi, ScanReportsEveryEntryPresentThroughoutWhileTheTableGrows) {
  IntCache cache;
  for (int i = 0; i < 5000; ++i) cache.put(i, i);
  const std::size_t bytes_before = cache.memory_bytes();
  int next = 1000000;
  const auto seen = scan_all(cache, 128, [&](int) {
    for (int j = 0; j < 40; ++j) cache.put(next++, 0);  // splits and doublings mid-walk
  });
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(seen.count(i) >= 1) << "key " << i << " missed";
  EXPECT_GT(cache.memory_bytes(), bytes_before * 3 / 2);  // the table really grew during the walk
}

// A hash whose top 10 bits are the key's group (key % 1000), the rest mixed: as the server's
// cluster mode puts a key's hash slot there.
struct GroupInTopBitsHash {
  static constexpr unsigned kBits = 10;
  std::uint64_t operator()(int key) const noexcept {
    const auto group = static_cast<std::uint64_t>(key % 1000);
    return (group << (64 - kBits)) | (hash_integer(static_cast<std::uint64_t>(key)) >> kBits);
  }
};

TEST(CacheHostApi, APrefixWalkVisitsExactlyTheLiveEntriesWhoseHashHasThePrefix) {
  Cache<int, int, TtlOnly, ManualClock, GroupInTopBitsHash> cache;
  // Small (segments own many groups: filtered) and large (groups own segments) tables.
  for (const int keys : {500, 200000}) {
    cache.clear();
    for (int i = 0; i < keys; ++i) cache.put(i, -i, i % 7 == 0 ? 1s : 1h);
    cache.clock().advance(2s);  // every seventh key has expired
    for (const int group : {0, 7, 999}) {
      std::set<int> seen;
      cache.for_each_live_with_hash_prefix(static_cast<std::uint64_t>(group),
                                           GroupInTopBitsHash::kBits, cache.clock().now(),
                                           [&](int key, int value) {
                                             EXPECT_EQ(value, -key);
                                             EXPECT_TRUE(seen.insert(key).second);
                                             return true;
                                           });
      std::set<int> expected;
      for (int i = group; i < keys; i += 1000)
        if (i % 7 != 0) expected.insert(i);
      EXPECT_EQ(seen, expected) << keys << " keys, group " << group;
    }
    int visits = 0;  // fn's false stops the walk
    cache.for_each_live_with_hash_prefix(1, GroupInTopBitsHash::kBits, cache.clock().now(),
                                         [&](int, int) { return ++visits < 3; });
    EXPECT_EQ(visits, keys > 1000 ? 3 : 1);
  }
}

// Keys that all share the table's 20 leading hash bits (as one hash slot's keys can in the
// server's cluster mode, where the slot is 14 of them) fill one segment; before it could grow no
// more, has_room_for_prehashed says so, and the host refuses the insert instead of the process
// stopping.
struct OnePrefixHash {
  std::uint64_t operator()(int key) const noexcept {
    return (std::uint64_t{0xABCDE} << 44) | (hash_integer(static_cast<std::uint64_t>(key)) >> 20);
  }
};

TEST(CacheHostApi, KeysOfOneHashPrefixFillTheirSegmentAndTheHostIsToldBeforeItOverflows) {
  Cache<int, int, TtlOnly, ManualClock, OnePrefixHash> cache;
  EXPECT_FALSE(cache.hash_prefix_skewed());
  int key = 0;
  while (cache.has_room_for_prehashed(Hashed{cache.hash_of(key)})) {
    ASSERT_EQ(cache.put(key, key), PutOutcome::kInserted);
    ++key;
  }
  EXPECT_TRUE(cache.hash_prefix_skewed());
  EXPECT_GE(key, 50000);  // about what a SlotId can name, less the 1/16 a probe needs empty
  EXPECT_EQ(cache.size(), static_cast<std::size_t>(key));
  EXPECT_EQ(cache.get(key - 1), key - 1);
  // A key already there needs no room: it is rewritten in place.
  EXPECT_EQ(cache.put(0, -1), PutOutcome::kReplaced);
  EXPECT_EQ(cache.get(0), -1);
}

// A host that moves its keys' storage (the server's records in a RecordArena) walks with
// rewrite_keys: every stored entry, expired ones too, is handed over mutable with its deadline;
// keys it replaces with equal ones are still found, with their values.
TEST(CacheHostApi, RewriteKeysHandsEveryStoredKeyOverAndKeepsReplacedOnesFindable) {
  StringCache cache;
  for (int i = 0; i < 3000; ++i) cache.put("key:" + std::to_string(i), std::to_string(i), 10s);
  cache.put("expiring", "x", 1s);
  cache.put("persistent", "p");
  const TimePoint start = cache.clock().now();
  cache.clock().advance(2s);  // stored, no longer live: a rewrite walk still sees it
  std::set<std::string> seen;
  std::uint64_t cursor = 0;
  do {
    cursor = cache.rewrite_keys(cursor, 100, [&](std::string& key, TimePoint deadline) {
      seen.insert(key);
      if (key == "expiring")
        EXPECT_EQ(deadline, start + 1s);
      else if (key == "persistent")
        EXPECT_EQ(deadline, kNoExpiry);
      else
        EXPECT_EQ(deadline, start + 10s) << key;
      key = std::string(key.data(), key.size());  // new storage, same key
    });
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 3002u);
  EXPECT_TRUE(seen.count("expiring") == 1);
  for (int i = 0; i < 3000; ++i)
    ASSERT_EQ(cache.get("key:" + std::to_string(i)), std::to_string(i)) << i;
}

TEST(CacheHostApi, ScanOfAnEmptyCacheEndsAtOnce) {
  IntCache cache;
  int calls = 0;
  EXPECT_EQ(cache.scan(0, 1000, cache.clock().now(), [&](int, int) { ++calls; }), 0u);
  EXPECT_EQ(calls, 0);
}

TEST(CacheHostApi, SampleKeyFindsLiveKeysOnlyAndNothingWhenEmpty) {
  IntCache cache;
  EXPECT_EQ(cache.sample_key(12345, cache.clock().now()), nullptr);
  for (int i = 0; i < 1000; ++i) cache.put(i, i, i < 500 ? 5ms : 1h);
  cache.clock().advance(5ms);
  std::set<int> sampled;
  for (std::uint64_t r = 1; r < 2000; ++r) {
    const int* key = cache.sample_key(r, cache.clock().now());
    ASSERT_NE(key, nullptr);
    EXPECT_GE(*key, 500);
    sampled.insert(*key);
  }
  EXPECT_GT(sampled.size(), 450u);  // about uniform: 2000 draws over 500 keys miss few of them
}

}  // namespace
}  // namespace chronocache
