#include "server/upstream/fetch_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace chronocached {
namespace {

using Admission = FetchQueue::Admission;

TEST(FetchQueue, ManyMissesOfOneKeyQueueOneFetchAndWakeEveryWaiter) {
  FetchQueue queue(4);
  EXPECT_EQ(queue.request("k", 1, 100), Admission::kQueued);
  for (std::uint64_t id = 2; id <= 50; ++id)
    EXPECT_EQ(queue.request("k", id, 101), Admission::kJoined);
  EXPECT_EQ(queue.queued(), 1u);
  const auto job = queue.take();
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, "k");
  EXPECT_EQ(job->queued_ms, 100);
  EXPECT_FALSE(queue.take().has_value());
  // In flight: a later miss still joins rather than fetching again.
  EXPECT_EQ(queue.request("k", 51, 102), Admission::kJoined);
  const std::vector<std::uint64_t> woken = queue.finish("k", false);
  ASSERT_EQ(woken.size(), 51u);
  EXPECT_EQ(woken.front(), 1u);
  EXPECT_EQ(woken.back(), 51u);
  EXPECT_EQ(queue.counters().fetches, 1u);
  EXPECT_EQ(queue.counters().joins, 50u);
  EXPECT_EQ(queue.pending(), 0u);
}

TEST(FetchQueue, FinishedKeyIsFetchedAgainOnTheNextMiss) {
  FetchQueue queue(4);
  EXPECT_EQ(queue.request("k", 1, 0), Admission::kQueued);
  ASSERT_TRUE(queue.take().has_value());
  EXPECT_EQ(queue.finish("k", true).size(), 1u);
  EXPECT_EQ(queue.counters().errors, 1u);
  EXPECT_EQ(queue.request("k", 2, 0), Admission::kQueued);
}

TEST(FetchQueue, RefusesNewKeysPastCapacityButAdmitsJoins) {
  FetchQueue queue(2);
  EXPECT_EQ(queue.request("a", 1, 0), Admission::kQueued);
  EXPECT_EQ(queue.request("b", 2, 0), Admission::kQueued);
  ASSERT_TRUE(queue.take().has_value());  // "a" in flight still counts
  EXPECT_EQ(queue.request("c", 3, 0), Admission::kFull);
  EXPECT_EQ(queue.request("b", 4, 0), Admission::kJoined);
  EXPECT_EQ(queue.counters().refused, 1u);
  queue.finish("a", false);
  EXPECT_EQ(queue.request("c", 3, 0), Admission::kQueued);
}

// A prefetch queues a fetch with no client; a miss of that key joins it and is woken by it. A
// prefetch never takes the second half of the queue, which is kept for clients that wait.
TEST(FetchQueue, PrefetchesQueueOnceJoinMissesAndKeepHalfTheRoomForMisses) {
  FetchQueue queue(4);
  EXPECT_TRUE(queue.prefetch("p", 7));
  EXPECT_FALSE(queue.prefetch("p", 8));  // pending already
  EXPECT_EQ(queue.request("p", 1, 9), Admission::kJoined);
  EXPECT_TRUE(queue.prefetch("q", 9));
  EXPECT_FALSE(queue.prefetch("r", 9));  // half the capacity is pending
  EXPECT_EQ(queue.counters().prefetches, 2u);
  EXPECT_EQ(queue.counters().prefetches_dropped, 1u);
  EXPECT_EQ(queue.request("m", 2, 9), Admission::kQueued);  // misses still find room
  const auto job = queue.take();
  ASSERT_TRUE(job.has_value());
  EXPECT_TRUE(job->prefetch);
  EXPECT_EQ(queue.finish("p", false), std::vector<std::uint64_t>{1});
  EXPECT_TRUE(queue.take()->prefetch);
  EXPECT_TRUE(queue.finish("q", false).empty());  // nobody waited: nobody to wake
  EXPECT_FALSE(queue.take()->prefetch);
}

TEST(FetchQueue, TakesKeysInArrivalOrder) {
  FetchQueue queue(8);
  queue.request("x", 1, 0);
  queue.request("y", 2, 0);
  EXPECT_EQ(queue.take()->key, "x");
  EXPECT_EQ(queue.take()->key, "y");
}

TEST(FetchQueue, TakesABatchOfTheOldestKeysAndCountsItOnce) {
  FetchQueue queue(8);
  for (const char* key : {"a", "b", "c"}) queue.request(key, 1, 0);
  const std::vector<FetchQueue::Job> first = queue.take_up_to(2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].key, "a");
  EXPECT_EQ(first[1].key, "b");
  EXPECT_EQ(queue.take_up_to(2).size(), 1u);
  EXPECT_TRUE(queue.take_up_to(2).empty());  // nothing queued: no batch
  EXPECT_EQ(queue.counters().batches, 2u);
  EXPECT_EQ(queue.counters().fetches, 3u);
  EXPECT_EQ(queue.pending(), 3u);  // in flight until finished
}

}  // namespace
}  // namespace chronocached
