// Pins each line of the semantics in cache.h's header comment, on a ManualClock so that every
// deadline is checked to the millisecond: visible 1 ms before it, gone exactly at it.
// TTLs beyond the 32-bit window and the epoch rebases are in cache_long_ttl_test.cc. Both files are
// also built with -fno-exceptions (cache_test_noexcept): the engine must not need exceptions.
#include "chronocache/cache.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chronocache/clock/manual_clock.h"
#include "chronocache/expiry/deadline.h"
#include "chronocache/options.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/stats.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using std::chrono::days;

using IntCache = Cache<int, int, TtlOnly, ManualClock>;
using StringCache = Cache<std::string, std::string, TtlOnly, ManualClock>;

static_assert(
    requires(const IntCache& cache) { cache.size(); }, "size() is const");

// TTLs inside the 32-bit window (cache_long_ttl_test.cc covers the far ones).
const Duration kInWindowTtls[] = {1ms, 2ms, 5s, 1h, days(20), days(49)};

// Runs check(cache) on a fresh cache holding 1 -> 10 with `ttl`, `elapsed` after the put.
template <class Check>
void with_entry_after(Duration ttl, Duration elapsed, Check check) {
  IntCache cache;
  ASSERT_EQ(cache.put(1, 10, ttl), PutOutcome::kInserted);
  cache.clock().advance(elapsed);
  check(cache);
}

TEST(Cache, GetReturnsWhatPutStored) {
  IntCache cache;
  EXPECT_EQ(cache.put(1, 10, 5s), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(2, 20), PutOutcome::kInserted);
  EXPECT_EQ(cache.get(1), 10);
  EXPECT_EQ(cache.get(2), 20);
  EXPECT_EQ(cache.get(3), std::nullopt);
  EXPECT_TRUE(cache.contains(1));
  EXPECT_FALSE(cache.contains(3));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.empty());
}

TEST(Cache, EraseRemovesTheEntryAndSaysWhetherOneWasThere) {
  IntCache cache;
  cache.put(1, 10, 5s);
  EXPECT_TRUE(cache.erase(1));
  EXPECT_FALSE(cache.erase(1));
  EXPECT_FALSE(cache.erase(2));
  EXPECT_EQ(cache.get(1), std::nullopt);
  EXPECT_FALSE(cache.contains(1));
  EXPECT_TRUE(cache.empty());
  EXPECT_EQ(cache.put(1, 11, 5s), PutOutcome::kInserted);
  EXPECT_EQ(cache.get(1), 11);
}

