// BoundedExecutor: a fixed set of threads over a bounded queue, LoadingCache's background
// workers (refreshes, prefetches, get_async loads).
//
// Back-pressure, not an unbounded queue: try_submit never blocks and never grows anything; when
// the queue holds `queue_capacity` tasks it answers kQueueFull and the caller decides what that
// means. LoadingCache drops a refresh or a prefetch (and counts the drop: the entry is served
// as it is, or loaded on its first get) and runs a get_async load on the caller's own thread
// (so no request is lost and the caller is the one slowed down). docs/design/loading.md.
//
//   BoundedExecutor pool({.threads = 2, .queue_capacity = 64});
//   if (pool.try_submit([](TaskMode mode) { if (mode == TaskMode::kRun) work(); }) !=
//       SubmitOutcome::kAccepted) { /* shed it */ }
//
// Every accepted task is called exactly once: with kRun on a worker thread, or with kCancel on the
// thread that calls shutdown() if it was still queued then. That is what lets a task own
// resources (LoadingCache's flights) and release its waiters with an error when cancelled.
//
// Shutdown (the destructor, or shutdown()): no new task is accepted; queued tasks are cancelled
// at once; the tasks already running are waited for (a task must return: the executor cannot
// interrupt a loader). Threads are joined before it returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"

namespace chronocache {

enum class TaskMode : std::uint8_t {
  kRun,     // on a worker thread: do the work
  kCancel,  // at shutdown, never run: release whatever the task holds
};
using Task = std::function<void(TaskMode)>;

enum class [[nodiscard]] SubmitOutcome : std::uint8_t{
    kAccepted,   // it will be called exactly once (run or cancelled)
    kQueueFull,  // back-pressure: not accepted, not called
    kShutDown,   // shutdown() has begun: not accepted, not called
};

struct ExecutorOptions {
  std::size_t threads = 1;           // at least 1 (a zero is taken as 1)
  std::size_t queue_capacity = 256;  // tasks waiting for a thread; at least 1
};

class BoundedExecutor {
 public:
  explicit BoundedExecutor(ExecutorOptions options);
  ~BoundedExecutor();
  BoundedExecutor(const BoundedExecutor&) = delete;
  BoundedExecutor& operator=(const BoundedExecutor&) = delete;

  // Queues `task` if there is room; never blocks. Thread-safe.
  SubmitOutcome try_submit(Task task) CC_EXCLUDES(mu_);

  // Blocks until the queue is empty and no task is running: the test's way to wait for
  // background work without sleeping. Tasks submitted meanwhile are waited for too.
  void wait_idle() CC_EXCLUDES(mu_);

  // See the header comment. Called by the owner's thread; later calls do nothing.
  void shutdown() CC_EXCLUDES(mu_);

  std::size_t queue_capacity() const noexcept { return capacity_; }
  std::size_t thread_count() const noexcept { return thread_count_; }

 private:
  void work() CC_EXCLUDES(mu_);

  Mutex mu_;
  CondVar work_ready_;  // a task was queued, or shutdown began
  CondVar idle_;        // the queue emptied and no task runs
  const std::size_t capacity_;
  // A ring of capacity_ slots: allocated once, so submitting allocates nothing of ours.
  std::vector<Task> ring_ CC_GUARDED_BY(mu_);
  std::size_t head_ CC_GUARDED_BY(mu_) = 0;
  std::size_t queued_ CC_GUARDED_BY(mu_) = 0;
  std::size_t running_ CC_GUARDED_BY(mu_) = 0;
  bool stopping_ CC_GUARDED_BY(mu_) = false;
  std::size_t thread_count_;
  std::vector<std::thread> threads_;  // touched only by the constructor and shutdown()
};

}  // namespace chronocache
