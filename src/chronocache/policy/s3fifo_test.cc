// Pins S3Fifo's queues through Cache (policy/s3fifo.h): one-hit wonders leave from the small
// queue in FIFO order, entries hit twice there move to main, a key coming back from the ghost
// queue goes straight to main, and main gives entries hit since their last lap another lap.
// Also the ghost queue itself (policy/ghost_queue.h).
#include "chronocache/policy/s3fifo.h"

#include <chrono>
#include <cstdint>
#include <vector>

#include "chronocache/base/hash.h"
#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/policy/ghost_queue.h"
#include "testing/held.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using test_support::held;
using test_support::keys_below;

using S3FifoCache = Cache<int, int, S3Fifo, ManualClock>;

// Ten entries (capacity 10: small 1, main 9); keys 0..4 hit twice, 5..9 never.
void fill_with_five_reused(S3FifoCache& cache) {
  for (int key = 0; key < 10; ++key) cache.put(key, key, 1h);
  for (int round = 0; round < 2; ++round) {
    for (int key = 0; key < 5; ++key) ASSERT_EQ(cache.get(key), key);
  }
}

TEST(S3Fifo, OneHitWondersLeaveFromTheSmallQueueInFifoOrder) {
  S3FifoCache cache({.max_entries = 10});
  fill_with_five_reused(cache);
  EXPECT_EQ(cache.policy().small_size(), 10u);  // before the first eviction every key is new
  cache.put(10, 10, 1h);                        // 0..4 move to main on the way; 5 leaves
  cache.put(11, 11, 1h);                        // 6 leaves
  EXPECT_EQ(held(cache, keys_below(12)), (std::vector<int>{0, 1, 2, 3, 4, 7, 8, 9, 10, 11}));
  EXPECT_EQ(cache.policy().main_size(), 5u);
  EXPECT_EQ(cache.policy().small_size(), 5u);
  EXPECT_EQ(cache.stats().evicted, 2u);
}

TEST(S3Fifo, OneHitInTheSmallQueueIsNotEnoughToMoveToMain) {
  S3FifoCache cache({.max_entries = 10});
  for (int key = 0; key < 10; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.get(0), 0);  // once: below kMoveToMain = 2
  EXPECT_EQ(cache.get(1), 1);
  EXPECT_EQ(cache.get(1), 1);  // twice
  cache.put(10, 10, 1h);       // 0 is the oldest: it leaves
  EXPECT_FALSE(cache.contains(0));
  EXPECT_EQ(cache.policy().main_size(), 0u);
  cache.put(11, 11, 1h);  // 1 is the oldest now: it moves to main, and 2 leaves
  EXPECT_TRUE(cache.contains(1));
  EXPECT_FALSE(cache.contains(2));
  EXPECT_EQ(cache.policy().main_size(), 1u);
}

