// Pins the long-horizon half of cache.h's semantics on a ManualClock: TTLs past the end of time,
// TTLs beyond the 32-bit deadline window (kept exactly in a side map), and expiry that stays exact
// to the millisecond while the epoch rebases (first at 2^31 ms, 24.8 days; then every 12.4 days).
// Built twice, like cache_test.cc: also with -fno-exceptions (cache_test_noexcept).
#include "chronocache/cache.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chronocache/clock/manual_clock.h"
#include "chronocache/expiry/deadline.h"
#include "chronocache/policy/ttl_only.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using std::chrono::days;

using IntCache = Cache<int, int, TtlOnly, ManualClock>;
using StringCache = Cache<std::string, std::string, TtlOnly, ManualClock>;

// A key no test stores: erasing it is a write that finds nothing and still lets the cache rebase
// its epoch, as a host's ordinary traffic would (a get that misses does not: it reads no clock).
constexpr int kProbe = -1;

// Moves the clock in steps of at most 20 days with a get() after each, so the cache sees time
// pass the way a busy host shows it (at least one mutating call per 24.8-day rebase period).
void advance_with_traffic(IntCache& cache, Duration total) {
  while (total > Duration::zero()) {
    const Duration step = std::min<Duration>(total, days(20));
    cache.clock().advance(step);
    EXPECT_FALSE(cache.erase(kProbe));
    total -= step;
  }
}

TEST(CacheLongTtl, TtlsPastTheEndOfTimeNeverExpire) {
  IntCache cache;
  EXPECT_EQ(cache.put(1, 10, std::chrono::seconds::max()), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(2, 20, std::chrono::milliseconds::max()), PutOutcome::kInserted);
  EXPECT_EQ(cache.put(3, 30, std::chrono::hours::max()), PutOutcome::kInserted);
  for (int key = 1; key <= 3; ++key) EXPECT_EQ(cache.deadline(key), kNoExpiry) << key;
  advance_with_traffic(cache, days(1000));
  for (int key = 1; key <= 3; ++key) EXPECT_EQ(cache.get(key), key * 10) << key;
  EXPECT_EQ(cache.size(), 3u);
}

TEST(CacheLongTtl, HugeFiniteTtlsKeepTheirExactDeadline) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  cache.put(1, 10, std::chrono::hours(1'000'000));    // 114 years
  cache.put(2, 20, std::chrono::nanoseconds::max());  // 292 years, rounded up to whole ms
  const TimePoint first = start + std::chrono::hours(1'000'000);
  const TimePoint second = start + Duration(9'223'372'036'855);
  EXPECT_EQ(cache.deadline(1), first);
  EXPECT_EQ(cache.deadline(2), second);
  advance_with_traffic(cache, first - start - 1ms);
  EXPECT_EQ(cache.get(1), 10);
  EXPECT_EQ(cache.deadline(2), second);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(1), std::nullopt);
  advance_with_traffic(cache, second - cache.clock().now() - 1ms);
  EXPECT_TRUE(cache.contains(2));
  cache.clock().advance(1ms);
  EXPECT_FALSE(cache.contains(2));
  EXPECT_EQ(cache.get(2), std::nullopt);
}

TEST(CacheLongTtl, TtlsBeyondTheThirtyTwoBitWindowAreKeptExactly) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  cache.put(1, 10, days(60));
  cache.put(2, 20, days(400));
  cache.put(3, 30, detail::kWindow + 1ms);
  EXPECT_EQ(cache.deadline(1), start + days(60));
  EXPECT_EQ(cache.deadline(2), start + days(400));
  EXPECT_EQ(cache.deadline(3), start + detail::kWindow + 1ms);
  EXPECT_EQ(cache.size(), 3u);
}

