// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with Clang's thread-safety
// annotations (thread_annotations.h), so that `-Wthread-safety` checks every CC_GUARDED_BY.
//
//   Mutex mu_;
//   CondVar ready_;
//   std::deque<Job> jobs_ CC_GUARDED_BY(mu_);
//
//   void push(Job job) CC_EXCLUDES(mu_) {
//     { MutexLock lock(mu_); jobs_.push_back(std::move(job)); }
//     ready_.notify_one();
//   }
//   Job pop() CC_EXCLUDES(mu_) {
//     MutexLock lock(mu_);
//     while (jobs_.empty()) ready_.wait(mu_);   // the condition is read here, under the lock
//     ...
//   }
//
// Why not std::mutex: libstdc++ declares no capability on it, so the analysis cannot see a lock
// being taken and every guarded access would look unguarded (or, under GCC, nothing is checked at
// all). These wrappers add no state and inline to the std calls.
// Why CondVar waits take no predicate: a predicate lambda is a separate function to the analysis,
// which would not know the lock is held inside it; a `while (!cond) cv.wait(mu)` loop reads the
// condition where it does.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "chronocache/base/cpu_relax.h"
#include "chronocache/base/thread_annotations.h"

namespace chronocache {

class CC_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() CC_ACQUIRE() { mu_.lock(); }
  void unlock() CC_RELEASE() { mu_.unlock(); }
  bool try_lock() CC_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // lock(), after up to `tries` attempts a pause apart: for a lock held for less time than a sleep
  // and a wake-up on the futex cost (both system calls, and a context switch on each side).
  void lock_spinning(int tries) CC_ACQUIRE() {
    for (; tries > 0; --tries) {
      if (mu_.try_lock()) return;
      cpu_relax();
    }
    mu_.lock();
  }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope. unlock() and lock() let a scope leave its critical section and come
// back (a worker doing the slow part of its job unlocked); the destructor unlocks only if held.
class CC_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) CC_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() CC_RELEASE() {
    if (locked_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() CC_RELEASE() {
    mu_.unlock();
    locked_ = false;
  }
  void lock() CC_ACQUIRE() {
    mu_.lock();
    locked_ = true;
  }

 private:
  Mutex& mu_;
  bool locked_ = true;
};

// A condition variable waited on with a held Mutex. Wakeups may be spurious: wait in a loop.
class CondVar {
 public:
  // Releases `mu`, sleeps until notified, takes `mu` again before returning.
  void wait(Mutex& mu) CC_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's MutexLock releases it
  }
  // The same, returning std::cv_status::timeout once `deadline` has passed.
  template <class ClockT, class Dur>
  std::cv_status wait_until(Mutex& mu, const std::chrono::time_point<ClockT, Dur>& deadline)
      CC_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const std::cv_status status = cv_.wait_until(lock, deadline);
    lock.release();
    return status;
  }
  template <class Rep, class Period>
  std::cv_status wait_for(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout)
      CC_REQUIRES(mu) {
    return wait_until(mu, std::chrono::steady_clock::now() + timeout);
  }

  void notify_one() noexcept { cv_.notify_one(); }
  void notify_all() noexcept { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace chronocache
