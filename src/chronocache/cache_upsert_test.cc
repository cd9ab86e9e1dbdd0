// Pins Cache::upsert_prehashed, the one probe every write takes (put is built on it): each action
// fn may take (none, assign, update, erase, insert), what a dead-on-arrival deadline does to each,
// what the stats and the policy hear, the budgets, far deadlines, and a running capture.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "chronocache/cache.h"
#include "chronocache/capture.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/ttl_only.h"
#include "testing/numbered.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using test_support::numbered;

using IntCache = Cache<int, int, TtlOnly, ManualClock>;
using LruInts = Cache<int, int, Lru, ManualClock>;
using StringCache = Cache<std::string, std::string, TtlOnly, ManualClock>;
using LruStrings = Cache<std::string, std::string, Lru, ManualClock>;

// One upsert of `key` at the cache's now, with fn(entry).
template <class C, class Q, class Fn>
decltype(auto) upsert(C& cache, const Q& key, Fn&& fn, Access access = Access::kPeek) {
  return cache.upsert_prehashed(key, Hashed{cache.hash_of(key)}, cache.clock().now(), access,
                                std::forward<Fn>(fn));
}

TEST(CacheUpsert, AnAbsentKeyIsInsertedWithTheKeyBuiltFromWhatInsertGets) {
  StringCache cache;
  const std::string_view key = "k";
  const TimePoint deadline = cache.clock().now() + 10s;
  const PutOutcome outcome = upsert(cache, key, [&](StringCache::Upsert& entry) {
    EXPECT_FALSE(entry.found());
    return entry.insert(key, "v", deadline);  // K = std::string built from the view, here only
  });
  EXPECT_EQ(outcome, PutOutcome::kInserted);
  EXPECT_EQ(cache.get("k"), "v");
  EXPECT_EQ(cache.deadline("k"), deadline);
}

TEST(CacheUpsert, TakingNoActionLeavesTheCacheAsItWas) {
  IntCache cache;
  cache.put(1, 10, 5s);
  const TimePoint deadline = *cache.deadline(1);
  const int seen = upsert(cache, 1, [](IntCache::Upsert& entry) {
    EXPECT_TRUE(entry.found());
    EXPECT_EQ(entry.key(), 1);
    return entry.value();
  });
  EXPECT_EQ(seen, 10);
  EXPECT_EQ(upsert(cache, 2, [](IntCache::Upsert& entry) { return entry.found(); }), false);
  EXPECT_EQ(cache.get(1), 10);
  EXPECT_EQ(cache.deadline(1), deadline);
  EXPECT_FALSE(cache.contains(2));
  EXPECT_EQ(cache.stored_size(), 1u);
}

TEST(CacheUpsert, AssignReplacesValueAndDeadline) {
  IntCache cache;
  cache.put(1, 10, 5s);
  const TimePoint deadline = cache.clock().now() + 1h;
  EXPECT_EQ(upsert(cache, 1,
                   [&](IntCache::Upsert& entry) {
                     EXPECT_EQ(entry.deadline(), cache.clock().now() + 5s);
                     return entry.assign(11, deadline);
                   }),
            PutOutcome::kReplaced);
  EXPECT_EQ(cache.get(1), 11);
  EXPECT_EQ(cache.deadline(1), deadline);
  EXPECT_EQ(upsert(cache, 1, [&](auto& entry) { return entry.assign(12, kNoExpiry); }),
            PutOutcome::kReplaced);
  EXPECT_EQ(cache.deadline(1), kNoExpiry);
}

TEST(CacheUpsert, UpdateKeepsAnEditInPlaceWithTheDeadlineGiven) {
  IntCache cache;
  cache.put(1, 10, 5s);
  EXPECT_EQ(upsert(cache, 1,
                   [](IntCache::Upsert& entry) {
                     ++entry.mutable_value();
                     return entry.update(entry.deadline());  // KEEPTTL
                   }),
            PutOutcome::kReplaced);
  EXPECT_EQ(cache.get(1), 11);
  EXPECT_EQ(cache.deadline(1), cache.clock().now() + 5s);
}

TEST(CacheUpsert, UpdateTakesTheHeapChangeOfTheEditIntoMemoryUsed) {
  StringCache cache;
  cache.put("k", "v");
  const std::size_t before = cache.memory_used();
  upsert(cache, std::string_view("k"), [](StringCache::Upsert& entry) {
    std::string& value = entry.mutable_value();
    const std::size_t old_bytes = HeapBytes<std::string>::of(value);
    value.assign(1000, 'x');
    return entry.update(kNoExpiry, old_bytes, HeapBytes<std::string>::of(value));
  });
  EXPECT_EQ(cache.memory_used(), before + HeapBytes<std::string>::of(std::string(1000, 'x')));
  cache.erase("k");
  EXPECT_EQ(cache.memory_used() - cache.memory_bytes(), 0u) << "accounting stayed exact";
}

