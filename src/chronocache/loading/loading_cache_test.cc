// Pins LoadingCache's semantics one feature at a time (loading_cache.h): read-through loads and
// their stats, errors and throwing and asynchronous loaders, negative caching, expiry, refresh
// after write, get_all with and without a bulk loader, put and invalidate, prefetch and its
// accuracy counters, back-pressure, shutdown, adaptive TTL, and what a hit costs in clock reads.
// Time is a SharedManualClock (the executor's threads read it too); background work is waited
// for with wait_idle() or latches, never with a sleep. The races between threads (single-flight,
// put during a load) are in loading_concurrency_test.cc.
#include "chronocache/loading/loading_cache.h"

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "chronocache/loading/load_result.h"
#include "chronocache/loading/loader.h"
#include "chronocache/loading/loading_options.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/sharded_cache.h"

#include <gtest/gtest.h>

#include "testing/numbered.h"
#include "testing/shared_manual_clock.h"

namespace chronocache {

// Readable failures: gtest finds this by argument-dependent lookup.
void PrintTo(const LoadResult<std::string>& result, std::ostream* os) {
  if (result.has_value())
    *os << "value \"" << result.value() << '"';
  else if (result.is_not_found())
    *os << "not found";
  else
    *os << "error " << static_cast<int>(result.error().code) << " \"" << result.error().message
        << '"';
}

namespace {

using namespace std::chrono_literals;
using test_support::numbered;
using test_support::SharedManualClock;
using Cache = LoadingCache<int, std::string, TtlOnly, SharedManualClock>;
using Result = LoadResult<std::string>;

Result value(std::string v) { return Result(std::move(v)); }

// A loader answering "v<key>.<n>", n counting its calls, so a test sees which load it got.
struct CountingLoader {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  Result operator()(const int& key) const {
    const int n = ++*calls;
    return value(numbered("v", key) + "." + std::to_string(n));
  }
  int count() const { return calls->load(); }
};

TEST(LoadingCache, AMissLoadsAndAHitDoesNotCallTheLoader) {
  SharedManualClock clock;
  CountingLoader loader;
  Cache cache({}, loader, {}, {}, clock);
  EXPECT_EQ(cache.get(1), value("v1.1"));
  EXPECT_EQ(cache.get(1), value("v1.1"));
  EXPECT_EQ(cache.get(2), value("v2.2"));
  EXPECT_EQ(loader.count(), 2);
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.loads, 2u);
  EXPECT_EQ(stats.load_successes, 2u);
  EXPECT_EQ(stats.load_failures, 0u);
}

TEST(LoadingCache, LoadTimeIsMeasuredByTheCachesClock) {
  SharedManualClock clock;
  Cache cache(
      {},
      [&](const int&) -> Result {
        clock.advance(5ms);
        return value("x");
      },
      {}, {}, clock);
  (void)cache.get(1);
  (void)cache.get(2);
  EXPECT_EQ(cache.stats().total_load_time, 10ms);
}

TEST(LoadingCache, AnErrorReachesTheCallerAndIsNeverCached) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache(
      {.negative_ttl = 10s},
      [&](const int&) -> Result {
        ++calls;
        return LoadError{LoadErrorCode::kLoaderFailed, "db down"};
      },
      {}, {}, clock);
  const Result first = cache.get(1);
  ASSERT_TRUE(first.is_error());
  EXPECT_EQ(first.error().message, "db down");
  EXPECT_TRUE(cache.get(1).is_error());
  EXPECT_EQ(calls.load(), 2);  // not cached, even with negative caching on
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.stats().load_failures, 2u);
}

#if defined(__cpp_exceptions)
TEST(LoadingCache, AThrowingLoaderBecomesAnErrorResult) {
  SharedManualClock clock;
  Cache cache(
      {}, [](const int&) -> Result { throw std::runtime_error("boom"); }, {}, {}, clock);
  const Result result = cache.get(1);
  ASSERT_TRUE(result.is_error());
  EXPECT_EQ(result.error().code, LoadErrorCode::kLoaderThrew);
  EXPECT_EQ(result.error().message, "boom");
}
#endif

