// Proactive expiry driven like a host drives it: reclaim_expired in bounded slices, paced by
// ExpiryPacer, on a ManualClock. The promise under test (expiry/expiry_pacer.h): with nobody
// reading, an entry is gone at most one cycle plus one slice interval after its deadline, never
// before it, and each slice examines no more than the pacer allows.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/expiry/expiry_pacer.h"
#include "chronocache/policy/ttl_only.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using IntCache = Cache<std::uint64_t, std::uint32_t, TtlOnly, ManualClock>;

// 1 M volatile keys, as the issue asks: ~0.3 s in Release, ~2 s under ASan+UBSan.
constexpr std::size_t kVolatileKeys = 1'000'000;
constexpr std::size_t kPersistentKeys = kVolatileKeys / 4;

// Keys spread over the table by the hash, not inserted in table order.
std::uint64_t key_of(std::size_t i) { return i * 0x9e3779b97f4a7c15ULL + 1; }

TEST(CacheExpiry, PacedSlicesRemoveEveryKeyWithinOneCycleOfItsDeadlineAndNoneEarly) {
  IntCache cache;
  std::mt19937_64 rng(42);
  std::vector<TimePoint> deadlines;
  deadlines.reserve(kVolatileKeys);
  const TimePoint start = cache.clock().now();
  for (std::size_t i = 0; i < kVolatileKeys; ++i) {
    const Duration ttl(1 + static_cast<std::int64_t>(rng() % 10'000));  // 1 ms .. 10 s
    cache.put(key_of(i), static_cast<std::uint32_t>(i), ttl);
    deadlines.push_back(start + ttl);
  }
  for (std::size_t i = 0; i < kPersistentKeys; ++i)
    cache.put(key_of(kVolatileKeys + i), static_cast<std::uint32_t>(i));
  std::sort(deadlines.begin(), deadlines.end());
  const std::size_t total = kVolatileKeys + kPersistentKeys;
  ASSERT_EQ(cache.stored_size(), total);
  // Keys whose deadline is at or before t (an entry is gone at its deadline, not after).
  const auto due_at = [&](TimePoint t) {
    return static_cast<std::size_t>(std::upper_bound(deadlines.begin(), deadlines.end(), t) -
                                    deadlines.begin());
  };

  ExpiryPacer pacer;  // 500 ms cycle
  const Duration cycle = pacer.pacing().cycle;
  const Duration step = 5ms;  // the host's slice interval
  const auto always = [] { return true; };
  (void)reclaim_slice(cache, pacer, cache.clock().now(), always);  // starts the pacer's clock
  std::size_t slices = 0;
  while (cache.clock().now() < start + 10s + cycle + 2 * step) {
    cache.clock().advance(step);
    const TimePoint now = cache.clock().now();
    const std::size_t capacity = cache.slot_capacity();
    const SliceResult slice = reclaim_slice(cache, pacer, now, always);
    ++slices;
    // The budget: this slice's share of a cycle (rounded up), never more than a slice's cap.
    const std::size_t share =
        (capacity * static_cast<std::size_t>(step.count()) + cycle.count() - 1) / cycle.count();
    ASSERT_LE(slice.examined, std::min(share, pacer.pacing().max_slice_slots)) << slices;
    ASSERT_LE(slice.reclaimed, slice.examined);
    // None early: only keys whose deadline passed are gone.
    const std::uint64_t expired = cache.stats().expired;
    ASSERT_LE(expired, due_at(now)) << "slice " << slices;
    ASSERT_EQ(cache.stored_size(), total - expired);
    // None late: everything due a full cycle (and one slice) ago is gone.
    ASSERT_GE(expired, due_at(now - cycle - step)) << "slice " << slices;
  }
  EXPECT_EQ(cache.stats().expired, kVolatileKeys);
  EXPECT_EQ(cache.stored_size(), kPersistentKeys);
  EXPECT_EQ(cache.size(), kPersistentKeys);
  // Only persistent keys remain: once a full cycle has seen that, slices cost nothing.
  const SliceResult idle = reclaim_slice(cache, pacer, cache.clock().now() + 1h, always);
  EXPECT_EQ(idle.examined, 0u);
}

TEST(CacheExpiry, EachReclaimCallStaysWithinItsBudgetAndAFullPassFindsEverything) {
  IntCache cache;
  constexpr std::size_t kKeys = 20'000;
  for (std::size_t i = 0; i < kKeys; ++i)
    cache.put(key_of(i), 0, Duration(1 + static_cast<std::int64_t>(i % 100)));
  cache.clock().advance(100ms);  // every key is due
  constexpr std::size_t kBudget = 16;
  const std::size_t calls = (cache.slot_capacity() + kBudget - 1) / kBudget;
  std::size_t reclaimed = 0;
  for (std::size_t call = 0; call < calls; ++call) {
    const std::size_t n = cache.reclaim_expired(kBudget);
    ASSERT_LE(n, kBudget);  // at most budget slots examined, so at most that many freed
    reclaimed += n;
  }
  EXPECT_EQ(reclaimed, kKeys);
  EXPECT_EQ(cache.stored_size(), 0u);
  EXPECT_EQ(cache.stats().expired, kKeys);
}

TEST(CacheExpiry, HalfAPassLeavesExpiredEntriesAndTheOtherHalfFindsThem) {
  // The budget counts slots, not entries: half the slots cannot hold every entry.
  IntCache cache;
  for (std::size_t i = 0; i < 5000; ++i) cache.put(key_of(i), 0, 1ms);
  cache.clock().advance(1ms);
  const std::size_t capacity = cache.slot_capacity();
  const std::size_t first = cache.reclaim_expired(capacity / 2);
  EXPECT_GT(first, 0u);
  EXPECT_GT(cache.stored_size(), 0u);
  const std::size_t second = cache.reclaim_expired(capacity - capacity / 2);
  EXPECT_EQ(first + second, 5000u);
  EXPECT_EQ(cache.stored_size(), 0u);
}

TEST(CacheExpiry, ASliceCutShortByTheHostCarriesItsDebtToTheNextSlice) {
  IntCache cache;
  for (std::size_t i = 0; i < 200'000; ++i) cache.put(key_of(i), 0, 10s);
  ExpiryPacer pacer;
  const auto never = [] { return false; };
  (void)reclaim_slice(cache, pacer, cache.clock().now(), never);
  cache.clock().advance(11s);  // all due; a whole cycle's worth (capped per slice) is owed
  const std::size_t owed = std::min(cache.slot_capacity(), pacer.pacing().max_slice_slots);
  const SliceResult cut = reclaim_slice(cache, pacer, cache.clock().now(), never);
  EXPECT_EQ(cut.examined, ExpiryPacer::kCheckEverySlots);  // one chunk, then the host said stop
  EXPECT_TRUE(cut.out_of_time);
  EXPECT_GT(cut.reclaimed, 0u);
  EXPECT_EQ(pacer.debt(), cache.slot_capacity() - ExpiryPacer::kCheckEverySlots);
  EXPECT_GT(owed, ExpiryPacer::kCheckEverySlots);
  // Later slices pay the rest even though no time passed.
  std::size_t rounds = 0;
  while (cache.stored_size() != 0 && rounds++ < 1000)
    (void)reclaim_slice(cache, pacer, cache.clock().now(), [] { return true; });
  EXPECT_EQ(cache.stored_size(), 0u);
  EXPECT_LE(rounds, cache.slot_capacity() / pacer.pacing().max_slice_slots + 2);
}

TEST(CacheExpiry, ACacheWithoutDueDeadlinesCostsNoSweeping) {
  IntCache cache;
  for (std::size_t i = 0; i < 10'000; ++i) cache.put(key_of(i), 0);  // no TTL
  cache.put(key_of(99'999), 0, 1h);
  ExpiryPacer pacer;
  EXPECT_EQ(reclaim_slice(cache, pacer, cache.clock().now(), [] { return true; }).examined, 0u);
  EXPECT_FALSE(reclaim_slice(cache, pacer, cache.clock().now(), [] { return false; }).out_of_time)
      << "nothing was due, so nothing was cut short";
  cache.clock().advance(30min);
  EXPECT_EQ(reclaim_slice(cache, pacer, cache.clock().now(), [] { return true; }).examined, 0u);
  EXPECT_EQ(pacer.debt(), 0u);
  // At the deadline the sweep runs again (the idle half hour is not owed: one pass at most).
  cache.clock().advance(30min);
  const SliceResult slice = reclaim_slice(cache, pacer, cache.clock().now(), [] { return true; });
  EXPECT_EQ(slice.examined, std::min(cache.slot_capacity(), pacer.pacing().max_slice_slots));
  EXPECT_EQ(slice.reclaimed, 1u);
  EXPECT_EQ(cache.stored_size(), 10'000u);
  // Once a full pass has seen only persistent keys the sweep stops again. (The pass that removed
  // the key began with its deadline in the cycle's bound, so one more pass may run.)
  cache.clock().advance(1s);
  (void)reclaim_slice(cache, pacer, cache.clock().now(), [] { return true; });
  cache.clock().advance(1s);
  EXPECT_EQ(reclaim_slice(cache, pacer, cache.clock().now(), [] { return true; }).examined, 0u);
}

// After a full reclaim cycle the cache trusts its earliest deadline: size() skips its scan and
// may_hold_expired() is false until then. An overwrite with an earlier deadline than any stored
// must lower that bound, also on the short path most overwrites take (Cache::is_quiet_write).
TEST(CacheExpiry, AnOverwriteWithAnEarlierDeadlineLowersTheExpiryBound) {
  IntCache cache;
  for (std::uint64_t key = 0; key < 100; ++key) cache.put(key, 0, 1h);
  EXPECT_EQ(cache.reclaim_expired(1'000'000) + cache.reclaim_expired(1'000'000), 0u);
  EXPECT_FALSE(cache.may_hold_expired(cache.clock().now() + 30min));
  EXPECT_EQ(cache.put(7, 1, 1s), PutOutcome::kReplaced);  // earlier than every stored deadline
  EXPECT_EQ(cache.put(8, 1, 30min), PutOutcome::kReplaced);
  EXPECT_TRUE(cache.may_hold_expired(cache.clock().now() + 1s));
  cache.clock().advance(1s);
  EXPECT_EQ(cache.size(), 99u);
  cache.clock().advance(30min);
  EXPECT_EQ(cache.size(), 98u);
}

// CacheFeatures::count_volatile: the stored entries with a deadline, exact through every way a
// deadline is written or dropped, the quiet overwrite most TTL writes take (Cache::is_quiet_write)
// and a deadline beyond the window (kept apart, in far_) included.
TEST(CacheExpiry, TheVolatileCountFollowsEveryDeadlineWrittenOrDropped) {
  Cache<std::uint64_t, std::uint32_t, TtlOnly, ManualClock, DefaultHash<std::uint64_t>,
        std::equal_to<>, CacheFeatures{.count_volatile = true}>
      cache;
  const auto reclaim_all = [&] {
    cache.reclaim_expired(1'000'000);  // to the end of the table...
    cache.reclaim_expired(1'000'000);  // ...then one whole cycle
  };
  for (std::uint64_t key = 0; key < 100; ++key) cache.put(key, 0);
  EXPECT_EQ(cache.volatile_stored_size(), 0u);
  for (std::uint64_t key = 0; key < 50; ++key) cache.put(key, 1, 1h);  // all but the first quiet
  EXPECT_EQ(cache.volatile_stored_size(), 50u);
  cache.put(0, 2);  // a write without a TTL drops it
  const TimePoint far_deadline = cache.clock().now() + 24h * 60;
  cache.put(1, 2, 24h * 60);  // beyond the window: moves to far_, still counted once
  EXPECT_TRUE(cache.erase(2));
  cache.put(200, 0, 1s);  // a new key with a TTL
  EXPECT_EQ(cache.volatile_stored_size(), 49u);
  cache.clock().advance(2s);
  EXPECT_EQ(cache.volatile_stored_size(), 49u);  // expired but stored, as Redis's expires dict
  reclaim_all();
  EXPECT_EQ(cache.volatile_stored_size(), 48u);
  cache.clock().advance(24h * 30);  // past the rebase point: the next write moves the epoch, and
  cache.put(300, 0);                // the 60-day deadline, now 30 days off, into the window
  EXPECT_EQ(cache.volatile_stored_size(), 48u);
  reclaim_all();  // the 1-hour keys are long due
  EXPECT_EQ(cache.volatile_stored_size(), 1u);
  EXPECT_EQ(cache.deadline(std::uint64_t{1}), far_deadline);
  cache.clear();
  EXPECT_EQ(cache.volatile_stored_size(), 0u);
}

TEST(CacheExpiry, TheSliceIntervalShrinksWithTheTableWithinTheHostsBounds) {
  ExpiryPacer pacer;                                   // 500 ms cycle, ~32 K slots per slice
  EXPECT_EQ(pacer.interval(1000, 1ms, 100ms), 100ms);  // small: the host's longest
  EXPECT_EQ(pacer.interval(32 * 1024 * 10, 1ms, 100ms), 50ms);       // 10 slices per cycle
  EXPECT_EQ(pacer.interval(std::size_t{1} << 30, 1ms, 100ms), 1ms);  // huge: the shortest
}

}  // namespace
}  // namespace chronocache