// Several puts at two moments, with deadlines before, at, between and after the 2^31 ms rebase
// points and the 2^32 ms window edge; time then walks through every deadline, stopping 1 ms before
// it and at it, with ordinary traffic in between so that the cache rebases about 16 times.
TEST(CacheLongTtl, DeadlinesExpireExactlyOnTimeAcrossSeveralRebases) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  const Duration two_to_31{std::int64_t{1} << 31};
  struct Planned {
    Duration put_at;  // after start
    Duration ttl;
  };
  const std::vector<Planned> plan = {{0ms, 1ms},
                                     {0ms, 1s},
                                     {0ms, days(10)},
                                     {0ms, two_to_31 - 1ms},
                                     {0ms, two_to_31},
                                     {0ms, two_to_31 + 1ms},
                                     {0ms, days(30)},
                                     {0ms, detail::kWindow - 1ms},
                                     {0ms, detail::kWindow},
                                     {0ms, detail::kWindow + 1ms},
                                     {0ms, days(60)},
                                     {0ms, days(100)},
                                     {0ms, days(250)},
                                     {0ms, days(400)},
                                     {days(37) + 5ms, 1ms},
                                     {days(37) + 5ms, days(20)},
                                     {days(37) + 5ms, days(49)},
                                     {days(37) + 5ms, days(60)},
                                     {days(37) + 5ms, days(200)},
                                     {days(37) + 5ms, detail::kWindow + 1ms}};
  std::vector<Duration> stops;
  for (const Planned& p : plan) {
    stops.push_back(p.put_at);
    stops.push_back(p.put_at + p.ttl - 1ms);
    stops.push_back(p.put_at + p.ttl);
  }
  std::sort(stops.begin(), stops.end());
  stops.erase(std::unique(stops.begin(), stops.end()), stops.end());

  for (const Duration stop : stops) {
    advance_with_traffic(cache, start + stop - cache.clock().now());
    ASSERT_EQ(cache.clock().now(), start + stop);
    std::size_t live = 0;
    for (std::size_t k = 0; k < plan.size(); ++k) {
      const int key = static_cast<int>(k);
      if (plan[k].put_at == stop) {
        ASSERT_EQ(cache.put(key, key, plan[k].ttl), PutOutcome::kInserted);
      }
      if (plan[k].put_at > stop) continue;
      const TimePoint deadline = start + plan[k].put_at + plan[k].ttl;
      const bool alive = start + stop < deadline;
      SCOPED_TRACE(testing::Message() << "key " << key << " at +" << stop.count() << " ms, due +"
                                      << (deadline - start).count() << " ms");
      EXPECT_EQ(cache.contains(key), alive);
      EXPECT_EQ(cache.deadline(key), alive ? std::optional(deadline) : std::nullopt);
      live += alive ? 1 : 0;
    }
    EXPECT_EQ(cache.size(), live) << "at +" << stop.count() << " ms";
    for (std::size_t k = 0; k < plan.size(); ++k) {
      if (plan[k].put_at > stop) continue;
      const bool alive = start + stop < start + plan[k].put_at + plan[k].ttl;
      const int key = static_cast<int>(k);
      EXPECT_EQ(cache.get(key), alive ? std::optional(key) : std::nullopt) << key;
    }
  }
  EXPECT_EQ(cache.size(), 0u);
}

// contains, size and deadline are const, so they cannot rebase; they must still see a far
// deadline (beyond the 32-bit window) pass when the clock jumps past it with no write in between.
TEST(CacheLongTtl, ReadOnlyCallsSeeAFarDeadlinePassAfterOneLongJump) {
  IntCache cache;
  cache.put(1, 10, days(60));
  cache.put(2, 20, days(400));
  cache.clock().advance(days(60) - 1ms);
  const IntCache& view = cache;
  EXPECT_TRUE(view.contains(1));
  cache.clock().advance(1ms);
  EXPECT_FALSE(view.contains(1));
  EXPECT_EQ(view.deadline(1), std::nullopt);
  EXPECT_EQ(view.size(), 1u);
  EXPECT_TRUE(view.contains(2));
  EXPECT_EQ(cache.get(1), std::nullopt);
}

// Nothing but gets between long jumps of the clock, most of them hits: every answer is exact,
// whether the jump made a rebase due (past 2^31 ms) or ran past the whole 32-bit window (a far
// entry, kept in the side map, is then read right after its rebase).
TEST(CacheLongTtl, HitsAloneStayExactAcrossLongJumps) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  const Duration two_to_31{std::int64_t{1} << 31};
  cache.put(1, 10, two_to_31 + 5s);         // in the 32-bit window
  cache.put(2, 20, detail::kWindow + 1ms);  // just past it
  cache.put(3, 30, days(400));              // far past it
  cache.put(4, 40);                         // never expires

  cache.clock().advance(two_to_31 + 5s - 1ms);  // a rebase is due and nothing has made it
  EXPECT_EQ(cache.get(1), 10);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(1), std::nullopt);  // at its deadline (this miss rebases)
  cache.clock().advance(start + detail::kWindow - cache.clock().now());
  EXPECT_EQ(cache.get(2), 20);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(2), std::nullopt);

  cache.clock().advance(days(60));  // past the window's end since the last rebase
  EXPECT_EQ(cache.get(4), 40);      // looks past "the window's end" until the rebase it makes
  cache.clock().advance(days(60));
  EXPECT_EQ(cache.get(3), 30);
  EXPECT_EQ(cache.get(3), 30);
  cache.clock().advance(start + days(400) - 1ms - cache.clock().now());
  EXPECT_EQ(cache.get(3), 30);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(3), std::nullopt);
  EXPECT_EQ(cache.get(4), 40);
  EXPECT_EQ(cache.stats().hits, 7u);
  EXPECT_EQ(cache.stats().misses, 3u);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(CacheLongTtl, FarDeadlinesOfStringKeysFollowTheirEntries) {
  StringCache cache;
  cache.put(std::string_view("far"), "v", days(60));
  cache.put(std::string("gone"), "v", days(70));
  EXPECT_TRUE(cache.erase(std::string_view("gone")));
  cache.put("far", "w", days(61));
  for (int step = 0; step < 3; ++step) {
    cache.clock().advance(days(20));
    EXPECT_FALSE(cache.erase(std::string_view("probe")));  // rebases, re-encoding far deadlines
  }
  EXPECT_EQ(cache.get("far"), "w");
  EXPECT_EQ(cache.deadline("far"), cache.clock().now() + days(1));
  cache.clock().advance(days(1));
  EXPECT_EQ(cache.get("far"), std::nullopt);
}