TEST(LoadingCache, AnAsynchronousLoadersFutureIsWaitedFor) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache(
      {},
      [&](const int& key) {
        ++calls;
        std::promise<Result> promise;
        promise.set_value(value(numbered("async", key)));
        return promise.get_future();
      },
      {}, {}, clock);
  EXPECT_EQ(cache.get(3), value("async3"));
  EXPECT_EQ(cache.get_async(3).get(), value("async3"));
  EXPECT_EQ(cache.get_async(4).get(), value("async4"));
  EXPECT_EQ(calls.load(), 2);
}

TEST(LoadingCache, NotFoundIsCachedForTheNegativeTtlOnly) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache(
      {.negative_ttl = 5s},
      [&](const int&) -> Result {
        ++calls;
        return NotFound{};
      },
      {}, {}, clock);
  EXPECT_TRUE(cache.get(1).is_not_found());
  clock.advance(4999ms);
  EXPECT_TRUE(cache.get(1).is_not_found());
  EXPECT_EQ(calls.load(), 1);
  clock.advance(1ms);
  EXPECT_TRUE(cache.get(1).is_not_found());
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(cache.stats().load_not_found, 2u);
  EXPECT_EQ(cache.stats().load_failures, 0u);
}

TEST(LoadingCache, WithoutNegativeTtlEveryGetOfAnAbsentKeyCallsTheLoader) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache(
      {},
      [&](const int&) -> Result {
        ++calls;
        return NotFound{};
      },
      {}, {}, clock);
  EXPECT_TRUE(cache.get(1).is_not_found());
  EXPECT_TRUE(cache.get(1).is_not_found());
  EXPECT_EQ(calls.load(), 2);
}

TEST(LoadingCache, AnEntryExpiresAfterWriteAndTheNextGetLoadsAgain) {
  SharedManualClock clock;
  CountingLoader loader;
  Cache cache({.expire_after_write = 10s}, loader, {}, {}, clock);
  EXPECT_EQ(cache.get(1), value("v1.1"));
  clock.advance(9999ms);
  EXPECT_EQ(cache.get(1), value("v1.1"));
  clock.advance(1ms);
  EXPECT_EQ(cache.get(1), value("v1.2"));
}

TEST(LoadingCache, ARefreshReturnsTheCurrentValueAndReloadsInTheBackground) {
  SharedManualClock clock;
  CountingLoader loader;
  Cache cache({.refresh_after = 1s}, loader, {}, {}, clock);
  EXPECT_EQ(cache.get(1), value("v1.1"));
  clock.advance(999ms);
  EXPECT_EQ(cache.get(1), value("v1.1"));
  cache.wait_idle();
  EXPECT_EQ(loader.count(), 1);  // younger than refresh_after: nothing scheduled
  clock.advance(1ms);
  EXPECT_EQ(cache.get(1), value("v1.1"));  // at once, the old value
  cache.wait_idle();
  EXPECT_EQ(cache.get(1), value("v1.2"));  // the reload's
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.refreshes, 1u);
  EXPECT_EQ(stats.loads, 2u);
  EXPECT_EQ(stats.misses, 1u);  // the refresh made no get wait
}

TEST(LoadingCache, ReadsDuringARefreshScheduleNoSecondOne) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  std::latch started(1);
  std::latch release(1);
  Cache cache(
      {.refresh_after = 1s},
      [&](const int&) -> Result {
        if (++calls == 2) {
          started.count_down();
          release.wait();
        }
        return value(numbered("v", calls.load()));
      },
      {}, {}, clock);
  EXPECT_EQ(cache.get(1), value("v1"));
  clock.advance(1s);
  EXPECT_EQ(cache.get(1), value("v1"));
  started.wait();  // the refresh is in the loader
  for (int i = 0; i < 5; ++i) EXPECT_EQ(cache.get(1), value("v1"));
  release.count_down();
  cache.wait_idle();
  EXPECT_EQ(cache.get(1), value("v2"));
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(cache.stats().refreshes, 1u);
}

