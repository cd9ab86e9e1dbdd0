// Pins BoundedExecutor (bounded_executor.h): tasks run on its threads; a full queue refuses
// (back-pressure, never blocks, never grows); every accepted task is called exactly once, run or
// cancelled; shutdown cancels what is queued, waits for what runs, and does not hang. Gates
// (latches) order the threads: nothing here sleeps or depends on timing.
#include "chronocache/loading/bounded_executor.h"

#include <atomic>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace chronocache {
namespace {

TEST(BoundedExecutor, RunsEveryAcceptedTaskOnAWorkerThread) {
  std::atomic<int> ran{0};
  std::atomic<bool> on_caller{false};
  const std::thread::id caller = std::this_thread::get_id();
  BoundedExecutor executor({.threads = 2, .queue_capacity = 64});
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(executor.try_submit([&](TaskMode mode) {
      ASSERT_EQ(mode, TaskMode::kRun);
      if (std::this_thread::get_id() == caller) on_caller = true;
      ++ran;
    }),
              SubmitOutcome::kAccepted);
    if (i % 16 == 15) executor.wait_idle();  // keep within the queue's bound
  }
  executor.wait_idle();
  EXPECT_EQ(ran.load(), 50);
  EXPECT_FALSE(on_caller.load());
}

TEST(BoundedExecutor, AFullQueueRefusesWithoutBlocking) {
  std::latch release(1);
  std::latch started(1);
  BoundedExecutor executor({.threads = 1, .queue_capacity = 2});
  ASSERT_EQ(executor.try_submit([&](TaskMode) {
    started.count_down();
    release.wait();
  }),
            SubmitOutcome::kAccepted);
  started.wait();  // the one thread is busy: what follows queues
  std::atomic<int> ran{0};
  EXPECT_EQ(executor.try_submit([&](TaskMode) { ++ran; }), SubmitOutcome::kAccepted);
  EXPECT_EQ(executor.try_submit([&](TaskMode) { ++ran; }), SubmitOutcome::kAccepted);
  EXPECT_EQ(executor.try_submit([&](TaskMode) { ++ran; }), SubmitOutcome::kQueueFull);
  release.count_down();
  executor.wait_idle();
  EXPECT_EQ(ran.load(), 2);  // the refused task was never called
  EXPECT_EQ(executor.try_submit([&](TaskMode) { ++ran; }), SubmitOutcome::kAccepted);
  executor.wait_idle();
  EXPECT_EQ(ran.load(), 3);
}

TEST(BoundedExecutor, ShutdownCancelsQueuedTasksAndWaitsForTheRunningOne) {
  std::latch release(1);
  std::latch started(1);
  std::atomic<int> ran{0};
  std::atomic<int> cancelled{0};
  auto executor =
      std::make_unique<BoundedExecutor>(ExecutorOptions{.threads = 1, .queue_capacity = 4});
  ASSERT_EQ(executor->try_submit([&](TaskMode mode) {
    EXPECT_EQ(mode, TaskMode::kRun);
    started.count_down();
    release.wait();
    ++ran;
  }),
            SubmitOutcome::kAccepted);
  started.wait();
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(executor->try_submit(
                  [&](TaskMode mode) { ++(mode == TaskMode::kCancel ? cancelled : ran); }),
              SubmitOutcome::kAccepted);
  }
  std::thread destroyer([&] { executor.reset(); });
  // The queued tasks are cancelled at once, before the running one is waited for.
  while (cancelled.load() != 3) std::this_thread::yield();
  EXPECT_EQ(ran.load(), 0);
  release.count_down();
  destroyer.join();  // returns: no hang
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(cancelled.load(), 3);
}

TEST(BoundedExecutor, RefusesAfterShutdownAndShutdownTwiceIsHarmless) {
  BoundedExecutor executor({.threads = 2, .queue_capacity = 4});
  executor.shutdown();
  bool called = false;
  EXPECT_EQ(executor.try_submit([&](TaskMode) { called = true; }), SubmitOutcome::kShutDown);
  executor.shutdown();
  executor.wait_idle();  // nothing runs: returns at once
  EXPECT_FALSE(called);
}

TEST(BoundedExecutor, ZeroThreadsOrCapacityAreTakenAsOne) {
  BoundedExecutor executor({.threads = 0, .queue_capacity = 0});
  EXPECT_EQ(executor.thread_count(), 1u);
  EXPECT_EQ(executor.queue_capacity(), 1u);
}

}  // namespace
}  // namespace chronocache