TEST(CacheUpsert, EraseRemovesTheLiveEntryWithoutCountingItExpired) {
  IntCache cache;
  cache.put(1, 10, 5s);
  EXPECT_TRUE(upsert(cache, 1, [](IntCache::Upsert& entry) { return entry.erase(); }));
  EXPECT_FALSE(cache.contains(1));
  EXPECT_EQ(cache.stored_size(), 0u);
  EXPECT_EQ(cache.stats().expired, 0u);
}

TEST(CacheUpsert, ADeadlineAtOrBeforeNowStoresNothingAndRemovesTheOldEntry) {
  IntCache cache;
  const TimePoint now = cache.clock().now();
  cache.put(1, 10, 5s);
  cache.put(2, 20, 5s);
  EXPECT_EQ(upsert(cache, 1, [&](auto& entry) { return entry.assign(11, now); }),
            PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(upsert(cache, 2,
                   [&](IntCache::Upsert& entry) {
                     ++entry.mutable_value();
                     return entry.update(now - 1s);
                   }),
            PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(upsert(cache, 3, [&](auto& entry) { return entry.insert(3, 30, now); }),
            PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.stored_size(), 0u);
  EXPECT_EQ(cache.stats().expired, 0u) << "removed by a write, not by expiry";
}

TEST(CacheUpsert, AnExpiredEntryIsSeenAbsentAndCountedExpired) {
  IntCache cache;
  cache.put(1, 10, 1s);
  cache.clock().advance(1s);  // at the deadline: gone
  EXPECT_EQ(upsert(cache, 1,
                   [&](IntCache::Upsert& entry) {
                     EXPECT_FALSE(entry.found());
                     return entry.insert(1, 11, kNoExpiry);
                   }),
            PutOutcome::kInserted);
  EXPECT_EQ(cache.stats().expired, 1u);
  EXPECT_EQ(cache.get(1), 11);
}

TEST(CacheUpsert, FarDeadlinesAreKeptExactlyAndForgottenWhenReplaced) {
  IntCache cache;
  const TimePoint far = cache.clock().now() + std::chrono::hours(24 * 400);
  upsert(cache, 1, [&](auto& entry) { return entry.insert(1, 10, far); });
  EXPECT_EQ(cache.deadline(1), far);
  upsert(cache, 1, [&](IntCache::Upsert& entry) { return entry.update(entry.deadline()); });
  EXPECT_EQ(cache.deadline(1), far);
  upsert(cache, 1, [&](auto& entry) { return entry.assign(11, cache.clock().now() + 1s); });
  EXPECT_EQ(cache.deadline(1), cache.clock().now() + 1s);
  const std::size_t without_far = cache.memory_bytes();
  upsert(cache, 1, [&](auto& entry) { return entry.assign(12, far); });
  EXPECT_GT(cache.memory_bytes(), without_far) << "the far deadline is held in the side map";
  upsert(cache, 1, [&](auto& entry) { return entry.assign(13, kNoExpiry); });
  EXPECT_EQ(cache.memory_bytes(), without_far);
  EXPECT_EQ(cache.deadline(1), kNoExpiry);
}

TEST(CacheUpsert, AReadCountsAHitOrAMissAndAPeekCountsNothing) {
  IntCache cache;
  cache.put(1, 10);
  upsert(
      cache, 1, [](auto&) {}, Access::kRead);
  upsert(
      cache, 2, [](auto&) {}, Access::kRead);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
  upsert(cache, 1, [](auto& entry) { return entry.assign(11, kNoExpiry); });
  upsert(cache, 3, [](auto& entry) { return entry.insert(3, 30, kNoExpiry); });
  cache.put(1, 12);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

// Lru with room for two: which of 1 and 2 survives the insert of 3 shows whether the upsert of 1
// counted as an access.
int survivor_after(const std::function<void(LruInts&)>& touch_one) {
  LruInts cache({.max_entries = 2});
  cache.put(1, 10);
  cache.put(2, 20);
  touch_one(cache);
  cache.put(3, 30);
  return cache.contains(1) ? 1 : 2;
}

TEST(CacheUpsert, AnOverwriteIsAnAccessForThePolicyAndAPeekThatKeepsIsNot) {
  EXPECT_EQ(survivor_after([](LruInts& c) {
              upsert(c, 1, [](auto& entry) { return entry.assign(11, kNoExpiry); });
            }),
            1);
  EXPECT_EQ(survivor_after([](LruInts& c) {
              upsert(c, 1, [](LruInts::Upsert& entry) { return entry.update(kNoExpiry); });
            }),
            1);
  EXPECT_EQ(survivor_after([](LruInts& c) { upsert(c, 1, [](auto&) {}); }), 2);
  EXPECT_EQ(survivor_after([](LruInts& c) {
              upsert(
                  c, 1, [](auto&) {}, Access::kRead);
            }),
            1);
}

TEST(CacheUpsert, InsertHonoursMaxEntries) {
  IntCache refusing({.max_entries = 1});
  refusing.put(1, 10);
  EXPECT_EQ(upsert(refusing, 2, [](auto& entry) { return entry.insert(2, 20, kNoExpiry); }),
            PutOutcome::kRejectedFull);
  EXPECT_EQ(upsert(refusing, 1, [](auto& entry) { return entry.assign(11, kNoExpiry); }),
            PutOutcome::kReplaced);
  LruInts evicting({.max_entries = 1});
  evicting.put(1, 10);
  EXPECT_EQ(upsert(evicting, 2, [](auto& entry) { return entry.insert(2, 20, kNoExpiry); }),
            PutOutcome::kInserted);
  EXPECT_FALSE(evicting.contains(1));
  EXPECT_EQ(evicting.stats().evicted, 1u);
}

TEST(CacheUpsert, AGrowingOverwriteEvictsOtherEntriesButNeverItself) {
  const auto fill = [](LruStrings& cache) {
    for (std::size_t i = 0; i < 20; ++i) cache.put(numbered("k", i), std::string(100, 'v'));
  };
  LruStrings unbounded;
  fill(unbounded);
  const std::size_t budget = unbounded.memory_used() + 2000;  // a 4000-byte value passes it
  for (const bool by_update : {false, true}) {
    LruStrings cache({.max_bytes = budget});
    fill(cache);
    ASSERT_EQ(cache.stats().evicted, 0u);
    const std::string key = numbered("k", 0);  // the least recent: the policy's first victim
    upsert(cache, key, [&](LruStrings::Upsert& entry) {
      EXPECT_TRUE(entry.found());
      if (!by_update) return entry.assign(std::string(4000, 'w'), kNoExpiry);
      std::string& value = entry.mutable_value();
      const std::size_t old_bytes = HeapBytes<std::string>::of(value);
      value.assign(4000, 'w');
      return entry.update(kNoExpiry, old_bytes, HeapBytes<std::string>::of(value));
    });
    EXPECT_EQ(cache.get(key), std::string(4000, 'w')) << by_update;
    EXPECT_GT(cache.stats().evicted, 0u) << by_update;
    EXPECT_LE(cache.memory_used(), budget) << by_update;
  }
}

// Capture: every change hands the entry's pending group over first, so the capture still gets
// what the entry held when it began; reads through the entry hand nothing over.
class CollectingSink final : public CaptureSink<std::string, std::string> {
 public:
  void capture(const std::string& key, const std::string& value, TimePoint) override {
    const bool fresh = entries.emplace(key, value).second;
    EXPECT_TRUE(fresh) << "handed over twice: " << key;
  }
  std::map<std::string, std::string> entries;
};

TEST(CacheUpsert, EveryActionHandsACaptureTheEntryAsItWasBeforeChangingIt) {
  StringCache cache;
  for (std::size_t i = 0; i < 200; ++i) cache.put(numbered("k", i), "old");
  CollectingSink sink;
  cache.begin_capture(sink, cache.clock().now());
  const auto key = [](std::size_t i) { return numbered("k", i); };
  upsert(cache, key(1), [](auto& entry) { return entry.assign("new", kNoExpiry); });
  upsert(cache, key(40), [](StringCache::Upsert& entry) {
    entry.mutable_value() = "new";
    return entry.update(kNoExpiry, 0, 0);
  });
  upsert(cache, key(80), [](auto& entry) { return entry.erase(); });
  upsert(cache, key(120), [&](auto& entry) { return entry.assign("new", cache.clock().now()); });
  upsert(cache, key(160), [](StringCache::Upsert& entry) { return entry.value().size(); });
  for (std::size_t i = 200; i < 400; ++i)
    upsert(cache, key(i), [&](auto& entry) { return entry.insert(key(i), "new", kNoExpiry); });
  cache.finish_capture();
  ASSERT_EQ(sink.entries.size(), 200u);
  for (const auto& [k, v] : sink.entries) EXPECT_EQ(v, "old") << k;
  EXPECT_EQ(cache.get(key(40)), "new");
}

}  // namespace
}  // namespace chronocache