TEST(LoadingCache, AFailedRefreshKeepsTheOldValueAndIsCounted) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache(
      {.refresh_after = 1s},
      [&](const int&) -> Result {
        if (++calls == 1) return value("good");
        return LoadError{LoadErrorCode::kLoaderFailed, "flaky"};
      },
      {}, {}, clock);
  EXPECT_EQ(cache.get(1), value("good"));
  clock.advance(1s);
  EXPECT_EQ(cache.get(1), value("good"));
  cache.wait_idle();
  EXPECT_EQ(cache.get(1), value("good"));  // still; and this get schedules a new try
  cache.wait_idle();
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.refreshes, 2u);
  EXPECT_EQ(stats.refresh_failures, 2u);
  EXPECT_EQ(stats.load_failures, 2u);
}

TEST(LoadingCache, GetAllLoadsOnlyTheMissesThroughTheBulkLoaderInOneCall) {
  SharedManualClock clock;
  CountingLoader loader;
  std::vector<std::vector<int>> bulk_calls;
  Cache cache(
      {}, loader,
      [&](std::span<const int> keys) {
        bulk_calls.emplace_back(keys.begin(), keys.end());
        std::vector<Result> out;
        for (int key : keys) out.push_back(value(numbered("bulk", key)));
        return out;
      },
      {}, clock);
  cache.put(2, "put2");
  const std::vector<int> keys{1, 2, 3, 1};
  const std::vector<Result> got = cache.get_all(keys);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], value("bulk1"));
  EXPECT_EQ(got[1], value("put2"));
  EXPECT_EQ(got[2], value("bulk3"));
  EXPECT_EQ(got[3], value("bulk1"));  // the repeated key joined the first one's load
  ASSERT_EQ(bulk_calls.size(), 1u);
  EXPECT_EQ(bulk_calls[0], (std::vector<int>{1, 3}));
  EXPECT_EQ(loader.count(), 0);
  EXPECT_EQ(cache.get(3), value("bulk3"));  // stored
}

TEST(LoadingCache, GetAllWithoutABulkLoaderLoadsKeyByKey) {
  SharedManualClock clock;
  CountingLoader loader;
  Cache cache({}, loader, {}, {}, clock);
  const std::vector<int> keys{1, 2};
  const std::vector<Result> got = cache.get_all(keys);
  EXPECT_EQ(got[0], value("v1.1"));
  EXPECT_EQ(got[1], value("v2.2"));
  EXPECT_EQ(loader.count(), 2);
}

TEST(LoadingCache, ABulkLoaderAnsweringTheWrongCountFailsEveryKey) {
  SharedManualClock clock;
  Cache cache(
      {}, CountingLoader{}, [](std::span<const int>) { return std::vector<Result>{value("one")}; },
      {}, clock);
  const std::vector<int> keys{1, 2};
  for (const Result& result : cache.get_all(keys)) {
    ASSERT_TRUE(result.is_error());
    EXPECT_EQ(result.error().code, LoadErrorCode::kBulkMismatch);
  }
  EXPECT_EQ(cache.size(), 0u);
}

TEST(LoadingCache, PutIsServedWithoutALoadAndInvalidateMakesTheNextGetLoad) {
  SharedManualClock clock;
  CountingLoader loader;
  Cache cache({}, loader, {}, {}, clock);
  cache.put(1, "mine");
  EXPECT_EQ(cache.get(1), value("mine"));
  EXPECT_EQ(loader.count(), 0);
  cache.invalidate(1);
  EXPECT_EQ(cache.get(1), value("v1.1"));
}

