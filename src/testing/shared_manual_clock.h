// SharedManualClock: time that one thread moves while others read it (ManualClock is for one
// thread). Copies share one time, so a cache's copy and the test's move together. A thread may
// pin what it reads itself, to know the `now` of its next calls exactly.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "chronocache/clock/clock.h"

namespace chronocache::test_support {

class SharedManualClock {
 public:
  TimePoint now() const noexcept {
    return pinned_ ? *pinned_ : TimePoint(Duration(ms_->load(std::memory_order_acquire)));
  }
  void advance(Duration step) noexcept { ms_->fetch_add(step.count(), std::memory_order_acq_rel); }
  static void pin_for_this_thread(std::optional<TimePoint> now) noexcept { pinned_ = now; }

 private:
  std::shared_ptr<std::atomic<std::int64_t>> ms_ =
      std::make_shared<std::atomic<std::int64_t>>(1'000'000);
  static inline thread_local std::optional<TimePoint> pinned_;
};

static_assert(Clock<SharedManualClock>);

}  // namespace chronocache::test_support
