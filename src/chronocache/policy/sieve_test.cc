// Pins Sieve's victim order through Cache (policy/sieve.h): FIFO order, except that entries hit
// since the hand last passed survive it (their bit is cleared), and the hand resumes where the
// previous search stopped instead of restarting from the oldest entry.
#include "chronocache/policy/sieve.h"

#include <chrono>
#include <vector>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "testing/held.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;
using test_support::held;

using SieveCache = Cache<int, int, Sieve, ManualClock>;

TEST(Sieve, WithoutHitsItIsFifo) {
  SieveCache cache({.max_entries = 3});
  for (int key = 1; key <= 5; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4, 5}), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(cache.stats().evicted, 2u);
}

TEST(Sieve, AVisitedEntrySurvivesTheHandOnce) {
  SieveCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.get(1), 1);
  cache.put(4, 4, 1h);  // the hand clears 1's bit and takes 2
  EXPECT_EQ(held(cache, {1, 2, 3, 4}), (std::vector<int>{1, 3, 4}));
}

TEST(Sieve, TheHandResumesWhereItStopped) {
  SieveCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.get(1), 1);
  cache.put(4, 4, 1h);  // queue 1 3 4 (oldest first); the hand moved past 1 to 2, now at 3
  cache.put(5, 5, 1h);  // takes 3
  EXPECT_EQ(held(cache, {1, 3, 4, 5}), (std::vector<int>{1, 4, 5}));
  // 1 is the oldest and unvisited now, but the hand is past it: 4 goes, not 1 (FIFO and LRU
  // would both take 1).
  cache.put(6, 6, 1h);
  EXPECT_EQ(held(cache, {1, 4, 5, 6}), (std::vector<int>{1, 5, 6}));
  // The hand stays just behind the newest entries while they go unvisited ...
  cache.put(7, 7, 1h);  // takes 5
  cache.put(8, 8, 1h);  // takes 6
  cache.put(9, 9, 1h);  // takes 7
  EXPECT_EQ(held(cache, {1, 7, 8, 9}), (std::vector<int>{1, 8, 9}));
  // ... and wraps to the oldest once it passes the newest.
  EXPECT_EQ(cache.get(8), 8);
  EXPECT_EQ(cache.get(9), 9);
  cache.put(10, 10, 1h);  // clears 8 and 9, wraps, takes 1
  EXPECT_EQ(held(cache, {1, 8, 9, 10}), (std::vector<int>{8, 9, 10}));
}

TEST(Sieve, WhenEveryEntryIsVisitedTheHandClearsAllAndTakesWhereItStarted) {
  SieveCache cache({.max_entries = 4});
  for (int key = 1; key <= 4; ++key) cache.put(key, key, 1h);
  for (int key = 1; key <= 4; ++key) EXPECT_EQ(cache.get(key), key);
  cache.put(5, 5, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3, 4, 5}), (std::vector<int>{2, 3, 4, 5}));
  // The bits of 2, 3 and 4 were cleared by that lap: the next victims follow in FIFO order.
  cache.put(6, 6, 1h);
  EXPECT_EQ(held(cache, {2, 3, 4, 5, 6}), (std::vector<int>{3, 4, 5, 6}));
}

TEST(Sieve, AnOverwriteCountsAsAVisit) {
  SieveCache cache({.max_entries = 2});
  cache.put(1, 1, 1h);
  cache.put(2, 2, 1h);
  EXPECT_EQ(cache.put(1, 10, 1h), PutOutcome::kReplaced);
  cache.put(3, 3, 1h);
  EXPECT_EQ(held(cache, {1, 2, 3}), (std::vector<int>{1, 3}));
}

TEST(Sieve, ErasingTheEntryUnderTheHandMovesTheHandOn) {
  SieveCache cache({.max_entries = 3});
  for (int key = 1; key <= 3; ++key) cache.put(key, key, 1h);
  EXPECT_EQ(cache.get(1), 1);
  cache.put(4, 4, 1h);          // clears 1, takes 2; the hand rests on 3
  EXPECT_TRUE(cache.erase(3));  // the hand moves on to 4, not back to the oldest
  cache.put(5, 5, 1h);          // room: nothing evicted
  EXPECT_EQ(cache.stats().evicted, 1u);
  cache.put(6, 6, 1h);  // takes 4; 1, unvisited but behind the hand, stays
  EXPECT_EQ(held(cache, {1, 2, 3, 4, 5, 6}), (std::vector<int>{1, 5, 6}));
}

}  // namespace
}  // namespace chronocache
