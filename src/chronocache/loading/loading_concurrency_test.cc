// Pins LoadingCache under threads (loading_cache.h): single-flight (1 000 threads missing one key
// cause one load; get_async and get_all join the same flight), an error reaching every waiter,
// a put or invalidate during a load winning over the load's result, and a get joining a
// prefetch in flight counting it used, and every operation at once (get, get_if_present, put,
// invalidate, invalidate_all, prefetch, refresh) answering right. Ordering is by latches and by
// waiting for counters (stats().misses + joins: each waiter is counted under its stripe's lock
// before it waits), never by sleeping. Runs under TSan too.
#include "chronocache/loading/loading_cache.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <latch>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "chronocache/loading/load_result.h"
#include "chronocache/loading/loading_options.h"
#include "chronocache/policy/ttl_only.h"

#include <gtest/gtest.h>

#include "testing/numbered.h"
#include "testing/shared_manual_clock.h"

namespace chronocache {
namespace {

using test_support::numbered;
using test_support::SharedManualClock;
using Cache = LoadingCache<int, std::string, TtlOnly, SharedManualClock>;
using Result = LoadResult<std::string>;

Result value(std::string v) { return Result(std::move(v)); }

// Until `waiters` gets have waited for a load: run their own (misses) or joined one (joins).
template <class CacheT>
void wait_for_waiters(CacheT& cache, std::uint64_t waiters) {
  for (;;) {
    const LoadingStats stats = cache.stats();
    if (stats.misses + stats.joins >= waiters) return;
    std::this_thread::yield();
  }
}

TEST(LoadingCacheThreads, AThousandThreadsMissingOneKeyCauseExactlyOneLoad) {
  constexpr int kThreads = 1000;
  SharedManualClock clock;
  std::latch all_called(kThreads);
  std::atomic<int> loads{0};
  Cache* cache_ptr = nullptr;
  Cache cache(
      {},
      [&](const int&) -> Result {
        ++loads;
        all_called.wait();                       // every thread has called get ...
        wait_for_waiters(*cache_ptr, kThreads);  // ... and every one of them is waiting on us
        return value("loaded");
      },
      {}, {}, clock);
  cache_ptr = &cache;
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      all_called.count_down();
      if (cache.get(42) == value("loaded")) ++right;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(right.load(), kThreads);
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.loads, 1u);
  // As Caffeine counts them: the thread that loaded missed, the others hit after waiting.
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.joins, static_cast<std::uint64_t>(kThreads - 1));
  EXPECT_EQ(stats.hits, static_cast<std::uint64_t>(kThreads - 1));
}

TEST(LoadingCacheThreads, GetAsyncAndGetShareOneFlight) {
  SharedManualClock clock;
  std::latch release(1);
  std::atomic<int> loads{0};
  Cache cache(
      {},
      [&](const int&) -> Result {
        ++loads;
        release.wait();
        return value("shared");
      },
      {}, {}, clock);
  std::shared_future<Result> first = cache.get_async(1);  // loads on the executor
  std::shared_future<Result> second = cache.get_async(1);
  std::thread getter([&] { EXPECT_EQ(cache.get(1), value("shared")); });
  wait_for_waiters(cache, 3);
  release.count_down();
  getter.join();
  EXPECT_EQ(first.get(), value("shared"));
  EXPECT_EQ(second.get(), value("shared"));
  EXPECT_EQ(loads.load(), 1);
}

TEST(LoadingCacheThreads, GetAllJoinsAGetsLoadAndLoadsOnlyTheRest) {
  SharedManualClock clock;
  std::latch started(1);
  std::latch release(1);
  std::atomic<int> single_loads{0};
  std::vector<int> bulk_keys;
  Cache cache(
      {},
      [&](const int& key) -> Result {
        ++single_loads;
        started.count_down();
        release.wait();
        return value(numbered("single", key));
      },
      [&](std::span<const int> keys) {
        bulk_keys.assign(keys.begin(), keys.end());
        std::vector<Result> out;
        for (int key : keys) out.push_back(value(numbered("bulk", key)));
        return out;
      },
      {}, clock);
  std::thread getter([&] { EXPECT_EQ(cache.get(1), value("single1")); });
  started.wait();
  std::vector<Result> got;
  std::thread bulk([&] {
    const std::vector<int> keys{1, 2};
    got = cache.get_all(keys);
  });
  wait_for_waiters(cache, 3);  // the getter's, and get_all's two
  release.count_down();
  getter.join();
  bulk.join();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], value("single1"));  // joined, not loaded twice
  EXPECT_EQ(got[1], value("bulk2"));
  EXPECT_EQ(bulk_keys, (std::vector<int>{2}));
  EXPECT_EQ(single_loads.load(), 1);
}