TEST(LoadingCache, APrefetchedEntryIsUsedOnceByItsFirstRead) {
  SharedManualClock clock;
  CountingLoader loader;
  Cache cache({}, loader, {}, {}, clock);
  EXPECT_EQ(cache.prefetch(1), PrefetchOutcome::kScheduled);
  EXPECT_EQ(cache.prefetch(2), PrefetchOutcome::kScheduled);
  cache.wait_idle();
  EXPECT_EQ(cache.prefetch(1), PrefetchOutcome::kPresent);
  EXPECT_EQ(cache.get(1), value("v1.1"));  // no load: the prefetch's
  EXPECT_EQ(cache.get(1), value("v1.1"));
  EXPECT_EQ(loader.count(), 2);
  LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.prefetches_issued, 2u);
  EXPECT_EQ(stats.prefetches_used, 1u);  // key 2 was never read: accuracy 1/2
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 0u);
  cache.put(2, "overwritten");  // a put clears the bit: a later read is no prefetch's use
  EXPECT_EQ(cache.get(2), value("overwritten"));
  EXPECT_EQ(cache.stats().prefetches_used, 1u);
}

TEST(LoadingCache, AFullQueueDropsPrefetchesAndRefreshesAndRunsGetAsyncOnTheCaller) {
  SharedManualClock clock;
  std::latch started(1);
  std::latch release(1);
  std::atomic<int> calls{0};
  Cache cache(
      {.refresh_after = 1s, .executor = {.threads = 1, .queue_capacity = 1}},
      [&](const int& key) -> Result {
        ++calls;
        if (key == 100) {
          started.count_down();
          release.wait();
        }
        return value(numbered("v", key));
      },
      {}, {}, clock);
  cache.put(7, "seven");
  EXPECT_EQ(cache.prefetch(100), PrefetchOutcome::kScheduled);
  started.wait();  // the one thread is busy
  EXPECT_EQ(cache.prefetch(100), PrefetchOutcome::kInFlight);
  EXPECT_EQ(cache.prefetch(101), PrefetchOutcome::kScheduled);  // queued: the queue is full
  EXPECT_EQ(cache.prefetch(102), PrefetchOutcome::kDropped);
  clock.advance(1s);
  EXPECT_EQ(cache.get(7), value("seven"));  // its refresh is dropped, the value served
  std::shared_future<Result> future = cache.get_async(103);
  ASSERT_EQ(future.wait_for(0s), std::future_status::ready);  // run here, before returning
  EXPECT_EQ(future.get(), value("v103"));
  LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.prefetches_dropped, 1u);
  EXPECT_EQ(stats.refreshes_dropped, 1u);
  EXPECT_EQ(stats.loads_on_caller, 1u);
  release.count_down();
  cache.wait_idle();
  EXPECT_EQ(calls.load(), 3);                // 100, 101, 103; never 102
  EXPECT_EQ(cache.get(102), value("v102"));  // a dropped prefetch only costs a later miss
}

TEST(LoadingCache, DestructionCancelsQueuedLoadsWithAnErrorAndWaitsForTheRunningOne) {
  SharedManualClock clock;
  std::latch started(1);
  std::latch release(1);
  auto cache = std::make_unique<Cache>(
      LoadingOptions{.executor = {.threads = 1, .queue_capacity = 4}},
      [&](const int& key) -> Result {
        if (key == 1) {
          started.count_down();
          release.wait();
        }
        return value(numbered("v", key));
      },
      BulkLoader<int, std::string>{}, ChangeDetector<std::string>{}, clock);
  std::shared_future<Result> running = cache->get_async(1);
  started.wait();
  std::shared_future<Result> queued = cache->get_async(2);
  EXPECT_EQ(cache->prefetch(3), PrefetchOutcome::kScheduled);
  std::thread destroyer([&] { cache.reset(); });
  // Released with an error as soon as shutdown begins, while the running load still runs.
  const Result& cancelled = queued.get();
  ASSERT_TRUE(cancelled.is_error());
  EXPECT_EQ(cancelled.error().code, LoadErrorCode::kShutDown);
  EXPECT_NE(running.wait_for(0s), std::future_status::ready);
  release.count_down();
  destroyer.join();  // no hang
  EXPECT_EQ(running.get(), value("v1"));
}

// ---- Adaptive TTL --------------------------------------------------------------------------