TEST(CacheLongTtl, ClearForgetsFarDeadlines) {
  IntCache cache;
  for (int key = 0; key < 5000; ++key) cache.put(key, key, key % 2 == 0 ? 1h : days(90));
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.deadline(1), std::nullopt);
  advance_with_traffic(cache, days(100));  // rebases must not look for the cleared far deadlines
  EXPECT_EQ(cache.put(1, 11, days(60)), PutOutcome::kInserted);
  EXPECT_EQ(cache.get(1), 11);
  EXPECT_EQ(cache.deadline(1), cache.clock().now() + days(60));
  EXPECT_EQ(cache.size(), 1u);
}

// An overwrite that brings a far deadline back into the window must drop the exact one kept
// aside: left behind, it would be read again once the entry loses its deadline (kNoExpiry shares
// the slot's mark), and the entry would expire at the old far deadline. Overwrites that meet no
// far deadline take a shorter path (Cache::is_quiet_write), which a far deadline anywhere in the
// cache must turn off.
TEST(CacheLongTtl, AnOverwriteIntoTheWindowForgetsTheFarDeadline) {
  IntCache cache;
  cache.put(1, 10, days(60));
  cache.put(2, 20, days(60));
  EXPECT_EQ(cache.put(1, 11, 1h), PutOutcome::kReplaced);
  EXPECT_EQ(cache.deadline(1), cache.clock().now() + 1h);
  EXPECT_EQ(cache.put(1, 12), PutOutcome::kReplaced);  // no expiry
  EXPECT_EQ(cache.deadline(1), kNoExpiry);
  // Key 2's far deadline keeps the map in use; with it gone, overwrites are quiet again.
  EXPECT_EQ(cache.put(2, 21, 2h), PutOutcome::kReplaced);
  EXPECT_EQ(cache.put(2, 22), PutOutcome::kReplaced);
  advance_with_traffic(cache, days(61));
  EXPECT_EQ(cache.get(1), 12);
  EXPECT_EQ(cache.get(2), 22);
  EXPECT_EQ(cache.size(), 2u);
}

// After a full reclaim cycle size() may skip its scan until the earliest deadline the cycle saw;
// a far deadline (kept outside the slot) must count among them.
TEST(CacheLongTtl, SizeNoticesAFarDeadlineAfterAFullReclaimCycle) {
  IntCache cache;
  cache.put(1, 10, days(60));
  cache.put(2, 20);
  EXPECT_EQ(cache.reclaim_expired(1'000'000) + cache.reclaim_expired(1'000'000), 0u);
  advance_with_traffic(cache, days(60) - 1ms);
  EXPECT_EQ(cache.size(), 2u);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.size(), 1u);
}

// The earliest deadline put during a reclaim cycle is kept in stored form, relative to the epoch,
// and becomes the bound size() trusts when the cycle ends: a rebase in between must shift it with
// the slots, or the bound would land a whole rebase period after the entry's deadline.
TEST(CacheLongTtl, TheExpiryBoundFromAPutFollowsARebaseWithinTheCycle) {
  {
    // The premise: in a fresh cache, key 1 lands in the half a sweep visits first (an expired
    // key 1 is found by the first 8 slots' sweep), so below it lies behind the cursor.
    IntCache probe;
    ASSERT_EQ(probe.slot_capacity(), 16u);
    probe.put(1, 10, 1ms);
    probe.clock().advance(1ms);
    ASSERT_EQ(probe.reclaim_expired(8), 1u);
  }
  IntCache cache;
  const TimePoint start = cache.clock().now();
  ASSERT_EQ(cache.slot_capacity(), 16u);    // one group: the sweep below halves it exactly
  EXPECT_EQ(cache.reclaim_expired(8), 0u);  // the cycle's cursor is now past slot 0
  cache.put(1, 10, days(30));               // slot 0, behind the cursor: only the put saw it
  advance_with_traffic(cache, days(26));    // rebases once, at 24.8 days
  EXPECT_EQ(cache.reclaim_expired(8), 0u);  // ends the cycle: the put's deadline is the bound
  ASSERT_FALSE(cache.may_hold_expired(cache.clock().now()));
  advance_with_traffic(cache, start + days(30) - 1ms - cache.clock().now());
  EXPECT_EQ(cache.size(), 1u);
  cache.clock().advance(1ms);
  EXPECT_TRUE(cache.may_hold_expired(cache.clock().now()));
  EXPECT_EQ(cache.size(), 0u);
}