TEST(Cache, OverwriteReplacesTheValueAndRestartsTheTtl) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  cache.put(1, 10, 5s);
  cache.clock().advance(4s);
  EXPECT_EQ(cache.put(1, 11, 5s), PutOutcome::kReplaced);
  EXPECT_EQ(cache.deadline(1), start + 9s);
  cache.clock().advance(4999ms);  // past the first deadline, 1 ms before the second
  EXPECT_EQ(cache.get(1), 11);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(1), std::nullopt);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(Cache, OverwriteWithAShorterTtlBringsTheDeadlineForward) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  cache.put(1, 10, 1h);
  cache.put(1, 11, 1s);
  EXPECT_EQ(cache.deadline(1), start + 1s);
  cache.clock().advance(1s);
  EXPECT_FALSE(cache.contains(1));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(Cache, PutWithoutTtlClearsAnEarlierDeadline) {
  IntCache cache;
  cache.put(1, 10, 5s);
  EXPECT_EQ(cache.put(1, 11), PutOutcome::kReplaced);
  EXPECT_EQ(cache.deadline(1), kNoExpiry);
  cache.clock().advance(days(10'000));
  EXPECT_EQ(cache.get(1), 11);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(Cache, PutWithTtlGivesADeadlineToAnEntryThatHadNone) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  cache.put(1, 10);
  EXPECT_EQ(cache.put(1, 11, 2s), PutOutcome::kReplaced);
  EXPECT_EQ(cache.deadline(1), start + 2s);
  cache.clock().advance(2s);
  EXPECT_EQ(cache.get(1), std::nullopt);
}

TEST(Cache, EntryIsVisibleOneMillisecondBeforeItsDeadline) {
  for (const Duration ttl : kInWindowTtls) {
    SCOPED_TRACE(testing::Message() << "ttl " << ttl.count() << " ms");
    const Duration elapsed = ttl - 1ms;
    with_entry_after(ttl, elapsed, [](IntCache& c) { EXPECT_EQ(c.get(1), 10); });
    with_entry_after(ttl, elapsed, [](IntCache& c) { EXPECT_TRUE(c.contains(1)); });
    with_entry_after(ttl, elapsed, [](IntCache& c) { EXPECT_EQ(c.size(), 1u); });
    with_entry_after(ttl, elapsed, [](IntCache& c) { EXPECT_TRUE(c.erase(1)); });
    with_entry_after(ttl, elapsed, [ttl](IntCache& c) {
      EXPECT_EQ(c.deadline(1), c.clock().now() - (ttl - 1ms) + ttl);
    });
  }
}

TEST(Cache, EntryIsInvisibleAtItsExactDeadline) {
  for (const Duration ttl : kInWindowTtls) {
    SCOPED_TRACE(testing::Message() << "ttl " << ttl.count() << " ms");
    with_entry_after(ttl, ttl, [](IntCache& c) { EXPECT_EQ(c.get(1), std::nullopt); });
    with_entry_after(ttl, ttl, [](IntCache& c) { EXPECT_FALSE(c.contains(1)); });
    with_entry_after(ttl, ttl, [](IntCache& c) { EXPECT_EQ(c.size(), 0u); });
    with_entry_after(ttl, ttl, [](IntCache& c) { EXPECT_FALSE(c.erase(1)); });
    with_entry_after(ttl, ttl, [](IntCache& c) { EXPECT_EQ(c.deadline(1), std::nullopt); });
  }
}

TEST(Cache, ZeroAndNegativeTtlsStoreNothing) {
  IntCache cache;
  EXPECT_EQ(cache.put(1, 10, 0s), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.put(2, 20, -1ms), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.put(3, 30, -5h), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.put(4, 40, 0ns), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.put(5, 50, std::chrono::nanoseconds::min()), PutOutcome::kExpiredOnArrival);
  for (int key = 1; key <= 5; ++key) EXPECT_FALSE(cache.contains(key)) << key;
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.stats().expired, 0u);  // nothing was stored, so nothing expired
}

TEST(Cache, ZeroOrNegativeTtlRemovesAnExistingValue) {
  IntCache cache;
  cache.put(1, 10, 1h);
  cache.put(2, 20);
  EXPECT_EQ(cache.put(1, 11, 0ms), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.put(2, 21, -1s), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.get(1), std::nullopt);
  EXPECT_EQ(cache.get(2), std::nullopt);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(Cache, SubMillisecondTtlsRoundUpToOneMillisecond) {
  auto expect_one_millisecond = [](auto ttl) {
    SCOPED_TRACE(testing::Message() << "ttl " << ttl.count() << " units");
    IntCache cache;
    const TimePoint start = cache.clock().now();
    EXPECT_EQ(cache.put(1, 10, ttl), PutOutcome::kInserted);
    EXPECT_EQ(cache.deadline(1), start + 1ms);
    EXPECT_EQ(cache.get(1), 10);
    cache.clock().advance(1ms);
    EXPECT_EQ(cache.get(1), std::nullopt);
  };
  expect_one_millisecond(1ns);
  expect_one_millisecond(999'999ns);
  expect_one_millisecond(1us);
  expect_one_millisecond(999us);
  expect_one_millisecond(1000us);
}

TEST(Cache, PartialMillisecondsRoundUp) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  cache.put(1, 10, 1001us);
  EXPECT_EQ(cache.deadline(1), start + 2ms);
  cache.clock().advance(1ms);
  EXPECT_TRUE(cache.contains(1));
  cache.clock().advance(1ms);
  EXPECT_FALSE(cache.contains(1));
}

TEST(Cache, SizeCountsLiveEntriesOnlyAndRemovesNothing) {
  IntCache cache;
  for (int key = 0; key < 30; ++key) cache.put(key, key, 1s);
  for (int key = 30; key < 50; ++key) cache.put(key, key, 2s);
  for (int key = 50; key < 60; ++key) cache.put(key, key);
  EXPECT_EQ(cache.size(), 60u);
  cache.clock().advance(1s);
  const IntCache& view = cache;
  EXPECT_EQ(view.size(), 30u);
  EXPECT_EQ(view.size(), 30u);
  EXPECT_EQ(cache.stats().expired, 0u);
  EXPECT_EQ(cache.get(0), std::nullopt);
  EXPECT_EQ(cache.stats().expired, 1u);  // size() left the expired entry for get() to find
  EXPECT_EQ(cache.reclaim_expired(1'000'000), 29u);
  EXPECT_EQ(cache.size(), 30u);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.size(), 10u);
  EXPECT_EQ(cache.reclaim_expired(1'000'000), 20u);
  EXPECT_EQ(cache.size(), 10u);
}

// After a full reclaim cycle size() may answer in O(1) until the earliest deadline it saw; it must
// notice that deadline, and any earlier one a later put brings.
TEST(Cache, SizeNoticesDeadlinesThatPassAfterAFullReclaimCycle) {
  IntCache cache;
  for (int key = 0; key < 1000; ++key) cache.put(key, key, 10s);
  // From wherever the cursor is: the first call runs to the end of the table, the second is a
  // whole cycle.
  EXPECT_EQ(cache.reclaim_expired(1'000'000) + cache.reclaim_expired(1'000'000), 0u);
  cache.put(5000, 1, 1s);
  cache.put(0, 0, 2s);
  EXPECT_EQ(cache.size(), 1001u);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.size(), 1000u);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.size(), 999u);
  cache.clock().advance(8s);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(Cache, ReclaimExpiredDoesBoundedWorkAndEventuallyReclaimsEverything) {
  IntCache cache;
  for (int key = 0; key < 10'000; ++key) cache.put(key, key, 1s);
  for (int key = 10'000; key < 10'100; ++key) cache.put(key, key, 1h);
  cache.clock().advance(1s);
  const std::size_t first = cache.reclaim_expired(1000);
  EXPECT_GT(first, 0u);
  EXPECT_LE(first, 1000u);
  std::size_t total = first;
  int calls = 1;
  while (total < 10'000 && calls < 1000) {
    total += cache.reclaim_expired(1000);
    ++calls;
  }
  EXPECT_EQ(total, 10'000u);
  EXPECT_GE(calls, 10);
  EXPECT_EQ(cache.stats().expired, 10'000u);
  EXPECT_EQ(cache.size(), 100u);
  for (int key = 10'000; key < 10'100; ++key) ASSERT_EQ(cache.get(key), key);
  EXPECT_EQ(cache.reclaim_expired(1'000'000) + cache.reclaim_expired(1'000'000), 0u);
}

// "Examines at most `budget` slots": so it cannot remove more entries than that.
TEST(Cache, ReclaimExpiredRemovesNoMoreEntriesThanItsBudget) {
  IntCache cache;
  for (int key = 0; key < 12; ++key) cache.put(key, key, 1s);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.reclaim_expired(0), 0u);
  EXPECT_LE(cache.reclaim_expired(1), 1u);
  EXPECT_LE(cache.reclaim_expired(5), 5u);
}

TEST(Cache, StatsCountHitsMissesAndEachKindOfExpiry) {
  IntCache cache;
  cache.put(1, 10, 1s);
  cache.put(2, 20);
  EXPECT_EQ(cache.get(1), 10);
  EXPECT_EQ(cache.get(2), 20);
  EXPECT_EQ(cache.get(3), std::nullopt);
  EXPECT_TRUE(cache.contains(1));  // contains is not a get: no hit or miss
  EXPECT_EQ(cache.stats(), (CacheStats{.hits = 2, .misses = 1, .expired = 0, .evicted = 0}));
  cache.clock().advance(1s);
  EXPECT_EQ(cache.get(1), std::nullopt);  // found expired: a miss and an expiry
  EXPECT_EQ(cache.stats(), (CacheStats{.hits = 2, .misses = 2, .expired = 1, .evicted = 0}));

  cache.put(4, 40, 1s);
  cache.put(5, 50, 1s);
  cache.put(6, 60, 1s);
  cache.clock().advance(1s);
  EXPECT_FALSE(cache.erase(4));                                    // erase meets it expired
  EXPECT_EQ(cache.put(5, 51, 1s), PutOutcome::kInserted);          // put replaces a dead entry
  EXPECT_EQ(cache.put(6, 61, 0s), PutOutcome::kExpiredOnArrival);  // and removes one
  EXPECT_EQ(cache.stats(), (CacheStats{.hits = 2, .misses = 2, .expired = 4, .evicted = 0}));
  EXPECT_EQ(cache.get(5), 51);
  EXPECT_EQ(cache.stats().hits, 3u);
}

TEST(Cache, ReadsCanLeaveExpiredEntriesStoredUntilTurnedBackOn) {
  StringCache cache;
  cache.put("a", "1", 1s);
  cache.put("b", "2");
  cache.clock().advance(1s);
  cache.set_reads_remove_expired(false);
  const Hashed h{cache.hash_of(std::string_view("a"))};
  EXPECT_EQ(cache.get("a"), std::nullopt);
  EXPECT_EQ(cache.read_key_prehashed(std::string_view("a"), h, cache.clock().now()), nullptr);
  EXPECT_EQ(cache.stored_size(), 2u);  // still stored: reported missing, not removed
  EXPECT_EQ(cache.stats(), (CacheStats{.hits = 0, .misses = 2, .expired = 0, .evicted = 0}));

  // A write that meets it still removes it first: the key is stored once, with the new value.
  cache.put("a", "3", 1s);
  EXPECT_EQ(cache.stored_size(), 2u);
  EXPECT_EQ(cache.get("a"), "3");
  EXPECT_EQ(cache.stats().expired, 1u);

  cache.clock().advance(1s);
  cache.set_reads_remove_expired(true);
  EXPECT_EQ(cache.get("a"), std::nullopt);
  EXPECT_EQ(cache.stored_size(), 1u);
  EXPECT_EQ(cache.stats().expired, 2u);
}

TEST(Cache, ClearRemovesEveryEntryAndTheCacheStaysUsable) {
  IntCache cache;
  for (int key = 0; key < 5000; ++key) cache.put(key, key, key % 2 == 0 ? 1h : 1s);
  cache.clock().advance(1s);
  const std::uint64_t hits = cache.stats().hits;
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.contains(0));
  EXPECT_EQ(cache.get(2), std::nullopt);
  EXPECT_EQ(cache.stats().expired, 0u);  // dropped by clear, not expired
  EXPECT_EQ(cache.stats().hits, hits);
  EXPECT_EQ(cache.put(1, 11, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.get(1), 11);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(Cache, ReserveGrowsMemoryOnceAndInsertsThenNeedNoMore) {
  IntCache cache;
  const std::size_t empty_bytes = cache.memory_bytes();
  cache.reserve(100'000);
  const std::size_t reserved_bytes = cache.memory_bytes();
  EXPECT_GE(reserved_bytes, empty_bytes + 100'000 * 12);
  for (int key = 0; key < 100'000; ++key) ASSERT_EQ(cache.put(key, key, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.memory_bytes(), reserved_bytes);
  for (int key = 0; key < 100'000; ++key) ASSERT_EQ(cache.get(key), key);
}

TEST(Cache, ReserveKeepsEntriesAlreadyStored) {
  IntCache cache;
  for (int key = 0; key < 1000; ++key) cache.put(key, key * 3, 1h);
  cache.reserve(50'000);
  EXPECT_EQ(cache.size(), 1000u);
  for (int key = 0; key < 1000; ++key) ASSERT_EQ(cache.get(key), key * 3);
}

TEST(Cache, InitialCapacityReservesUpFront) {
  IntCache sized({.initial_capacity = 50'000});
  IntCache reserved;
  reserved.reserve(50'000);
  EXPECT_EQ(sized.options().initial_capacity, 50'000u);
  EXPECT_EQ(sized.memory_bytes(), reserved.memory_bytes());
  EXPECT_GT(sized.memory_bytes(), IntCache().memory_bytes());
  const std::size_t bytes = sized.memory_bytes();
  for (int key = 0; key < 50'000; ++key) sized.put(key, key);
  EXPECT_EQ(sized.memory_bytes(), bytes);
}

TEST(Cache, StringKeysAreFoundThroughStringViewsAndCStrings) {
  StringCache cache;
  const TimePoint start = cache.clock().now();
  EXPECT_EQ(cache.put(std::string_view("alpha"), "one", 10s), PutOutcome::kInserted);
  EXPECT_EQ(cache.put("beta", "two"), PutOutcome::kInserted);
  const char* alpha = "alpha";
  EXPECT_EQ(cache.get(std::string_view("alpha")), "one");
  EXPECT_EQ(cache.get(alpha), "one");
  EXPECT_EQ(cache.get(std::string("beta")), "two");
  EXPECT_TRUE(cache.contains(std::string_view("beta")));
  EXPECT_TRUE(cache.contains("alpha"));
  EXPECT_EQ(cache.deadline(std::string_view("alpha")), start + 10s);
  EXPECT_EQ(cache.put(std::string_view("alpha"), "uno", 10s), PutOutcome::kReplaced);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.erase(alpha));
  EXPECT_TRUE(cache.erase(std::string_view("beta")));
  EXPECT_TRUE(cache.empty());
}

TEST(Cache, StringKeysWithEmbeddedZerosAreDistinct) {
  StringCache cache;
  cache.put(std::string_view("a\0b", 3), "with zero");
  cache.put(std::string_view("a", 1), "short");
  EXPECT_EQ(cache.get(std::string_view("a\0b", 3)), "with zero");
  EXPECT_EQ(cache.get("a"), "short");  // a C string stops at its first zero
  EXPECT_FALSE(cache.contains(std::string_view("a\0c", 3)));
  EXPECT_EQ(cache.size(), 2u);
}

TEST(Cache, NonTrivialValuesSurviveGrowthOverwriteAndExpiry) {
  Cache<int, std::string, TtlOnly, ManualClock> strings;
  Cache<std::string, std::vector<int>, TtlOnly, ManualClock> vectors;
  auto text = [](int key) { return std::string(40 + key % 50, static_cast<char>('a' + key % 26)); };
  for (int key = 0; key < 20'000; ++key) {
    strings.put(key, text(key), key % 3 == 0 ? 1s : 1h);
    vectors.put("a key long enough to live on the heap " + std::to_string(key),
                std::vector<int>(static_cast<std::size_t>(key % 17), key), key % 3 == 0 ? 1s : 1h);
  }
  for (int key = 0; key < 20'000; key += 7) strings.put(key, text(key + 1), 1h);
  strings.clock().advance(1s);
  vectors.clock().advance(1s);
  strings.reclaim_expired(1'000'000);
  for (int key = 0; key < 20'000; ++key) {
    const bool rewritten = key % 7 == 0;
    const bool expired = key % 3 == 0 && !rewritten;
    ASSERT_EQ(strings.get(key),
              expired ? std::nullopt : std::optional(text(key + (rewritten ? 1 : 0))));
    const auto vec = vectors.get("a key long enough to live on the heap " + std::to_string(key));
    ASSERT_EQ(vec, key % 3 == 0
                       ? std::nullopt
                       : std::optional(std::vector<int>(static_cast<std::size_t>(key % 17), key)));
  }
  vectors.clear();
}

TEST(Cache, MaxEntriesUnderTtlOnlyRefusesNewKeysButTakesOverwrites) {
  IntCache cache({.max_entries = 3});
  EXPECT_EQ(cache.put(1, 10, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(2, 20, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(3, 30), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(4, 40, 1h), PutOutcome::kRejectedFull);
  EXPECT_FALSE(cache.contains(4));
  EXPECT_EQ(cache.put(2, 21, 1h), PutOutcome::kReplaced);
  EXPECT_EQ(cache.get(2), 21);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_TRUE(cache.erase(1));
  EXPECT_EQ(cache.put(4, 40, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(2, 22, 0s), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.put(5, 50, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.stats().evicted, 0u);
}

// options.h: "expired-but-unreclaimed entries count" towards max_entries.
TEST(Cache, MaxEntriesCountsExpiredEntriesUntilTheyAreReclaimed) {
  IntCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1s);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.put(4, 40, 1h), PutOutcome::kRejectedFull);
  EXPECT_EQ(cache.put(1, 11, 1h), PutOutcome::kInserted);  // its own dead entry makes room
  EXPECT_EQ(cache.stats().expired, 1u);
  EXPECT_EQ(cache.reclaim_expired(1'000'000), 2u);
  EXPECT_EQ(cache.put(4, 40, 1h), PutOutcome::kInserted);
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace chronocache

namespace chronocache {
namespace {

// A table that loses most of its keys gives its memory back (SegmentedTable::shrink): by erases
// at once, by the expiry sweep at the end of its cycle. The survivors stay findable, and the
// table grows again as before.
TEST(CacheShrink, ErasingMostKeysHalvesTheSparseSegments) {
  IntCache cache;
  for (int i = 0; i < 200'000; ++i) cache.put(i, i);
  const std::size_t full = cache.memory_bytes();
  for (int i = 0; i < 200'000; ++i)
    if (i % 5 != 0) {
      ASSERT_TRUE(cache.erase(i));
    }
  EXPECT_LT(cache.memory_bytes(), full * 6 / 10);
  for (int i = 0; i < 200'000; i += 5) ASSERT_EQ(cache.get(i), i) << i;
  for (int i = 200'000; i < 400'000; ++i) cache.put(i, i);  // and it grows back
  for (int i = 200'000; i < 400'000; ++i) ASSERT_EQ(cache.get(i), i) << i;
}

// Erase shrinks a segment once it is half empty, while a mass delete is still under way; the
// segments end between 1/2 and 0.775 full, and shrink_loose_segments refits those below 3/4, a
// bounded few per call, until the table is as full as the refitted size makes it. Half the keys
// go (the segments end at 0.71), then three in five (0.57).
void expect_loose_segments_refit(int keep_of_ten) {
  SCOPED_TRACE(keep_of_ten);
  IntCache cache;
  const auto kept = [keep_of_ten](int i) { return i % 10 < keep_of_ten; };
  for (int i = 0; i < 200'000; ++i) cache.put(i, i);
  for (int i = 0; i < 200'000; ++i)
    if (!kept(i)) {
      ASSERT_TRUE(cache.erase(i));
    }
  const std::size_t loose_capacity = cache.slot_capacity();
  ASSERT_LT(static_cast<double>(cache.size()) / static_cast<double>(loose_capacity), 0.75);
  std::size_t rebuilt = 0;
  while (const std::size_t n = cache.shrink_loose_segments(4)) {
    ASSERT_LE(n, 4u);
    rebuilt += n;
  }
  EXPECT_GT(rebuilt, 4u);
  EXPECT_LT(cache.slot_capacity(), loose_capacity);
  EXPECT_GE(static_cast<double>(cache.size()) / static_cast<double>(cache.slot_capacity()), 0.75);
  for (int i = 0; i < 200'000; ++i) ASSERT_EQ(cache.get(i).has_value(), kept(i)) << i;
}
TEST(CacheShrink, SegmentsAMassDeleteLeftLooseAreRefitAFewPerCall) {
  expect_loose_segments_refit(5);
  expect_loose_segments_refit(4);
}

// While entries may be due, a sweep cycle is running: refitting a segment it has passed would
// stretch the cycle (the server's real-time expiry test ran 3.5 s instead of under 2.4 so).
TEST(CacheShrink, LooseSegmentsTheSweepHasPassedWaitForTheCycleToEnd) {
  IntCache cache;
  for (int i = 0; i < 200'000; ++i) cache.put(i, i, 1s);
  cache.clock().advance(2s);
  const std::size_t capacity = cache.slot_capacity();
  const std::size_t first_half = cache.reclaim_expired(capacity / 2);
  ASSERT_GT(first_half, 50'000u);
  EXPECT_EQ(cache.shrink_loose_segments(1'000), 0u)
      << "the emptied segments lie behind the sweep's cursor";
  EXPECT_EQ(first_half + cache.reclaim_expired(capacity - capacity / 2), 200'000u)
      << "the cycle ends on time";
  EXPECT_LT(cache.slot_capacity(), capacity / 10) << "and shrinks what it emptied";
}

TEST(CacheShrink, TheExpirySweepShrinksWhenItsCycleEnds) {
  IntCache cache;
  for (int i = 0; i < 200'000; ++i) {
    if (i % 5 == 0)
      cache.put(i, i);
    else
      cache.put(i, i, 1s);
  }
  const std::size_t full = cache.memory_bytes();
  cache.clock().advance(2s);
  const std::size_t capacity = cache.slot_capacity();
  EXPECT_EQ(cache.reclaim_expired(capacity), 160'000u);  // exactly one full cycle
  EXPECT_LT(cache.memory_bytes(), full * 6 / 10);
  EXPECT_LT(cache.slot_capacity(), capacity * 6 / 10);
  for (int i = 0; i < 200'000; i += 5) ASSERT_EQ(cache.get(i), i) << i;
}

}  // namespace
}  // namespace chronocache
