#include "chronocache/clock/coarse_clock.h"

#include <pthread.h>

#include <new>
#include <thread>

#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"

namespace chronocache {

namespace {

// The shared ticker: one thread per process while at least one CoarseClock exists. Attach and
// detach are rare (cache construction), so a mutex is fine here; the hot path never touches it.
//
// How it ends, and why this way: a library must never decide how its host exits.
//   * The Ticker is never destroyed. A host may keep a cache alive until exit (leaked, or a static
//     destroyed in any order relative to ours), and CoarseClock users may still run while exit()
//     destroys statics; they all find the ticker intact. A destroyed ticker would instead have to
//     join a thread at static destruction (a hang if the thread needs anything exit() holds) or
//     abort with the thread joinable, which is what std::thread's destructor did here before
//     (exit status 134, the host's buffered stdout lost).
//   * Its thread is detached and stops itself: it exits when it finds no clock attached, and
//     running_ says whether one is still alive, so attach() never starts a second. Nothing ever
//     joins it, so no exit path can wait for it; if clocks are still attached at exit, the thread
//     is simply ended with the process, having touched only the tick and this object, neither of
//     which exit() tears down. (A detached thread cannot outlive code that is unloaded under it:
//     libchronocache is a static library, so that never happens.)
//   * fork(): the child inherits no ticker thread. A child handler clears running_ and, if
//     clocks are attached (a prefork server whose workers use the parent's caches), starts a new
//     one, so time keeps moving in the child. The mutex is held across fork() (prepare/parent/
//     child handlers), so the child never inherits it locked by a thread that does not exist
//     there. Starting a thread in a forked child is beyond POSIX's async-signal-safe list but is
//     supported by glibc; ThreadSanitizer refuses it (die_after_fork), so under TSan a process
//     with live caches must not fork.
//   * TSan sees every shared field under mu_ and the tick as an atomic; a detached thread that is
//     still running at exit is not a leak to it, and LSan finds the Ticker in static storage.
class Ticker {
 public:
  static Ticker& instance() noexcept {
    // Placement-new into static storage, never destroyed (see above).
    alignas(Ticker) static unsigned char storage[sizeof(Ticker)];
    static Ticker* const ticker = [] {
      Ticker* created = new (storage) Ticker;
      // The lock is taken in one handler and let go in another, across fork(): unchecked.
      pthread_atfork([]() CC_NO_THREAD_SAFETY_ANALYSIS { instance().before_fork(); },
                     []() CC_NO_THREAD_SAFETY_ANALYSIS { instance().after_fork_in_parent(); },
                     []() CC_NO_THREAD_SAFETY_ANALYSIS { instance().after_fork_in_child(); });
      return created;
    }();
    return *ticker;
  }

  void attach() CC_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (users_++ == 0 && !running_) start();
  }

  void detach() CC_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (--users_ == 0) wake_.notify_all();  // the thread sees it and ends; nobody waits for it
  }

 private:
  void start() CC_REQUIRES(mu_) {
    running_ = true;
    std::thread([this] { run(); }).detach();
  }

  void run() CC_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    auto next = std::chrono::steady_clock::now();
    while (users_ > 0) {
      CoarseClock::refresh();
      next += CoarseClock::kTickerPeriod;
      while (users_ > 0 && wake_.wait_until(mu_, next) == std::cv_status::no_timeout) {
      }
    }
    running_ = false;  // under the lock: an attach() after this starts a new thread
  }

  void before_fork() CC_ACQUIRE(mu_) { mu_.lock(); }
  void after_fork_in_parent() CC_RELEASE(mu_) { mu_.unlock(); }
  void after_fork_in_child() CC_RELEASE(mu_) {
    running_ = false;  // the parent's ticker thread was not copied
    if (users_ > 0) start();
    mu_.unlock();
  }

  Mutex mu_;
  CondVar wake_;
  int users_ CC_GUARDED_BY(mu_) = 0;
  bool running_ CC_GUARDED_BY(mu_) = false;  // a ticker thread exists (it may be about to end)
};

}  // namespace

CoarseClock::CoarseClock() noexcept {
  refresh();
  Ticker::instance().attach();
}

CoarseClock::CoarseClock(const CoarseClock&) noexcept { Ticker::instance().attach(); }

CoarseClock::~CoarseClock() { Ticker::instance().detach(); }

TimePoint CoarseClock::refresh() noexcept {
  const std::int64_t fresh =
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  std::int64_t seen = detail::coarse_tick_ms.load(std::memory_order_relaxed);
  while (seen < fresh &&
         !detail::coarse_tick_ms.compare_exchange_weak(seen, fresh, std::memory_order_relaxed)) {
  }
  return TimePoint(Duration(seen < fresh ? fresh : seen));
}

}  // namespace chronocache
