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

TEST(FetchQueue, TakesKeysInArrivalOrder) {
  FetchQueue queue(8);
  queue.request("x", 1, 0);
  queue.request("y", 2, 0);
  EXPECT_EQ(queue.take()->key, "x");
  EXPECT_EQ(queue.take()->key, "y");
}

}  // namespace
}  // namespace chronocached
