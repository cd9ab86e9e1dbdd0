#include "chronocache/loading/bounded_executor.h"

#include <algorithm>
#include <utility>

namespace chronocache {

BoundedExecutor::BoundedExecutor(ExecutorOptions options)
    : capacity_(std::max<std::size_t>(options.queue_capacity, 1)),
      ring_(capacity_),
      thread_count_(std::max<std::size_t>(options.threads, 1)) {
  threads_.reserve(thread_count_);
  for (std::size_t i = 0; i < thread_count_; ++i) threads_.emplace_back([this] { work(); });
}

BoundedExecutor::~BoundedExecutor() { shutdown(); }

SubmitOutcome BoundedExecutor::try_submit(Task task) {
  {
    MutexLock lock(mu_);
    if (stopping_) return SubmitOutcome::kShutDown;
    if (queued_ == capacity_) return SubmitOutcome::kQueueFull;
    ring_[(head_ + queued_) % capacity_] = std::move(task);
    ++queued_;
  }
  work_ready_.notify_one();
  return SubmitOutcome::kAccepted;
}

void BoundedExecutor::wait_idle() {
  MutexLock lock(mu_);
  while (queued_ != 0 || running_ != 0) idle_.wait(mu_);
}

void BoundedExecutor::shutdown() {
  std::vector<Task> cancelled;
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    cancelled.reserve(queued_);
    for (; queued_ != 0; --queued_) {
      cancelled.push_back(std::move(ring_[head_]));
      ring_[head_] = nullptr;
      head_ = (head_ + 1) % capacity_;
    }
  }
  work_ready_.notify_all();
  // Outside the lock: a task's cancel takes its owner's locks, and may even submit (refused).
  for (Task& task : cancelled) task(TaskMode::kCancel);
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
  MutexLock lock(mu_);
  idle_.notify_all();  // nothing can run any more: release wait_idle callers
}

void BoundedExecutor::work() {
  MutexLock lock(mu_);
  for (;;) {
    while (queued_ == 0 && !stopping_) work_ready_.wait(mu_);
    if (queued_ == 0) return;  // stopping: shutdown() took every queued task to cancel
    Task task = std::move(ring_[head_]);
    ring_[head_] = nullptr;
    head_ = (head_ + 1) % capacity_;
    --queued_;
    ++running_;
    lock.unlock();
    task(TaskMode::kRun);
    task = nullptr;  // the task's captures go before we count it done
    lock.lock();
    --running_;
    if (queued_ == 0 && running_ == 0) idle_.notify_all();
  }
}

}  // namespace chronocache