LoadingOptions adaptive(Duration first_ttl) {
  return {.expire_after_write = first_ttl,
          .adaptive = {.enabled = true, .min_ttl = 1s, .max_ttl = 8s, .increase = 2s}};
}

// A cache with adaptive TTL (first TTL 1 s) whose loader counts its calls and always answers the
// same value: every reload finds it unchanged.
Cache unchanged_on_reload(SharedManualClock& clock, std::atomic<int>& calls) {
  return Cache(
      adaptive(1s),
      [&calls](const int&) -> Result {
        ++calls;
        return value("same");
      },
      {}, {}, clock);
}

// Advances by `step`, gets key 1, and says whether that get called the loader.
struct Stepper {
  SharedManualClock& clock;
  Cache& cache;
  const std::atomic<int>& calls;
  bool loads_after(Duration step) {
    clock.advance(step);
    const int before = calls.load();
    (void)cache.get(1);
    return calls.load() != before;
  }
};

TEST(LoadingCache, AdaptiveTtlGrowsWhileReloadsFindTheValueUnchangedUpToMax) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache = unchanged_on_reload(clock, calls);
  Stepper step{clock, cache, calls};
  EXPECT_TRUE(step.loads_after(0s));  // first TTL 1 s
  for (Duration ttl : {1s, 3s, 5s, 7s, 8s, 8s}) {
    EXPECT_FALSE(step.loads_after(ttl - 1ms)) << ttl.count();  // fresh up to its TTL
    EXPECT_TRUE(step.loads_after(1ms)) << ttl.count();         // stale at it: reloaded
  }
  EXPECT_EQ(cache.stats().ttl_grown, 6u);
}

TEST(LoadingCacheDeathTest, AnAdaptiveMaxTtlLongerThanAnEntryHoldsIsRefused) {
  // An entry keeps its TTL in 32-bit milliseconds: 60 days would have been cut to 49.7.
  LoadingOptions options = adaptive(1s);
  options.adaptive.max_ttl = std::chrono::days(60);
  SharedManualClock clock;
  EXPECT_DEATH(Cache(
                   options, [](const int&) -> Result { return value("v"); }, {}, {}, clock),
               "49.7 days");
  options.adaptive.max_ttl = Duration(UINT32_MAX);  // the longest an entry holds is accepted
  Cache longest(
      options, [](const int&) -> Result { return value("v"); }, {}, {}, clock);
  EXPECT_EQ(longest.get(1), value("v"));
}

TEST(LoadingCache, AdaptiveTtlHalvesWhenReloadsFindAChangeDownToMin) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache(
      adaptive(8s), [&](const int&) -> Result { return value(numbered("v", ++calls)); }, {}, {},
      clock);
  Stepper step{clock, cache, calls};
  EXPECT_TRUE(step.loads_after(0s));  // first TTL 8 s
  for (Duration ttl : {8s, 4s, 2s, 1s, 1s}) {
    EXPECT_FALSE(step.loads_after(ttl - 1ms)) << ttl.count();
    EXPECT_TRUE(step.loads_after(1ms)) << ttl.count();
  }
  EXPECT_EQ(cache.stats().ttl_shrunk, 5u);
}

TEST(LoadingCache, AStaleValueIsNeverServedTheGetWaitsForItsReload) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache(
      adaptive(1s),
      [&](const int&) -> Result {
        if (++calls == 2) return LoadError{LoadErrorCode::kLoaderFailed, "flaky"};
        return value(numbered("v", calls.load()));
      },
      {}, {}, clock);
  EXPECT_EQ(cache.get(1), value("v1"));
  clock.advance(1s);
  EXPECT_TRUE(cache.get(1).is_error());  // the reload failed: its error, not the stale value
  EXPECT_EQ(cache.get(1), value("v3"));  // the stale entry was kept, so this compared v1, v3
  EXPECT_EQ(cache.stats().ttl_shrunk, 1u);
  EXPECT_EQ(cache.stats().misses, 3u);
}