TEST(LoadingCacheThreads, ALoadErrorReachesEveryWaiterAndIsNotCached) {
  constexpr int kWaiters = 8;
  SharedManualClock clock;
  std::latch release(1);
  std::atomic<int> loads{0};
  Cache cache(
      {.negative_ttl = std::chrono::seconds(10)},
      [&](const int&) -> Result {
        if (++loads == 1) {
          release.wait();
          return LoadError{LoadErrorCode::kLoaderFailed, "down"};
        }
        return value("back");
      },
      {}, {}, clock);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  threads.reserve(kWaiters);
  for (int i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&] {
      const Result result = cache.get(5);
      if (result.is_error() && result.error().message == "down") ++errors;
    });
  }
  wait_for_waiters(cache, kWaiters);
  release.count_down();
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), kWaiters);
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(cache.get(5), value("back"));  // the error was not cached
}

// The rule: a put during a load wins. The load's waiters get what it loaded (as if it finished
// just before the put), and the cache keeps the put's value.
TEST(LoadingCacheThreads, APutDuringALoadWinsOverTheLoadsResult) {
  SharedManualClock clock;
  std::latch started(1);
  std::latch release(1);
  std::atomic<int> loads{0};
  Cache cache(
      {},
      [&](const int&) -> Result {
        ++loads;
        started.count_down();
        release.wait();
        return value("loaded");
      },
      {}, {}, clock);
  Result waited = value("");
  std::thread getter([&] { waited = cache.get(1); });
  started.wait();
  cache.put(1, "put");
  EXPECT_EQ(cache.get(1), value("put"));  // no wait: the put is there
  release.count_down();
  getter.join();
  EXPECT_EQ(waited, value("loaded"));
  EXPECT_EQ(cache.get(1), value("put"));  // not overwritten by the load
  EXPECT_EQ(loads.load(), 1);
}

TEST(LoadingCacheThreads, AnInvalidateDuringALoadKeepsItsResultOutOfTheCache) {
  SharedManualClock clock;
  std::latch started(1);
  std::latch release(1);
  std::atomic<int> loads{0};
  Cache cache(
      {},
      [&](const int&) -> Result {
        if (++loads == 1) {
          started.count_down();
          release.wait();
          return value("before invalidate");
        }
        return value("after invalidate");
      },
      {}, {}, clock);
  std::shared_future<Result> first = cache.get_async(1);
  started.wait();
  cache.invalidate(1);
  // A get after the invalidate does not join the detached load: it starts its own.
  EXPECT_EQ(cache.get(1), value("after invalidate"));
  release.count_down();
  EXPECT_EQ(first.get(), value("before invalidate"));
  cache.wait_idle();
  EXPECT_EQ(cache.get(1), value("after invalidate"));
  EXPECT_EQ(loads.load(), 2);
}

TEST(LoadingCacheThreads, AGetJoiningAPrefetchInFlightCountsItUsed) {
  SharedManualClock clock;
  std::latch started(1);
  std::latch release(1);
  std::atomic<int> loads{0};
  Cache cache(
      {},
      [&](const int&) -> Result {
        ++loads;
        started.count_down();
        release.wait();
        return value("prefetched");
      },
      {}, {}, clock);
  ASSERT_EQ(cache.prefetch(9), PrefetchOutcome::kScheduled);
  started.wait();
  std::thread getter([&] { EXPECT_EQ(cache.get(9), value("prefetched")); });
  wait_for_waiters(cache, 1);
  release.count_down();
  getter.join();
  cache.wait_idle();
  EXPECT_EQ(cache.get(9), value("prefetched"));  // stored without the bit: not counted twice
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.prefetches_issued, 1u);
  EXPECT_EQ(stats.prefetches_used, 1u);
  EXPECT_EQ(loads.load(), 1);
  // Neither get ran a load: the first waited for the prefetch (a join), the second read it.
  EXPECT_EQ(stats.misses, 0u);
  EXPECT_EQ(stats.joins, 1u);
  EXPECT_EQ(stats.hits, 2u);
}

// Many threads, many keys, reads beside puts, invalidates and prefetches: no race (TSan), and
// every answer is one the loader or a put produced for that key.
TEST(LoadingCacheThreads, MixedTrafficStaysConsistent) {
  SharedManualClock clock;
  Cache cache(
      {.refresh_after = std::chrono::milliseconds(5),
       .executor = {.threads = 2, .queue_capacity = 8}},
      [](const int& key) -> Result {
        if (key % 7 == 0) return NotFound{};
        return value(numbered("k", key));
      },
      {}, {}, clock);
  std::atomic<int> wrong{0};
  const auto right = [](const Result& result, int key) {
    return result.has_value() ? result.value() == numbered("k", key)
                              : result.is_not_found() && key % 7 == 0;
  };
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const int key = (i * 13 + t) % 64;
        switch ((i + t) % 11) {
          case 0:
            cache.put(key, numbered("k", key));
            break;
          case 1:
            cache.invalidate(key);
            break;
          case 2:
            (void)cache.prefetch(key + 1);
            break;
          case 3:
            if (t == 0) clock.advance(std::chrono::milliseconds(1));
            break;
          case 4:
            if (i % 50 == 4) cache.invalidate_all();
            break;
          case 5: {
            const std::optional<Result> cached = cache.get_if_present(key);
            if (cached && !right(*cached, key)) ++wrong;
            break;
          }
          case 6:
            if (!right(cache.refresh(key).get(), key)) ++wrong;
            break;
          default:
            if (!right(cache.get(key), key)) ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  cache.wait_idle();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace chronocache
