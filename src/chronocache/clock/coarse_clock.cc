#include "chronocache/clock/coarse_clock.h"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace chronocache {

namespace {

// The shared ticker: one thread per process while at least one CoarseClock exists. Attach and
// detach are rare (cache construction), so a mutex is fine here; the hot path never touches it.
class Ticker {
 public:
  static Ticker& instance() noexcept {
    static Ticker ticker;  // never destroyed before a static Cache that outlives main would use it
    return ticker;
  }

  void attach() {
    std::lock_guard lock(mu_);
    if (users_++ == 0) {
      stop_ = false;
      thread_ = std::thread([this] { run(); });
    }
  }

  void detach() {
    std::thread finished;
    {
      std::lock_guard lock(mu_);
      if (--users_ != 0) return;
      stop_ = true;
      finished = std::move(thread_);
    }
    wake_.notify_all();
    finished.join();
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    auto next = std::chrono::steady_clock::now();
    while (!stop_) {
      CoarseClock::refresh();
      next += CoarseClock::kTickerPeriod;
      wake_.wait_until(lock, next, [this] { return stop_; });
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::thread thread_;
  int users_ = 0;
  bool stop_ = false;
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