// A TTL of up to 2^31 - 1 ms is stored relative to the clock reading (WindowDeadline) and a
// longer one through the absolute deadline: on either side of that line, and after a rebase, a
// put's deadline is exactly now + TTL.
TEST(CacheLongTtl, PutsOnEitherSideOfTheRelativeTtlLimitGetExactDeadlines) {
  IntCache cache;
  const Duration longest{detail::kMaxWindowTtlMs};
  for (const Duration elapsed : {Duration::zero(), Duration(days(30))}) {
    advance_with_traffic(cache, elapsed);
    const TimePoint now = cache.clock().now();
    cache.put(1, 10, longest);
    cache.put(2, 20, longest + 1ms);
    cache.put(3, 30, 1ms);
    EXPECT_EQ(cache.deadline(1), now + longest);
    EXPECT_EQ(cache.deadline(2), now + longest + 1ms);
    EXPECT_EQ(cache.deadline(3), now + 1ms);
    cache.put(1, 11, 5ms);  // an overwrite takes the relative path too
    EXPECT_EQ(cache.deadline(1), now + 5ms);
    cache.clock().advance(5ms);
    EXPECT_EQ(cache.get(1), std::nullopt);
    EXPECT_EQ(cache.get(3), std::nullopt);
    EXPECT_EQ(cache.get(2), 20);
    cache.clear();
  }
}

// The largest stored value the relative path makes: the longest TTL put when now - epoch is
// 2^31 - 1 ms, the last reading before a rebase, sums to 2^32 - 2, the window's end.
TEST(CacheLongTtl, TheLongestRelativeTtlAtTheLastReadingBeforeARebaseIsExact) {
  IntCache cache;
  advance_with_traffic(cache, Duration((std::int64_t{1} << 31) - 1));  // no rebase yet
  const TimePoint now = cache.clock().now();
  const Duration longest{detail::kMaxWindowTtlMs};
  cache.put(1, 10, longest);
  EXPECT_EQ(cache.deadline(1), now + longest);
  advance_with_traffic(cache, longest - 1ms);  // rebases on the way
  EXPECT_EQ(cache.get(1), 10);
  EXPECT_EQ(cache.deadline(1), now + longest);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(1), std::nullopt);
}

// A host may pass a reading ahead of the cache's clock (the epoch then lies after the clock's
// own reading); a put at that clock's reading still expires at exactly now + TTL.
TEST(CacheLongTtl, APutWhoseClockIsBehindTheEpochKeepsItsExactDeadline) {
  IntCache cache;
  const TimePoint start = cache.clock().now();
  const Duration rebase_point{std::int64_t{1} << 31};
  cache.clock().advance(rebase_point - 5ms);
  EXPECT_EQ(cache.reclaim_expired_at(1, start + rebase_point), 0u);  // the epoch moves to it
  const TimePoint now = cache.clock().now();                         // 5 ms before the epoch
  cache.put(1, 10, 100ms);
  EXPECT_EQ(cache.deadline(1), now + 100ms);
  cache.clock().advance(99ms);
  EXPECT_EQ(cache.get(1), 10);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(1), std::nullopt);
}

// ShardedCache's readers read the clock before they take a shard's lock, so a reader's `now` may
// be a little older than the reading of a write that rebased just before it. An entry that
// expired long before must still read as expired to that reader.
TEST(CacheLongTtl, AReaderWhoseClockPredatesARebaseStillSeesWhatExpiredAsExpired) {
  IntCache cache;
  cache.put(1, 10, 1s);
  cache.clock().advance(days(25));  // 1 expired long ago, not yet reclaimed
  const TimePoint reader_now = cache.clock().now();
  cache.clock().advance(std::chrono::hours(1));  // a reader held up for an hour, say
  cache.put(2, 20);                              // the write rebases at its later reading
  EXPECT_FALSE(cache.contains_prehashed(1, Hashed{cache.hash_of(1)}, reader_now));
  EXPECT_TRUE(cache.contains_prehashed(2, Hashed{cache.hash_of(2)}, reader_now));
  EXPECT_EQ(cache.get(1), std::nullopt);
}

}  // namespace
}  // namespace chronocache