TEST(S3Fifo, AKeyBackFromTheGhostQueueGoesToMain) {
  S3FifoCache cache({.max_entries = 10});
  fill_with_five_reused(cache);
  cache.put(10, 10, 1h);  // 5 leaves for the ghost queue
  ASSERT_FALSE(cache.contains(5));
  EXPECT_EQ(cache.policy().main_size(), 5u);
  cache.put(5, 5, 1h);  // 6 leaves; 5 is remembered: main
  EXPECT_EQ(cache.policy().main_size(), 6u);
  EXPECT_TRUE(cache.contains(5));
  // Unvisited in main, it still outlives the small queue's entries (7, 8, 9 and 10 go first).
  for (int key = 100; key < 104; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(held(cache, keys_below(12)), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // A key evicted long ago is not in the ghost queue (nor is one never seen): small queue.
  cache.put(200, 200, 1h);
  EXPECT_EQ(cache.policy().main_size(), 6u);
}

TEST(S3Fifo, MainGivesAnotherLapToEntriesHitSinceTheirLast) {
  S3FifoCache cache({.max_entries = 10});
  for (int key = 0; key < 10; ++key) cache.put(key, key, 1h);
  for (int round = 0; round < 2; ++round) {
    for (int key = 0; key < 9; ++key) ASSERT_EQ(cache.get(key), key);
  }
  cache.put(10, 10, 1h);  // 0..8 move to main (counters reset), 9 leaves
  EXPECT_EQ(cache.policy().main_size(), 9u);
  EXPECT_EQ(cache.get(0), 0);    // main's oldest, hit once
  EXPECT_EQ(cache.get(10), 10);  // hit twice in small: it will move to main
  EXPECT_EQ(cache.get(10), 10);
  // 10 moves to main (10 > 9 entries), so main evicts: 0 was hit and goes round again with its
  // counter decremented; 1 was not and leaves.
  cache.put(11, 11, 1h);
  EXPECT_TRUE(cache.contains(0));
  EXPECT_FALSE(cache.contains(1));
  EXPECT_TRUE(cache.contains(10));
  EXPECT_TRUE(cache.contains(11));
  EXPECT_EQ(cache.policy().main_size(), 9u);
}

TEST(S3Fifo, ExplicitErasesKeepTheQueueCountsExact) {
  S3FifoCache cache({.max_entries = 10});
  fill_with_five_reused(cache);
  cache.put(10, 10, 1h);
  EXPECT_TRUE(cache.erase(0));   // from main
  EXPECT_TRUE(cache.erase(10));  // from small
  EXPECT_EQ(cache.policy().main_size(), 4u);
  EXPECT_EQ(cache.policy().small_size(), 4u);
  EXPECT_EQ(cache.policy().main_size() + cache.policy().small_size(), cache.size());
}

TEST(GhostQueue, RemembersOnlyTheLastCapacityInsertions) {
  detail::GhostQueue ghost;
  ghost.set_capacity(100);
  for (std::uint32_t fp = 1; fp <= 150; ++fp) ghost.insert(fp * 7919);
  EXPECT_FALSE(ghost.take(10 * 7919)) << "100 insertions followed it";
  EXPECT_FALSE(ghost.take(12345)) << "never inserted";
  EXPECT_TRUE(ghost.take(140 * 7919));
  EXPECT_FALSE(ghost.take(140 * 7919)) << "a ghost is taken once";
  int recent = 0;
  for (std::uint32_t fp = 60; fp <= 150; ++fp) recent += ghost.take(fp * 7919) ? 1 : 0;
  EXPECT_GE(recent, 80) << "nearly all of the last 100 (one was taken above)";
  ghost.clear();
  ghost.insert(42);
  EXPECT_TRUE(ghost.take(42));
}

// A large ghost queue stays close to FIFO over its capacity at 10 bytes a ghost: under a byte
// budget its table is memory the records had filled (ghost_queue.h). The price of the quarter of
// slack: full buckets drop some of the oldest ghosts before their time.
TEST(GhostQueue, AMillionGhostsTakeTenBytesEachAndStayNearlyFifo) {
  detail::GhostQueue ghost;
  constexpr std::uint32_t kCapacity = 1'000'000;
  ghost.set_capacity(kCapacity);
  EXPECT_LE(ghost.memory_bytes(), std::size_t{kCapacity} * 10 + 64);
  // Fingerprints as a hash would give them: spread over the 32 bits (a few of 2 M collide).
  const auto fp = [](std::uint32_t i) { return static_cast<std::uint32_t>(hash_integer(i)); };
  for (std::uint32_t i = 0; i < 2 * kCapacity; ++i) ghost.insert(fp(i));
  // Of 10 000 ghosts at each age (insertions since), the share still present.
  const auto present = [&](std::uint32_t age) {
    std::size_t n = 0;
    for (std::uint32_t i = 0; i < 10'000; ++i) n += ghost.take(fp(2 * kCapacity - 1 - age - i));
    return n;
  };
  EXPECT_GE(present(0), 9'990u);
  EXPECT_GE(present(kCapacity / 2), 9'700u);
  EXPECT_GE(present(kCapacity * 3 / 4), 8'500u);
  EXPECT_LE(present(kCapacity * 3 / 2), 5u) << "past the capacity: gone (but for collisions)";
  const std::size_t bytes = ghost.memory_bytes();
  ghost.set_capacity(kCapacity + 1000);  // a capacity creeping up reallocates by a quarter
  EXPECT_GE(ghost.memory_bytes(), bytes + bytes / 4 - 64);
}

}  // namespace
}  // namespace chronocache
