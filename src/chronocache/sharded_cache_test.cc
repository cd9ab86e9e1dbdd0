// Pins ShardedCache (sharded_cache.h): the semantics of Cache, reached through a shard picked by
// the key's hash; totals (size, stats) summed over shards; max_entries split across them; and
// correctness with several threads at once, readers beside writers, for every policy (this file
// runs under ASan, TSan and Release).
#include "chronocache/sharded_cache.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "chronocache/base/compact_int_hash.h"
#include "chronocache/base/cpu_relax.h"
#include "chronocache/base/hash.h"
#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"
#include "chronocache/capture.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/concurrency/read_mostly_lock.h"
#include "chronocache/options.h"
#include "chronocache/policy/lfu.h"
#include "chronocache/policy/lru.h"
#include "chronocache/policy/s3fifo.h"
#include "chronocache/policy/sieve.h"
#include "chronocache/policy/switchable_policy.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/policy/w_tinylfu.h"

#include <gtest/gtest.h>

#include "testing/policy_names.h"
#include "testing/shared_manual_clock.h"

namespace chronocache {
namespace {

using namespace std::chrono_literals;

using Sharded = ShardedCache<int, int, TtlOnly, ManualClock>;
using ShardedLru = ShardedCache<int, int, Lru, ManualClock>;

TEST(ShardedCache, ShardCountIsRoundedUpToAPowerOfTwo) {
  EXPECT_EQ(Sharded({}, 0).shard_count(), 1u);
  EXPECT_EQ(Sharded({}, 1).shard_count(), 1u);
  EXPECT_EQ(Sharded({}, 5).shard_count(), 8u);
  EXPECT_EQ(Sharded({}, 16).shard_count(), 16u);
  EXPECT_EQ(Sharded().shard_count(), 16u);
}

TEST(ShardedCache, PutGetEraseAndContainsReachTheRightShard) {
  Sharded cache({}, 8);
  for (int key = 0; key < 10'000; ++key)
    ASSERT_EQ(cache.put(key, key * 2, 1h), PutOutcome::kInserted);
  for (int key = 0; key < 10'000; ++key) ASSERT_EQ(cache.get(key), key * 2) << key;
  EXPECT_EQ(cache.put(7, 70, 1h), PutOutcome::kReplaced);
  EXPECT_EQ(cache.get(7), 70);
  EXPECT_TRUE(cache.contains(9));
  EXPECT_TRUE(cache.erase(9));
  EXPECT_FALSE(cache.erase(9));
  EXPECT_FALSE(cache.contains(9));
  EXPECT_EQ(cache.get(10'001), std::nullopt);
  EXPECT_EQ(cache.put(11, 0, 0s), PutOutcome::kExpiredOnArrival);
  EXPECT_FALSE(cache.contains(11));
}

TEST(ShardedCache, EntriesExpireExactlyAtTheirDeadline) {
  Sharded cache({}, 4);
  for (int key = 0; key < 100; ++key) cache.put(key, key, 5s);
  cache.put(1000, 1000);
  cache.clock().advance(4999ms);
  for (int key = 0; key < 100; ++key) ASSERT_TRUE(cache.contains(key)) << key;
  EXPECT_EQ(cache.get(50), 50);
  cache.clock().advance(1ms);
  for (int key = 0; key < 100; ++key) ASSERT_FALSE(cache.contains(key)) << key;
  EXPECT_EQ(cache.get(50), std::nullopt);
  EXPECT_EQ(cache.get(1000), 1000);
}

TEST(ShardedCache, SubMillisecondAndHugeTtlsBehaveAsInCache) {
  Sharded cache({}, 4);
  cache.put(1, 1, 1us);
  cache.put(2, 2, std::chrono::seconds::max());
  cache.put(3, 3, -1s);
  EXPECT_TRUE(cache.contains(1));
  EXPECT_FALSE(cache.contains(3));
  cache.clock().advance(1ms);
  EXPECT_FALSE(cache.contains(1));
  cache.clock().advance(std::chrono::days(10'000));
  EXPECT_EQ(cache.get(2), 2);
}

TEST(ShardedCache, SizeSumsEveryShard) {
  Sharded cache({}, 16);
  for (int key = 0; key < 5000; ++key) cache.put(key, key);
  EXPECT_EQ(cache.size(), 5000u);
  for (int key = 0; key < 5000; key += 5) cache.erase(key);
  EXPECT_EQ(cache.size(), 4000u);
}

// size() must count live entries at the cache's own clock: a shard must not judge deadlines by a
// clock of its own that the test (or a host) does not advance.
TEST(ShardedCache, SizeCountsLiveEntriesOnlyAfterTheClockMoves) {
  Sharded cache({}, 4);
  for (int key = 0; key < 100; ++key) cache.put(key, key, 1s);
  for (int key = 100; key < 200; ++key) cache.put(key, key);
  EXPECT_EQ(cache.size(), 200u);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.size(), 100u);
}

TEST(ShardedCache, ReclaimExpiredSweepsEveryShard) {
  Sharded cache({}, 8);
  for (int key = 0; key < 1000; ++key) cache.put(key, key, key < 600 ? 1s : 1h);
  cache.clock().advance(1s);
  const std::size_t budget = std::size_t{1} << 30;
  EXPECT_EQ(cache.reclaim_expired(budget) + cache.reclaim_expired(budget), 600u);
  EXPECT_EQ(cache.stats().expired, 600u);
  for (int key = 600; key < 1000; ++key) ASSERT_EQ(cache.get(key), key);
}

TEST(ShardedCache, TheVolatileCountSumsEveryShard) {
  ShardedCache<int, int, TtlOnly, ManualClock, DefaultHash<int>, std::equal_to<>,
               CacheFeatures{.count_volatile = true}>
      cache({}, 8);
  for (int key = 0; key < 1000; ++key) cache.put(key, key, 1s);
  for (int key = 1000; key < 1500; ++key) cache.put(key, key);
  EXPECT_EQ(cache.volatile_stored_size(), 1000u);
  for (int key = 0; key < 100; ++key) cache.erase(key);
  for (int key = 100; key < 200; ++key) cache.put(key, key);  // the TTL dropped
  EXPECT_EQ(cache.volatile_stored_size(), 800u);
  cache.clock().advance(1s);
  const std::size_t budget = std::size_t{1} << 30;
  cache.reclaim_expired(budget);
  cache.reclaim_expired(budget);
  EXPECT_EQ(cache.volatile_stored_size(), 0u);
}

TEST(ShardedCache, StatsSumEveryShard) {
  Sharded cache({}, 8);
  for (int key = 0; key < 100; ++key) cache.put(key, key, 1s);
  for (int key = 0; key < 150; ++key) (void)cache.get(key);
  EXPECT_EQ(cache.stats().hits, 100u);
  EXPECT_EQ(cache.stats().misses, 50u);
  cache.clock().advance(1s);
  for (int key = 0; key < 100; ++key) (void)cache.get(key);
  EXPECT_EQ(cache.stats().misses, 150u);
  // Reads write nothing: the expired entries stay until a sweep (or a write) meets them.
  EXPECT_EQ(cache.stats().expired, 0u);
  EXPECT_EQ(cache.reclaim_expired(std::size_t{1} << 30), 100u);
  EXPECT_EQ(cache.stats().expired, 100u);
}

TEST(ShardedCache, AReadReportsAnExpiredEntryMissingAndAWriteRemovesIt) {
  Sharded cache({}, 1);
  cache.put(1, 10, 1s);
  cache.clock().advance(1s);
  EXPECT_EQ(cache.get(1), std::nullopt);
  EXPECT_FALSE(cache.contains(1));
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.stats().expired, 0u);
  EXPECT_FALSE(cache.erase(1));  // the write meets it, counts it expired, removes it
  EXPECT_EQ(cache.stats().expired, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

// Hits that readers logged reach an Lru before the next write decides a victim; a Sieve's
// visited bit is set by the reader itself. Either way the entry just read survives.
TEST(ShardedCache, ReadHitsReachThePolicyBeforeTheNextEviction) {
  ShardedLru lru({.max_entries = 4}, 1);
  ShardedCache<int, int, Sieve, ManualClock> sieve({.max_entries = 4}, 1);
  for (int key = 0; key < 4; ++key) {
    lru.put(key, key, 1h);
    sieve.put(key, key, 1h);
  }
  EXPECT_EQ(lru.get(0), 0);
  EXPECT_EQ(sieve.get(0), 0);
  lru.put(4, 4, 1h);
  sieve.put(4, 4, 1h);
  EXPECT_TRUE(lru.contains(0));
  EXPECT_FALSE(lru.contains(1));
  EXPECT_TRUE(sieve.contains(0));
  EXPECT_FALSE(sieve.contains(1));
}

// More hits than a stripe's log holds: the reader that fills it replays the logs itself (no
// writer is there), so the Lru order still follows every read up to the last.
TEST(ShardedCache, AFullReadLogIsReplayedByTheReaderThatFilledIt) {
  ShardedLru cache({.max_entries = 64}, 1);
  for (int key = 0; key < 64; ++key) cache.put(key, key, 1h);
  // Reads 0..62 in order, each once, then 63 is the least recent.
  for (int key = 0; key < 63; ++key) ASSERT_EQ(cache.get(key), key);
  for (int key = 64; key < 64 + 40; ++key) cache.put(key, key, 1h);
  // The 40 new keys evicted the 40 least recent: the keys whose hit was dropped (the read that
  // finds its log full drops its hit, then replays: 11, 23, 35, 47, 59 with an 11-entry log) and
  // the unread 63, then the oldest reads 0..10, 12..22, 24..34, 36.
  EXPECT_FALSE(cache.contains(63));
  std::size_t survivors = 0;
  for (int key = 39; key < 63; ++key) survivors += cache.contains(key) ? 1 : 0;
  static_assert(ReadMostlyLock::kLogCapacity == 11, "the key numbers above assume 11");
  EXPECT_EQ(survivors, 22u);  // 39..46, 48..58 and 60..62
  EXPECT_EQ(cache.size(), 64u);
  EXPECT_EQ(cache.stats().hits, 63u);
}

// A read is a const peek: it cannot rebase the shard's deadline epoch, so after one long jump of
// the clock with no write it must still tell a far deadline (beyond the 32-bit window) that has
// passed from one that has not, and keep an entry without a deadline, whose mark reads as the
// window's end (49.7 days) on the quick check.
TEST(ShardedCache, ReadsAfterALongJumpWithoutWritesKeepDeadlinesExact) {
  Sharded cache({}, 1);
  cache.put(1, 10, std::chrono::days(60));
  cache.put(2, 20);
  cache.put(3, 30, std::chrono::days(400));
  cache.clock().advance(std::chrono::days(60) - 1ms);
  EXPECT_EQ(cache.get(1), 10);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(1), std::nullopt);
  EXPECT_EQ(cache.get(2), 20);
  EXPECT_EQ(cache.get(3), 30);
  cache.clock().advance(std::chrono::days(340));
  EXPECT_EQ(cache.get(2), 20);
  EXPECT_EQ(cache.get(3), std::nullopt);
  EXPECT_FALSE(cache.contains(3));
  EXPECT_TRUE(cache.contains(2));
}

TEST(ShardedCache, ClearEmptiesEveryShard) {
  Sharded cache({}, 8);
  for (int key = 0; key < 1000; ++key) cache.put(key, key);
  const std::size_t full_bytes = cache.memory_bytes();
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_LT(cache.memory_bytes(), full_bytes);
  for (int key = 0; key < 1000; ++key) ASSERT_FALSE(cache.contains(key));
  cache.put(5, 5);
  EXPECT_EQ(cache.get(5), 5);
}

TEST(ShardedCache, MaxEntriesIsSplitAcrossShards) {
  Sharded refusing({.max_entries = 64}, 4);  // 16 per shard
  std::size_t inserted = 0;
  for (int key = 0; key < 1000; ++key) {
    inserted += refusing.put(key, key, 1h) == PutOutcome::kInserted ? 1 : 0;
  }
  EXPECT_EQ(inserted, 64u);
  EXPECT_EQ(refusing.size(), 64u);

  ShardedLru evicting({.max_entries = 64}, 4);
  for (int key = 0; key < 1000; ++key) ASSERT_EQ(evicting.put(key, key, 1h), PutOutcome::kInserted);
  EXPECT_EQ(evicting.size(), 64u);
  EXPECT_EQ(evicting.stats().evicted, 1000u - 64u);
}

TEST(ShardedCache, MaxBytesIsSplitAcrossShards) {
  constexpr std::size_t kBudget = 4 << 20;
  ShardedCache<int, std::string, Lru, ManualClock> cache({.max_bytes = kBudget}, 4);
  for (int key = 0; key < 20'000; ++key) cache.put(key, std::string(500, 'v'), 1h);
  EXPECT_LE(cache.memory_used(), kBudget);
  EXPECT_GT(cache.memory_used(), kBudget / 2);
  EXPECT_GT(cache.stats().evicted, 10'000u);
}

TEST(ShardedCache, APerShardBoundIsRoundedUp) {
  ShardedLru cache({.max_entries = 10}, 4);  // ceil(10 / 4) = 3 per shard
  for (int key = 0; key < 1000; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.size(), 12u);
}

TEST(ShardedCache, InitialCapacityIsSplitAcrossShards) {
  Sharded sized({.initial_capacity = 40'000}, 4);
  const std::size_t bytes = sized.memory_bytes();
  EXPECT_GT(bytes, Sharded({}, 4).memory_bytes() + 40'000 * 12);
  for (int key = 0; key < 40'000; ++key) sized.put(key, key);
  EXPECT_LE(sized.memory_bytes(), bytes + bytes / 4) << "reserved room should absorb most inserts";
}

TEST(ShardedCache, StringKeysAcceptStringViewsAndCStrings) {
  ShardedCache<std::string, std::string, TtlOnly, ManualClock> cache({}, 4);
  EXPECT_EQ(cache.put(std::string_view("alpha"), "one", 10s), PutOutcome::kInserted);
  EXPECT_EQ(cache.put("beta", "two"), PutOutcome::kInserted);
  EXPECT_EQ(cache.get(std::string_view("alpha")), "one");
  EXPECT_EQ(cache.get("beta"), "two");
  EXPECT_TRUE(cache.contains(std::string("alpha")));
  EXPECT_TRUE(cache.erase("alpha"));
  EXPECT_FALSE(cache.contains(std::string_view("alpha")));
}

TEST(ShardedCache, WorksWithTheDefaultCoarseClock) {
  ShardedCache<int, int> cache;
  cache.put(1, 10, 1h);
  cache.put(2, 20);
  EXPECT_EQ(cache.get(1), 10);
  EXPECT_EQ(cache.get(2), 20);
  EXPECT_EQ(cache.size(), 2u);
}

// Four threads: each owns a key range (put, read back, erase a third) and all of them also write
// a shared range, plus readers of size() and stats() running alongside.
TEST(ShardedCache, ConcurrentWritersOnDisjointAndSharedKeysLeaveAConsistentState) {
  constexpr int kThreads = 4;
  constexpr int kOwnKeys = 20'000;
  constexpr int kSharedKeys = 2'000;
  constexpr int kSharedBase = 1'000'000;
  Sharded cache({}, 8);
  std::barrier start(kThreads + 1);
  std::atomic<bool> failed{false};
  std::atomic<bool> writers_done{false};

  auto writer = [&](int t) {
    start.arrive_and_wait();
    const int base = t * kOwnKeys;
    for (int i = 0; i < kOwnKeys; ++i) {
      if (cache.put(base + i, (base + i) * 10 + t, 1h) != PutOutcome::kInserted) failed = true;
      if (cache.get(base + i) != (base + i) * 10 + t) failed = true;
      if (i % 3 == 0 && !cache.erase(base + i)) failed = true;
      const int shared = kSharedBase + (i * 7 + t) % kSharedKeys;
      cache.put(shared, shared * 10 + t, 1h);
      const std::optional<int> seen = cache.get(shared);
      if (seen && *seen / 10 != shared) failed = true;  // some thread's value for this key
      if (i % 11 == 0) cache.erase(kSharedBase + (i * 3) % kSharedKeys);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(writer, t);
  std::thread reader([&] {
    start.arrive_and_wait();
    while (!writers_done) {
      if (cache.size() > kThreads * kOwnKeys + kSharedKeys) failed = true;
      const CacheStats stats = cache.stats();
      if (stats.expired != 0 || stats.evicted != 0) failed = true;
    }
  });
  for (std::thread& thread : threads) thread.join();
  writers_done = true;
  reader.join();
  EXPECT_FALSE(failed);

  std::size_t present = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kOwnKeys; ++i) {
      const int key = t * kOwnKeys + i;
      ASSERT_EQ(cache.get(key), i % 3 == 0 ? std::nullopt : std::optional(key * 10 + t)) << key;
      present += i % 3 == 0 ? 0 : 1;
    }
  }
  for (int key = kSharedBase; key < kSharedBase + kSharedKeys; ++key) {
    const std::optional<int> value = cache.get(key);
    if (value) {
      ASSERT_EQ(*value / 10, key);
      ASSERT_LT(*value % 10, kThreads);
      ++present;
    }
  }
  EXPECT_EQ(cache.size(), present);
}

TEST(ShardedCache, ConcurrentInsertsIntoABoundedLruNeverExceedTheBound) {
  constexpr int kThreads = 4;
  ShardedLru cache({.max_entries = 1000}, 4);  // 250 per shard
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < 10'000; ++i) {
        const int key = t * 10'000 + i;
        cache.put(key, key, 1h);
        if (i % 2 == 0) (void)cache.get(t * 10'000 + i / 2);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(cache.size(), 1000u);
  EXPECT_EQ(cache.stats().evicted, 40'000u - 1000u);
  std::size_t present = 0;
  for (int key = 0; key < 40'000; ++key) {
    const std::optional<int> value = cache.get(key);
    if (value) {
      ASSERT_EQ(*value, key);
      ++present;
    }
  }
  EXPECT_EQ(present, 1000u);
}

// Writers on every shard while a capture walks them: what the sink receives is exactly the
// contents when begin_capture returned, each key once, though writers change most of it.
TEST(ShardedCache, ACaptureUnderConcurrentWritersHoldsThePointInTimeContents) {
  constexpr int kThreads = 3;
  constexpr int kKeys = 60'000;
  Sharded cache({}, 8);
  for (int key = 0; key < kKeys; ++key) cache.put(key, key * 2, 1h);

  class Sink final : public CaptureSink<int, int> {
   public:
    void capture(const int& key, const int& value, TimePoint) override {
      MutexLock lock(mu);  // shards hand over from several threads
      if (!seen.emplace(key, value).second) duplicates++;
    }
    Mutex mu;
    std::map<int, int> seen CC_GUARDED_BY(mu);
    int duplicates CC_GUARDED_BY(mu) = 0;
  } sink;

  cache.begin_capture(sink);
  std::barrier start(kThreads + 1);
  std::vector<std::thread> writers;
  writers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = t; i < kKeys; i += kThreads) {
        if (i % 4 == 0)
          cache.erase(i);
        else
          cache.put(i, -1, 1h);
        cache.put(kKeys + i, -2, 1h);  // new keys: segments split under the capture
      }
    });
  }
  start.arrive_and_wait();
  while (!cache.capture_step(256)) {
  }
  for (std::thread& writer : writers) writer.join();

  MutexLock lock(sink.mu);
  EXPECT_EQ(sink.duplicates, 0);
  ASSERT_EQ(sink.seen.size(), static_cast<std::size_t>(kKeys));
  for (const auto& [key, value] : sink.seen) ASSERT_EQ(value, key * 2) << key;
}

// ---- Readers beside writers, for every policy ------------------------------------------------
// Readers beside a writer that grows every shard's table from empty (rebuilds, splits, directory
// doublings) and clears it again, over and over: a reader never follows a block the writer has
// freed (ASan would see it) and sees a key's only value or nothing, never a torn or foreign one.
// For a cache of K -> K (keys below 60 000) with hash H.
template <class K, class H = DefaultHash<K>>
void expect_reads_survive_growth_and_clear() {
  ShardedCache<K, K, TtlOnly, ManualClock, H> cache({}, 2);
  constexpr K kKeys = 60'000;
  constexpr auto value_of = [](K key) { return static_cast<K>(key * K{0x9E3779B1u} | 1u); };
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::atomic<std::uint64_t> hits{0};
  std::vector<std::thread> readers;
  readers.reserve(2);
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(static_cast<unsigned>(r + 11));
      std::uint64_t my_hits = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const auto key = static_cast<K>(rng() % kKeys);
        const std::optional<K> value = cache.get(key);
        if (value && *value != value_of(key)) failed = true;
        my_hits += value ? 1 : 0;
        if (cache.contains(static_cast<K>(key + kKeys))) failed = true;  // never written
      }
      hits += my_hits;
    });
  }
  for (int round = 0; round < 6; ++round) {
    for (K key = 0; key < kKeys; ++key) cache.put(key, value_of(key), 1h);
    for (K key = 0; key < kKeys; key += 3) cache.erase(key);
    cache.clear();
  }
  for (K key = 0; key < kKeys; ++key) cache.put(key, value_of(key), 1h);
  stop = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_FALSE(failed.load());
  EXPECT_GT(hits.load(), 0u);
  for (K key = 0; key < kKeys; key += 997) ASSERT_EQ(cache.get(key), value_of(key));
}

TEST(ShardedCache, ReadsSurviveGrowthAndClearBesideThem) {
  expect_reads_survive_growth_and_clear<std::uint64_t>();
}

// Keys stored as quotients (a different group layout, 512 segments a shard from the start).
TEST(ShardedCache, ReadsOfCompactKeysSurviveGrowthAndClearBesideThem) {
  expect_reads_survive_growth_and_clear<std::uint32_t, CompactIntHash<std::uint32_t>>();
}

// A writer overwrites a few keys with values whose eight words are all equal; a read that
// overlapped an overwrite and were let through would see words of two values. (Checked against
// broken readers: one that ignores the writer bit fails here, and the growth test above crashes;
// an optimistic reader without its version check, branch optimistic-reads, fails here by the
// tens of thousands.)
TEST(ShardedCache, ReadsNeverReturnATornValue) {
  struct Wide {
    std::uint64_t words[8];
  };
  ShardedCache<int, Wide, TtlOnly, ManualClock> cache({}, 1);
  constexpr int kKeys = 4;
  const auto wide = [](std::uint64_t n) {
    Wide value;
    for (std::uint64_t& word : value.words) word = n;
    return value;
  };
  for (int key = 0; key < kKeys; ++key) cache.put(key, wide(0));
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> torn{0};
  std::atomic<std::uint64_t> reads{0};
  std::thread reader([&] {
    std::uint64_t my_torn = 0;
    std::uint64_t my_reads = 0;
    for (int key = 0; !stop.load(std::memory_order_relaxed); key = (key + 1) % kKeys) {
      const std::optional<Wide> value = cache.get(key);
      ++my_reads;
      if (!value) {
        ++my_torn;  // every key is always present
        continue;
      }
      for (std::uint64_t word : value->words) my_torn += word != value->words[0] ? 1 : 0;
    }
    torn = my_torn;
    reads = my_reads;
  });
  for (std::uint64_t n = 1; n <= 2'000'000; ++n) cache.put(static_cast<int>(n % kKeys), wide(n));
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
}

// ---- Overwrites beside readers (Cache::overwrite_beside_readers) ---------------------------
// A put over a live entry of a one-word value is made under the shard's writer mutex alone,
// beside readers, when its deadline is in the window and not earlier; every other put excludes
// readers. Both paths must leave what Cache::put leaves.
TEST(ShardedCache, AnOverwriteKeepsPutsMeaningOnEveryPath) {
  Sharded cache({}, 1);
  cache.put(1, 10, 10s);
  EXPECT_EQ(cache.put(1, 11, 20s), PutOutcome::kReplaced);  // later deadline: beside readers
  EXPECT_EQ(cache.put(1, 12, 5s), PutOutcome::kReplaced);   // earlier: excludes readers
  cache.clock().advance(4999ms);
  EXPECT_EQ(cache.get(1), 12);
  cache.clock().advance(1ms);
  EXPECT_EQ(cache.get(1), std::nullopt);
  EXPECT_EQ(cache.put(1, 13, 1s), PutOutcome::kInserted);  // the expired entry is replaced
  EXPECT_EQ(cache.stats().expired, 1u);
  EXPECT_EQ(cache.put(1, 14), PutOutcome::kReplaced);                          // no deadline
  EXPECT_EQ(cache.put(1, 15, std::chrono::days(100)), PutOutcome::kReplaced);  // far
  EXPECT_EQ(cache.put(1, 16, 0s), PutOutcome::kExpiredOnArrival);
  EXPECT_EQ(cache.get(1), std::nullopt);

  cache.put(2, 20);  // no deadline, and no far one anywhere: beside readers, to any deadline
  EXPECT_EQ(cache.put(2, 21), PutOutcome::kReplaced);
  cache.put(3, 30, std::chrono::days(100));  // a far deadline: only the exclusive path
  EXPECT_EQ(cache.put(3, 31, std::chrono::days(200)), PutOutcome::kReplaced);
  cache.clock().advance(std::chrono::days(150));
  EXPECT_EQ(cache.get(2), 21);
  EXPECT_EQ(cache.get(3), 31);
  cache.clock().advance(std::chrono::days(50));
  EXPECT_EQ(cache.get(3), std::nullopt);
  EXPECT_EQ(cache.size(), 1u);
}

// An overwrite is an access for the policy, on either path: the key just written survives the
// next eviction of a full LRU shard.
TEST(ShardedCache, AnOverwriteIsAnAccessForThePolicy) {
  ShardedLru cache({.max_entries = 3}, 1);
  cache.put(1, 1, 10s);
  cache.put(2, 2, 10s);
  cache.put(3, 3, 10s);
  cache.put(1, 100, 20s);  // beside readers; 2 is now the least recent
  cache.put(4, 4, 10s);
  EXPECT_EQ(cache.get(2), std::nullopt);
  EXPECT_EQ(cache.get(1), 100);
  cache.put(3, 300, 1s);  // excludes readers; 4 is now the least recent (1 was read)
  cache.put(5, 5, 10s);
  EXPECT_EQ(cache.get(4), std::nullopt);
  EXPECT_EQ(cache.get(3), 300);
}

// A capture keeps the value of the instant it began: an overwrite during it takes the path that
// hands the entry's group over first.
TEST(ShardedCache, AnOverwriteDuringACaptureLeavesTheCapturedValue) {
  Sharded cache({}, 1);
  for (int key = 0; key < 1000; ++key) cache.put(key, key, 10s);
  class Sink final : public CaptureSink<int, int> {
   public:
    void capture(const int& key, const int& value, TimePoint) override { seen[key] = value; }
    std::map<int, int> seen;
  } sink;
  cache.begin_capture(sink);
  for (int key = 0; key < 1000; ++key) cache.put(key, -key, 20s);
  while (!cache.capture_step(64)) {
  }
  ASSERT_EQ(sink.seen.size(), 1000u);
  for (const auto& [key, value] : sink.seen) ASSERT_EQ(value, key) << key;
  EXPECT_EQ(cache.get(7), -7);
}

using test_support::SharedManualClock;

// Readers beside a writer whose values are their own deadlines (ms), put with TTLs that grow
// (overwrites beside readers) and shrink (exclusive), while another thread moves the clock on: a
// read that returns a value must return it while that value's own deadline holds. (A reader
// that checked one entry's deadline and returned another's value would fail here. The ordering
// bug this guards against, an overwrite that stores the deadline before the value, leaves a
// window of a few cycles that x86 seldom shows; TSan checks that every access involved is
// atomic.)
TEST(ShardedCache, AReadPairsAValueWithItsOwnDeadline) {
  SharedManualClock clock;
  ShardedCache<int, std::uint64_t, TtlOnly, SharedManualClock> cache({}, 1, clock);
  constexpr int kKeys = 2;
  const auto ms = [](TimePoint t) {
    return static_cast<std::uint64_t>(t.time_since_epoch().count());
  };
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> stale{0};
  std::atomic<std::uint64_t> hits{0};  // published by the reader as it goes
  // Two named threads, not a vector of them: GCC 12 at -O3 warns on growing one here
  // (-Warray-bounds, a false positive).
  std::thread ticker([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      clock.advance(1ms);
      for (int i = 0; i < 64; ++i) cpu_relax();
    }
  });
  std::thread reader([&] {
    for (int key = 0; !stop.load(std::memory_order_relaxed); key = (key + 1) % kKeys) {
      const std::uint64_t now = ms(clock.now());
      const std::optional<std::uint64_t> deadline = cache.get(key);
      if (!deadline) continue;
      hits.fetch_add(1, std::memory_order_relaxed);
      if (*deadline <= now)
        stale.fetch_add(1, std::memory_order_relaxed);  // read at `now` or later
    }
  });
  // Writes go on until the reader has met live entries often enough to have had its chances,
  // however the three threads share a busy machine's cores (a fixed count of writes once ended
  // before the reader had run at all); the cap only bounds a run whose reader never gets a core.
  constexpr int kMinRounds = 400'000;
  constexpr std::uint64_t kMinHits = 10'000;
  constexpr int kMaxRounds = 200'000'000;
  for (int round = 0; round < kMaxRounds &&
                      (round < kMinRounds || hits.load(std::memory_order_relaxed) < kMinHits);
       ++round) {
    const int key = round % kKeys;
    // 1, 2, 3, 4 ms: each later than the last unless the clock moved more; then 1 ms, earlier.
    const TimePoint now = clock.now();
    const Duration ttl(1 + (round / kKeys) % 4);
    SharedManualClock::pin_for_this_thread(now);  // the put reads this `now` too
    cache.put(key, ms(now + ttl), ttl);
    SharedManualClock::pin_for_this_thread(std::nullopt);
  }
  stop = true;
  ticker.join();
  reader.join();
  EXPECT_EQ(stale.load(), 0u);
  EXPECT_GE(hits.load(), kMinHits);
}

// The scheduler state of thread `tid` of this process ('R' running, 'S' asleep, e.g. in a futex
// wait), from /proc; 0 once the thread is gone.
char thread_state(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  const std::size_t name_end = line.rfind(')');  // the name may hold spaces and parentheses
  return name_end == std::string::npos || name_end + 2 >= line.size() ? 0 : line[name_end + 2];
}

// A reader that meets a writer who stays until the reader has given up spinning and sleeps on the
// writer mutex reads after that writer's section, and then, once in, keeps the next writer out
// until it leaves, as a reader that never waited does. Under TSan the plain `data` checks the
// ordering both ways.
TEST(ReadMostlyLock, AReaderThatWaitedForAWriterReadsAfterItAndHoldsTheNextOneOff) {
  ReadMostlyLock lock;
  int data = 0;
  std::atomic<bool> writer_in{false};
  std::atomic<bool> reader_in{false};
  std::atomic<bool> next_writer_waiting{false};
  std::atomic<bool> next_writer_in{false};
  std::atomic<bool> reader_leaving{false};
  std::atomic<pid_t> reader_tid{0};
  int seen = -1;
  bool next_writer_stayed_out = false;
  std::thread writer([&] {
    ReadMostlyLock::Writer w(lock);
    writer_in = true;
    while (reader_tid.load() == 0) std::this_thread::yield();
    // Stays until the reader sleeps (on the writer mutex: it has nothing else to sleep on), or
    // got in regardless, which the reader's `seen` then reports.
    while (!reader_in.load() && thread_state(reader_tid.load()) != 'S') std::this_thread::yield();
    data = 1;
  });
  while (!writer_in.load()) std::this_thread::yield();
  std::thread reader([&]() CC_NO_THREAD_SAFETY_ANALYSIS {
    reader_tid = static_cast<pid_t>(syscall(SYS_gettid));
    ReadMostlyLock::Reader r(lock);
    seen = data;
    reader_in = true;
    while (!next_writer_waiting.load()) std::this_thread::yield();
    for (int i = 0; i < 1000; ++i) std::this_thread::yield();  // give it every chance to get in
    next_writer_stayed_out = !next_writer_in.load();
    reader_leaving = true;
  });
  while (!reader_in.load()) std::this_thread::yield();
  std::thread next_writer([&] {
    next_writer_waiting = true;
    ReadMostlyLock::Writer w(lock);
    next_writer_in = true;
    EXPECT_TRUE(reader_leaving.load());
    data = 2;
  });
  writer.join();
  reader.join();
  next_writer.join();
  EXPECT_EQ(seen, 1);
  EXPECT_TRUE(next_writer_stayed_out);
  EXPECT_EQ(data, 2);
}

// A thread's first read section starts on the lock's "unassigned" stripe, whose writer bit never
// clears, and takes the slow path, which gives the thread its stripe. If a writer is inside, that
// read still waits for it like any other, and then sees what it wrote.
TEST(ReadMostlyLock, AThreadsFirstReadWaitsForTheWriterInside) {
  ReadMostlyLock lock;
  int data = 0;
  int seen = -1;
  std::atomic<bool> reader_started{false};
  std::atomic<bool> reader_in{false};
  std::thread reader;
  {
    ReadMostlyLock::Writer w(lock);
    reader = std::thread([&]() CC_NO_THREAD_SAFETY_ANALYSIS {
      reader_started = true;
      ReadMostlyLock::Reader r(lock);  // this thread's first read section, in any lock
      seen = data;
      reader_in = true;
    });
    while (!reader_started.load()) std::this_thread::yield();
    for (int i = 0; i < 1000; ++i) std::this_thread::yield();  // give it every chance to get in
    EXPECT_FALSE(reader_in.load());
    data = 1;
  }
  reader.join();
  EXPECT_EQ(seen, 1);
}

// A writer waits for the reader inside while other readers keep meeting its bit and backing off,
// which moves the stripes' `entered` counts up and down beside it (one thread per stripe after
// the holder, so one of them shares the holder's stripe).
TEST(ReadMostlyLock, AWriterWaitsForTheReaderInsideWhileOthersBackOff) {
  ReadMostlyLock lock;
  std::atomic<bool> holder_in{false};
  std::atomic<bool> release_holder{false};
  std::atomic<bool> writer_in{false};
  std::atomic<bool> stop{false};
  std::thread holder([&]() CC_NO_THREAD_SAFETY_ANALYSIS {
    ReadMostlyLock::Reader r(lock);
    holder_in = true;
    while (!release_holder.load()) std::this_thread::yield();
  });
  while (!holder_in.load()) std::this_thread::yield();
  std::thread writer([&] {
    ReadMostlyLock::Writer w(lock);
    writer_in = true;
  });
  std::vector<std::thread> knockers;
  for (std::size_t i = 0; i < lock.stripe_count(); ++i)
    knockers.emplace_back([&]() CC_NO_THREAD_SAFETY_ANALYSIS {
      while (!stop.load()) ReadMostlyLock::Reader r(lock);
    });
  for (int i = 0; i < 2000; ++i) std::this_thread::yield();
  EXPECT_FALSE(writer_in.load());
  release_holder = true;
  writer.join();
  EXPECT_TRUE(writer_in.load());
  stop = true;
  for (std::thread& t : knockers) t.join();
  holder.join();
}

// Values encode (key, version): each key has one writer, which stores increasing versions, so a
// reader can check that what it sees was written for that key and never goes back in time.

template <class Policy>
class ShardedConcurrency : public testing::Test {};

using ConcurrentPolicies =
    testing::Types<TtlOnly, Lru, Lfu, Sieve, S3Fifo, WTinyLfu, SwitchablePolicy<Lru, Sieve>>;
TYPED_TEST_SUITE(ShardedConcurrency, ConcurrentPolicies, chronocache::test_support::PolicyNames);

constexpr std::int64_t kVersions = 1'000'000;  // value = key * kVersions + version
constexpr int kConcurrentKeys = 4'096;

struct RunResult {
  bool failed = false;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};

// kWriters writers (key % kWriters is a writer's) put increasing versions, and erase every 7th
// key once in a while; kReaders readers get random keys and check each value. Returns what the
// readers counted. `last` receives each key's last written version (0: its last write erased it).
template <class Cache>
RunResult run_readers_and_writers(Cache& cache, std::vector<std::int64_t>& last, int rounds) {
  constexpr int kWriters = 2;
  constexpr int kReaders = 2;
  last.assign(kConcurrentKeys, 0);
  std::barrier start(kWriters + kReaders);
  std::atomic<int> writers_running{kWriters};
  std::atomic<bool> failed{false};
  std::atomic<std::uint64_t> hits{0};
  std::atomic<std::uint64_t> misses{0};
  std::vector<std::thread> threads;
  threads.reserve(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (int round = 1; round <= rounds; ++round) {
        for (int key = w; key < kConcurrentKeys; key += kWriters) {
          if (key % 7 == 0 && round % 5 == 0) {
            cache.erase(key);
            last[key] = 0;
          } else {
            cache.put(key, key * kVersions + round, 1h);
            last[key] = round;
          }
        }
      }
      writers_running.fetch_sub(1);
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      std::vector<std::int64_t> seen(kConcurrentKeys, 0);  // highest version this reader saw
      std::mt19937 rng(static_cast<unsigned>(r + 1));
      std::uint64_t my_hits = 0;
      std::uint64_t my_misses = 0;
      start.arrive_and_wait();
      do {
        for (int i = 0; i < 1'000; ++i) {
          const int key = static_cast<int>(rng() % kConcurrentKeys);
          const std::optional<std::int64_t> value = cache.get(key);
          if (!value) {
            ++my_misses;
            continue;
          }
          ++my_hits;
          const std::int64_t version = *value - key * kVersions;
          if (version < 1 || version > rounds) failed = true;  // never written for this key
          if (version < seen[key]) failed = true;              // went back in time
          seen[key] = version;
        }
      } while (writers_running.load() != 0);
      hits += my_hits;
      misses += my_misses;
    });
  }
  for (std::thread& thread : threads) thread.join();
  return {failed.load(), hits.load(), misses.load()};
}

TYPED_TEST(ShardedConcurrency, ReadersSeeOnlyWrittenValuesInOrderAndTheLastWriteWins) {
  ShardedCache<int, std::int64_t, TypeParam, ManualClock> cache({}, 4);
  std::vector<std::int64_t> last;
  const RunResult run = run_readers_and_writers(cache, last, 30);
  EXPECT_FALSE(run.failed);
  std::size_t present = 0;
  for (int key = 0; key < kConcurrentKeys; ++key) {
    const std::optional<std::int64_t> expected =
        last[key] == 0 ? std::nullopt : std::optional(key * kVersions + last[key]);
    ASSERT_EQ(cache.get(key), expected) << key;
    present += expected ? 1 : 0;
  }
  EXPECT_EQ(cache.size(), present);
  const CacheStats stats = cache.stats();  // the readers' counts, plus the checks just made
  EXPECT_EQ(stats.hits, run.hits + present);
  EXPECT_EQ(stats.misses, run.misses + (kConcurrentKeys - present));
  EXPECT_EQ(stats.evicted, 0u);
}

// Bounded: evictions run beside the readers (and replay their logged hits). A present key holds
// its last written value, and the bound holds.
TYPED_TEST(ShardedConcurrency, ABoundedCacheEvictsBesideReadersAndKeepsLastValues) {
  if constexpr (std::is_same_v<TypeParam, TtlOnly>) GTEST_SKIP() << "TtlOnly refuses, not evicts";
  ShardedCache<int, std::int64_t, TypeParam, ManualClock> cache({.max_entries = 1'024}, 4);
  std::vector<std::int64_t> last;
  const RunResult run = run_readers_and_writers(cache, last, 20);
  EXPECT_FALSE(run.failed);
  std::size_t present = 0;
  for (int key = 0; key < kConcurrentKeys; ++key) {
    const std::optional<std::int64_t> value = cache.get(key);
    if (!value) continue;
    ++present;
    ASSERT_NE(last[key], 0) << key;
    ASSERT_EQ(*value, key * kVersions + last[key]) << key;
  }
  EXPECT_LE(present, 1'024u);
  EXPECT_EQ(cache.size(), present);
  EXPECT_GT(cache.stats().evicted, 0u);
}

// A capture begun while writers and readers run is exactly the contents at one instant: every
// writer stores (key, round) for all its keys in rounds, so the instant's contents are, per
// writer, some round r for a prefix of its keys and r - 1 for the rest; each key once.
TYPED_TEST(ShardedConcurrency, ACaptureWhileThreadsReadAndWriteIsOneInstant) {
  ShardedCache<int, std::int64_t, TypeParam, ManualClock> cache({}, 4);
  constexpr int kKeysPerWriter = 2'000;
  constexpr int kWriters = 2;
  for (int key = 0; key < kKeysPerWriter * kWriters; ++key) cache.put(key, key * kVersions, 1h);

  class Sink final : public CaptureSink<int, std::int64_t> {
   public:
    void capture(const int& key, const std::int64_t& value, TimePoint) override {
      MutexLock lock(mu);
      if (!seen.emplace(key, value).second) ++duplicates;
    }
    Mutex mu;
    std::map<int, std::int64_t> seen CC_GUARDED_BY(mu);
    int duplicates CC_GUARDED_BY(mu) = 0;
  } sink;

  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::atomic<int> rounds_done{0};
  std::vector<std::thread> threads;
  threads.reserve(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (std::int64_t round = 1; !stop.load(); ++round) {
        for (int i = 0; i < kKeysPerWriter; ++i) {
          const int key = w * kKeysPerWriter + i;
          cache.put(key, key * kVersions + round, 1h);
        }
        rounds_done.fetch_add(1);
      }
    });
  }
  threads.emplace_back([&] {
    std::mt19937 rng(7);
    while (!stop.load()) {
      const int key = static_cast<int>(rng() % (kKeysPerWriter * kWriters));
      const std::optional<std::int64_t> value = cache.get(key);
      if (!value || *value / kVersions != key) failed = true;
    }
  });
  while (rounds_done.load() < 2) std::this_thread::yield();
  cache.begin_capture(sink);
  while (!cache.capture_step(128)) std::this_thread::yield();
  stop = true;
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(failed);

  MutexLock lock(sink.mu);
  EXPECT_EQ(sink.duplicates, 0);
  ASSERT_EQ(sink.seen.size(), static_cast<std::size_t>(kKeysPerWriter * kWriters));
  for (int w = 0; w < kWriters; ++w) {
    // Rounds along the writer's keys: non-increasing, dropping by at most one, once.
    const std::int64_t first = sink.seen.at(w * kKeysPerWriter) % kVersions;
    int drops = 0;
    std::int64_t previous = first;
    for (int i = 0; i < kKeysPerWriter; ++i) {
      const int key = w * kKeysPerWriter + i;
      ASSERT_EQ(sink.seen.at(key) / kVersions, key);
      const std::int64_t round = sink.seen.at(key) % kVersions;
      if (round == previous - 1) {
        ++drops;
      } else {
        ASSERT_EQ(round, previous) << "key " << key;
      }
      previous = round;
    }
    EXPECT_LE(drops, 1) << "writer " << w;
  }
}

}  // namespace
}  // namespace chronocache
