// Pins predictive prefetch in LoadingCache (LoadingOptions::prefetch; loading_cache.h): a learned
// sequence is prefetched ahead of its reader, prefetch off issues nothing, the per-caller stream
// overload keeps two clients' sequences apart, read-ahead follows a chain as far as it is likely
// to be read and moves with its reader, a bundled miss loads what it predicts in its own bulk call,
// and several threads reading their own sequences at once keep the stats consistent (TSan:
// CMakePresets.json and make build-tsan). Background work is waited for with wait_idle() or a
// latch, never a sleep.
#include <atomic>
#include <cstddef>
#include <initializer_list>
#include <latch>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "chronocache/loading/load_result.h"
#include "chronocache/loading/loading_cache.h"
#include "chronocache/loading/loading_options.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/predict/access_stream.h"

#include <gtest/gtest.h>

#include "testing/shared_manual_clock.h"

namespace chronocache {
namespace {

using test_support::SharedManualClock;
using Cache = LoadingCache<int, std::string, TtlOnly, SharedManualClock>;
using Result = LoadResult<std::string>;

// Counts loads, and apart the ones run on the thread that built it (a get's synchronous loads;
// prefetches run on the executor's threads).
struct TrackingLoader {
  struct Counts {
    std::atomic<int> loads{0};
    std::atomic<int> on_caller{0};
    std::thread::id caller = std::this_thread::get_id();
  };
  std::shared_ptr<Counts> counts = std::make_shared<Counts>();
  Result operator()(const int& key) const {
    ++counts->loads;
    if (std::this_thread::get_id() == counts->caller) ++counts->on_caller;
    return Result(std::to_string(key));
  }
};

// min_count 1: a transition seen once is predicted, so one pass teaches the sequence (the
// default, 2, needs two; the model's own tests pin that).
LoadingOptions prefetching(std::size_t depth = 1) {
  return {.executor = {.threads = 2, .queue_capacity = 64},
          .prefetch = {.enabled = true, .model = {.rows = 1024, .min_count = 1}, .depth = depth}};
}

constexpr int kChain = 10;

// One pass teaches the chain (no key is predicted on the first pass, so it loads key by key);
// then every key is invalidated, ready for a second pass.
void learn_chain_then_forget_it(Cache& cache) {
  for (int key = 0; key < kChain; ++key) (void)cache.get(key);
  cache.wait_idle();
  for (int key = 0; key < kChain; ++key) cache.invalidate(key);
}

TEST(LoadingPrefetch, TheSecondPassOfASequenceHitsKeysItNeverLoadedSynchronously) {
  SharedManualClock clock;
  TrackingLoader loader;
  Cache cache(prefetching(), loader, {}, {}, clock);
  for (int key = 0; key < kChain; ++key) EXPECT_EQ(cache.get(key), Result(std::to_string(key)));
  cache.wait_idle();
  for (int key = 0; key < kChain; ++key) cache.invalidate(key);
  const int sync_before = loader.counts->on_caller.load();
  EXPECT_EQ(sync_before, kChain);  // the first pass loaded everything itself

  for (int key = 0; key < kChain; ++key) {
    EXPECT_EQ(cache.get(key), Result(std::to_string(key)));
    cache.wait_idle();  // the next key's prefetch has landed before it is read
  }
  // Only the first key of the pass was loaded by its get; every later one was prefetched.
  EXPECT_EQ(loader.counts->on_caller.load() - sync_before, 1);
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.prefetches_issued, static_cast<std::uint64_t>(kChain - 1));
  EXPECT_EQ(stats.prefetches_used, static_cast<std::uint64_t>(kChain - 1));
  EXPECT_EQ(stats.prefetches_dropped, 0u);
  EXPECT_EQ(stats.misses, static_cast<std::uint64_t>(kChain + 1));
  EXPECT_EQ(stats.hits, static_cast<std::uint64_t>(kChain - 1));
}

TEST(LoadingPrefetch, OffItIssuesNothingAndEveryMissLoadsOnTheCaller) {
  SharedManualClock clock;
  TrackingLoader loader;
  Cache cache({}, loader, {}, {}, clock);
  for (int pass = 0; pass < 2; ++pass) {
    for (int key = 0; key < kChain; ++key) (void)cache.get(key);
    cache.wait_idle();
    for (int key = 0; key < kChain; ++key) cache.invalidate(key);
  }
  AccessStream<int> stream;  // the overload is get(key) when prefetch is off
  for (int key = 0; key < kChain; ++key) (void)cache.get(key, stream);
  cache.wait_idle();
  EXPECT_FALSE(stream.has_previous());
  EXPECT_EQ(loader.counts->on_caller.load(), 3 * kChain);
  EXPECT_EQ(cache.stats().prefetches_issued, 0u);
}

TEST(LoadingPrefetch, AStreamPerClientKeepsInterleavedSequencesApart) {
  SharedManualClock clock;
  TrackingLoader loader;
  Cache cache(prefetching(), loader, {}, {}, clock);
  // Two clients served by one thread, their reads interleaved: 0, 100, 1, 101, ...
  const auto pass = [&](AccessStream<int>& a, AccessStream<int>& b) {
    for (int i = 0; i < kChain; ++i) {
      (void)cache.get(i, a);
      cache.wait_idle();
      (void)cache.get(100 + i, b);
      cache.wait_idle();
    }
  };
  AccessStream<int> a, b;
  pass(a, b);
  for (int i = 0; i < kChain; ++i) {
    cache.invalidate(i);
    cache.invalidate(100 + i);
  }
  const int sync_before = loader.counts->on_caller.load();
  a.reset();
  b.reset();
  pass(a, b);
  // Each client's first key only; one shared stream would have learned 0 -> 100 -> 1 instead.
  EXPECT_EQ(loader.counts->on_caller.load() - sync_before, 2);
  const LoadingStats stats = cache.stats();
  EXPECT_EQ(stats.prefetches_used, stats.prefetches_issued);
}

TEST(LoadingPrefetch, ReadAheadPrefetchesDepthKeysOfAChainFromOneRead) {
  SharedManualClock clock;
  TrackingLoader loader;
  Cache cache(prefetching(/*depth=*/3), loader, {}, {}, clock);
  learn_chain_then_forget_it(cache);
  const LoadingStats before = cache.stats();
  (void)cache.get(0);
  cache.wait_idle();
  const LoadingStats after = cache.stats();
  EXPECT_EQ(after.prefetches_issued - before.prefetches_issued, 3u);  // 1, 2 and 3
  const int loads = loader.counts->loads.load();
  for (int key = 1; key <= 3; ++key) EXPECT_EQ(cache.get(key), Result(std::to_string(key)));
  cache.wait_idle();
  EXPECT_EQ(cache.stats().prefetches_used - before.prefetches_used, 3u);
  // Each of those reads prefetched further ahead (4, 5, 6), none of them loaded again.
  EXPECT_EQ(loader.counts->loads.load() - loads, 3);
}

// 0 -> 1 always, 1 -> 2 three times in four, 2 -> 3 three times in four: from 0 the chain 1, 2, 3
// is 1, 0.75 and 0.5625 likely to be read, and only the first two reach min_confidence (0.6),
// though every step alone does.
TEST(LoadingPrefetch, ReadAheadStopsWhereTheChainsProbabilityFallsBelowMinConfidence) {
  SharedManualClock clock;
  TrackingLoader loader;
  Cache cache(prefetching(PrefetchOptions{}.depth), loader, {}, {}, clock);
  ASSERT_GE(PrefetchOptions{}.depth, 3u);
  AccessStream<int> stream;
  const auto read = [&](std::initializer_list<int> keys) {
    stream.reset();
    for (const int key : keys) (void)cache.get(key, stream);
    cache.wait_idle();
  };
  for (int pass = 0; pass < 3; ++pass) read({0, 1, 2, 3});
  read({0, 1, 7});
  read({2, 9});
  for (const int key : {0, 1, 2, 3, 7, 9}) cache.invalidate(key);

  const LoadingStats before = cache.stats();
  const int loads_before = loader.counts->loads.load();
  read({0});
  EXPECT_EQ(cache.stats().prefetches_issued - before.prefetches_issued, 2u);  // 1 and 2
  EXPECT_EQ(loader.counts->loads.load() - loads_before, 3);                   // 0, 1, 2
  const int sync_before = loader.counts->on_caller.load();
  EXPECT_EQ(cache.get(3, stream), Result("3"));  // not read ahead: loaded by its get
  EXPECT_EQ(loader.counts->on_caller.load() - sync_before, 1);
}

// A reader that follows the chain moves it: each read asks again only for the key it expects
// next (which a lost prefetch, here an invalidation, leaves absent) and reads one key further.
TEST(LoadingPrefetch, AReadOnTheChainAsksAgainForTheNextKeyAndExtendsItsFarEnd) {
  SharedManualClock clock;
  TrackingLoader loader;
  Cache cache(prefetching(/*depth=*/3), loader, {}, {}, clock);
  learn_chain_then_forget_it(cache);
  const auto issued_by = [&](int key) {
    const std::uint64_t before = cache.stats().prefetches_issued;
    (void)cache.get(key);
    cache.wait_idle();
    return cache.stats().prefetches_issued - before;
  };
  EXPECT_EQ(issued_by(0), 3u);  // 1, 2 and 3: the chain starts
  cache.invalidate(3);          // a prefetch lost before its read
  EXPECT_EQ(issued_by(1), 1u);  // 4 only: 2, expected next, is there, and 3 is not asked for yet
  const int sync_before = loader.counts->on_caller.load();
  EXPECT_EQ(issued_by(2), 2u);  // 3, expected next and absent, again; and 5
  EXPECT_EQ(issued_by(3), 1u);  // 6
  EXPECT_EQ(loader.counts->on_caller.load(), sync_before);  // 2 and 3 were there when read
  EXPECT_EQ(cache.get(7), Result("7"));  // off the chain (4 was expected): it starts afresh
  cache.wait_idle();
  EXPECT_EQ(loader.counts->on_caller.load() - sync_before, 1);
}

// ---- prefetch.bundle ------------------------------------------------------------------------

// A bulk loader that records each call's keys (called on the getting thread only, here).
struct RecordingBulkLoader {
  std::shared_ptr<std::vector<std::vector<int>>> calls =
      std::make_shared<std::vector<std::vector<int>>>();
  std::vector<Result> operator()(std::span<const int> keys) const {
    calls->emplace_back(keys.begin(), keys.end());
    std::vector<Result> results;
    results.reserve(keys.size());
    for (const int key : keys) results.emplace_back(std::to_string(key));
    return results;
  }
};

LoadingOptions bundling(std::size_t depth) {
  LoadingOptions options = prefetching(depth);
  options.prefetch.bundle = true;
  return options;
}

TEST(LoadingPrefetch, ABundledMissLoadsItsPredictionsInItsOwnBulkCallBeforeReturning) {
  SharedManualClock clock;
  TrackingLoader loader;
  RecordingBulkLoader bulk;
  Cache cache(bundling(/*depth=*/3), loader, bulk, {}, clock);
  learn_chain_then_forget_it(cache);
  EXPECT_TRUE(bulk.calls->empty());
  const int loads_before = loader.counts->loads.load();
  const LoadingStats before = cache.stats();

  EXPECT_EQ(cache.get(0), Result("0"));
  // No wait: the predicted keys were stored by the call that loaded key 0.
  ASSERT_EQ(bulk.calls->size(), 1u);
  EXPECT_EQ(bulk.calls->back(), (std::vector<int>{0, 1, 2, 3}));
  LoadingStats after = cache.stats();
  EXPECT_EQ(after.prefetches_issued - before.prefetches_issued, 3u);
  EXPECT_EQ(after.prefetches_bundled - before.prefetches_bundled, 3u);

  for (int key = 1; key <= 3; ++key) EXPECT_EQ(cache.get(key), Result(std::to_string(key)));
  cache.wait_idle();
  after = cache.stats();
  EXPECT_EQ(after.misses - before.misses, 1u);  // key 0 only
  EXPECT_EQ(after.hits - before.hits, 3u);
  EXPECT_EQ(after.prefetches_used - before.prefetches_used, 3u);
  // Those hits prefetched further ahead (4, 5, 6) in the background, through the loader: a hit
  // has no load to bundle with.
  EXPECT_EQ(bulk.calls->size(), 1u);
  EXPECT_EQ(loader.counts->loads.load() - loads_before, 3);
  EXPECT_EQ(after.prefetches_bundled - before.prefetches_bundled, 3u);
}

TEST(LoadingPrefetch, ABundleLeavesOutKeysAlreadyCached) {
  SharedManualClock clock;
  TrackingLoader loader;
  RecordingBulkLoader bulk;
  Cache cache(bundling(/*depth=*/3), loader, bulk, {}, clock);
  learn_chain_then_forget_it(cache);
  EXPECT_EQ(cache.get(2), Result("2"));  // predicts 3, 4, 5 and loads them with 2
  ASSERT_EQ(bulk.calls->size(), 1u);
  EXPECT_EQ(bulk.calls->back(), (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(cache.get(0), Result("0"));
  ASSERT_EQ(bulk.calls->size(), 2u);
  EXPECT_EQ(bulk.calls->back(), (std::vector<int>{0, 1}));  // 2 and 3 are there
}

TEST(LoadingPrefetch, BundleWithoutABulkLoaderPrefetchesOnTheExecutorAsBefore) {
  SharedManualClock clock;
  TrackingLoader loader;
  Cache cache(bundling(/*depth=*/3), loader, {}, {}, clock);
  learn_chain_then_forget_it(cache);
  const int sync_before = loader.counts->on_caller.load();
  (void)cache.get(0);
  cache.wait_idle();
  EXPECT_EQ(loader.counts->on_caller.load() - sync_before, 1);  // 1, 2, 3 ran on the executor
  const LoadingStats stats = cache.stats();
  EXPECT_GE(stats.prefetches_issued, 3u);
  EXPECT_EQ(stats.prefetches_bundled, 0u);
}

// A bulk loader safe to call from several threads: it counts the keys it loaded.
struct CountingBulkLoader {
  std::shared_ptr<std::atomic<int>> keys_loaded = std::make_shared<std::atomic<int>>(0);
  std::vector<Result> operator()(std::span<const int> keys) const {
    *keys_loaded += static_cast<int>(keys.size());
    std::vector<Result> results;
    results.reserve(keys.size());
    for (const int key : keys) results.emplace_back(std::to_string(key));
    return results;
  }
};

// kThreads threads each read their own chain kPasses times, invalidating it after each pass;
// every answer must be right and the stats must add up (under TSan: no race).
void read_own_sequences_from_threads(LoadingOptions options, bool with_bulk_loader) {
  SharedManualClock clock;
  TrackingLoader loader;
  CountingBulkLoader bulk;
  Cache cache(
      options, loader,
      with_bulk_loader ? BulkLoader<int, std::string>(bulk) : BulkLoader<int, std::string>(), {},
      clock);
  constexpr int kThreads = 4;
  constexpr int kPasses = 20;
  std::latch start(kThreads);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      AccessStream<int> own;  // half the threads use their own stream, half the thread's
      for (int pass = 0; pass < kPasses; ++pass) {
        for (int i = 0; i < kChain; ++i) {
          const int key = t * 1000 + i;
          const Result r = t % 2 == 0 ? cache.get(key) : cache.get(key, own);
          if (!(r == Result(std::to_string(key)))) ++wrong;
        }
        for (int i = 0; i < kChain; ++i) cache.invalidate(t * 1000 + i);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  cache.wait_idle();
  EXPECT_EQ(wrong.load(), 0);
  const LoadingStats stats = cache.stats();
  EXPECT_GT(stats.prefetches_issued, 0u);
  EXPECT_LE(stats.prefetches_used, stats.prefetches_issued);
  EXPECT_EQ(stats.hits + stats.misses, static_cast<std::uint64_t>(kThreads * kPasses * kChain));
  EXPECT_EQ(stats.loads,
            static_cast<std::uint64_t>(loader.counts->loads.load() + bulk.keys_loaded->load()));
  if (with_bulk_loader) {
    EXPECT_GT(stats.prefetches_bundled, 0u);
  }
}

TEST(LoadingPrefetch, ThreadsReadingTheirOwnSequencesKeepStatsConsistent) {
  read_own_sequences_from_threads(prefetching(/*depth=*/2), /*with_bulk_loader=*/false);
}

TEST(LoadingPrefetch, ThreadsReadingTheirOwnSequencesKeepStatsConsistentBundled) {
  read_own_sequences_from_threads(bundling(/*depth=*/2), /*with_bulk_loader=*/true);
}

}  // namespace
}  // namespace chronocache