TEST(LoadingCache, AnAdaptiveEntryUnreadForTwoTtlsIsGoneAndStartsOver) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache = unchanged_on_reload(clock, calls);
  Stepper step{clock, cache, calls};
  EXPECT_TRUE(step.loads_after(0s));
  EXPECT_TRUE(step.loads_after(1s));  // TTL now 3 s, kept 6 s
  EXPECT_TRUE(step.loads_after(6s));  // gone: a plain miss, nothing to compare
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.ttl_grown, 1u);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_FALSE(step.loads_after(999ms));  // back at the first TTL, 1 s
  EXPECT_TRUE(step.loads_after(1ms));
}

TEST(LoadingCache, AdaptiveTtlComparesFingerprintsWhenGivenOne) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  // "a1", "a2", ...: unequal strings, one fingerprint (the first letter): unchanged.
  Cache cache(
      adaptive(1s), [&](const int&) -> Result { return value(numbered("a", ++calls)); }, {},
      ChangeDetector<std::string>([](const std::string& v) -> std::uint64_t { return v[0]; }),
      clock);
  Stepper step{clock, cache, calls};
  EXPECT_TRUE(step.loads_after(0s));
  EXPECT_TRUE(step.loads_after(1s));
  EXPECT_FALSE(step.loads_after(2999ms));  // grew to 3 s
  EXPECT_EQ(cache.stats().ttl_grown, 1u);
}

// ---- get_if_present, refresh(key), invalidate_all: Caffeine's names for them -----------------

TEST(LoadingCache, GetIfPresentAnswersWhatIsCachedAndNeverLoads) {
  SharedManualClock clock;
  CountingLoader loader;
  Cache cache({.negative_ttl = 1s}, loader, {}, {}, clock);
  EXPECT_EQ(cache.get_if_present(1), std::nullopt);
  EXPECT_EQ(loader.count(), 0);
  EXPECT_EQ(cache.get(1), value("v1.1"));
  EXPECT_EQ(cache.get_if_present(1), value("v1.1"));
  EXPECT_EQ(loader.count(), 1);
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 2u);  // the absent look, and get's load
}

TEST(LoadingCache, GetIfPresentAnswersACachedNegativeAndNothingForAStaleEntry) {
  SharedManualClock clock;
  Cache negatives(
      {.negative_ttl = 1s}, [](const int&) -> Result { return NotFound{}; }, {}, {}, clock);
  EXPECT_TRUE(negatives.get(1).is_not_found());
  const std::optional<Result> cached = negatives.get_if_present(1);
  ASSERT_TRUE(cached.has_value());
  EXPECT_TRUE(cached->is_not_found());

  CountingLoader loader;
  Cache adaptive_cache(adaptive(1s), loader, {}, {}, clock);
  EXPECT_EQ(adaptive_cache.get(1), value("v1.1"));
  clock.advance(1s);  // stale: kept for its reload's comparison, never served
  EXPECT_EQ(adaptive_cache.get_if_present(1), std::nullopt);
  EXPECT_EQ(loader.count(), 1);
}

TEST(LoadingCache, RefreshReloadsInTheBackgroundWhileGetServesTheCurrentValue) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  std::latch release(1);
  Cache cache(
      {},
      [&](const int&) -> Result {
        if (++calls == 2) release.wait();
        return value(numbered("v", calls.load()));
      },
      {}, {}, clock);
  EXPECT_EQ(cache.get(1), value("v1"));
  std::shared_future<Result> reloaded = cache.refresh(1);
  std::shared_future<Result> again = cache.refresh(1);  // joins the one in flight
  EXPECT_EQ(cache.get(1), value("v1"));                 // not waiting for it
  release.count_down();
  EXPECT_EQ(reloaded.get(), value("v2"));
  EXPECT_EQ(again.get(), value("v2"));
  cache.wait_idle();
  EXPECT_EQ(cache.get(1), value("v2"));
  EXPECT_EQ(calls.load(), 2);
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.refreshes, 1u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 1u);
}

