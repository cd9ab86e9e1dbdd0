// ManualClock: time that moves only when a test says so (memcached's `debugtime`, Caffeine's
// Ticker). Tests advance it instead of sleeping, so expiry tests are exact and instant.
//
//   chronocache::Cache<int, int, chronocache::TtlOnly, chronocache::ManualClock> cache;
//   cache.put(1, 10, 5s);
//   cache.clock().advance(5s);   // the entry's deadline is now: it is gone
#pragma once

#include "chronocache/base/assert.h"
#include "chronocache/clock/clock.h"

namespace chronocache {

class ManualClock {
 public:
  // Starts at an arbitrary non-zero point, so code that confuses "time zero" with "no time" fails.
  explicit ManualClock(TimePoint start = TimePoint(Duration(1'000'000))) noexcept : now_(start) {}

  TimePoint now() const noexcept { return now_; }

  // Time never runs backwards: a negative step is a test bug.
  void advance(Duration step) noexcept {
    CC_CHECK(step.count() >= 0, "ManualClock only moves forward");
    now_ += step;
  }

 private:
  TimePoint now_;
};

static_assert(Clock<ManualClock>);

}  // namespace chronocache
