// Time as the engine sees it: whole milliseconds on a monotonic clock.
//
// A Clock is anything with `now() const noexcept -> TimePoint`. The engine reads it at most once
// per operation (ShardedCache and the server read it once per batch and pass the reading down), so
// a clock must be cheap: CoarseClock returns a cached tick, ManualClock returns what a test set.
// Deadlines are stored with millisecond resolution; a clock with a finer tick gains nothing.
#pragma once

#include <chrono>
#include <concepts>

namespace chronocache {

using Duration = std::chrono::milliseconds;
using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

template <class C>
concept Clock = std::copy_constructible<C> && requires(const C& clock) {
  { clock.now() }
  noexcept->std::same_as<TimePoint>;
};

}  // namespace chronocache