TEST(LoadingCache, AFailedRefreshOfAKeyKeepsItsValueAndRefreshLoadsAnAbsentKey) {
  SharedManualClock clock;
  std::atomic<int> calls{0};
  Cache cache(
      {},
      [&](const int& key) -> Result {
        if (++calls == 2) return LoadError{LoadErrorCode::kLoaderFailed, "flaky"};
        return value(numbered("v", key));
      },
      {}, {}, clock);
  EXPECT_EQ(cache.get(1), value("v1"));
  EXPECT_TRUE(cache.refresh(1).get().is_error());
  cache.wait_idle();
  EXPECT_EQ(cache.get(1), value("v1"));
  EXPECT_EQ(cache.refresh(2).get(), value("v2"));
  cache.wait_idle();
  EXPECT_EQ(cache.get_if_present(2), value("v2"));
  EXPECT_EQ(cache.stats().refresh_failures, 1u);
}

TEST(LoadingCache, InvalidateAllRemovesEveryEntryAndKeepsNoLoadInFlight) {
  SharedManualClock clock;
  std::latch release(1);
  std::atomic<int> calls{0};
  Cache cache(
      {},
      [&](const int& key) -> Result {
        ++calls;
        if (key == 9) release.wait();
        return value(numbered("v", key));
      },
      {}, {}, clock);
  for (int key = 0; key < 5; ++key) (void)cache.get(key);
  std::shared_future<Result> in_flight = cache.get_async(9);
  cache.invalidate_all();
  EXPECT_EQ(cache.size(), 0u);
  release.count_down();
  EXPECT_EQ(in_flight.get(), value("v9"));  // its waiters still get what it loaded
  cache.wait_idle();
  EXPECT_EQ(cache.size(), 0u);  // and the cache did not keep it
  EXPECT_EQ(cache.get_if_present(0), std::nullopt);
  EXPECT_EQ(cache.get(9), value("v9"));  // loads afresh
  EXPECT_EQ(calls.load(), 7);
}

// ---- What a hit costs ---------------------------------------------------------------------

// Counts its reads: the clock is the one per-call cost a hit could add that a profile at this
// size would not show reliably.
class CountingClock {
 public:
  TimePoint now() const noexcept {
    reads_->fetch_add(1, std::memory_order_relaxed);
    return TimePoint(Duration(1'000'000));
  }
  int reads() const { return reads_->load(); }

 private:
  std::shared_ptr<std::atomic<int>> reads_ = std::make_shared<std::atomic<int>>(0);
};

TEST(LoadingCache, AHitWithEverythingOffReadsTheClockOnceAsShardedCacheDoes) {
  CountingClock clock;
  LoadingCache<int, int, TtlOnly, CountingClock> cache(
      {}, [](const int& key) -> LoadResult<int> { return key * 2; }, {}, {}, clock);
  ASSERT_EQ(cache.get(1), LoadResult<int>(2));
  const int before = clock.reads();
  ASSERT_EQ(cache.get(1), LoadResult<int>(2));
  EXPECT_EQ(clock.reads() - before, 1);

  CountingClock plain_clock;
  ShardedCache<int, int, TtlOnly, CountingClock> plain({}, 16, plain_clock);
  (void)plain.put(1, 2);
  const int plain_before = plain_clock.reads();
  ASSERT_EQ(plain.get(1), 2);
  EXPECT_EQ(plain_clock.reads() - plain_before, 1);
}

TEST(LoadingCache, AHitWithRefreshOnReadsTheClockOnceMore) {
  CountingClock clock;
  LoadingCache<int, int, TtlOnly, CountingClock> cache(
      {.refresh_after = 1s}, [](const int& key) -> LoadResult<int> { return key * 2; }, {}, {},
      clock);
  ASSERT_EQ(cache.get(1), LoadResult<int>(2));
  const int before = clock.reads();
  ASSERT_EQ(cache.get(1), LoadResult<int>(2));
  EXPECT_EQ(clock.reads() - before, 2);
}

}  // namespace
}  // namespace chronocache
