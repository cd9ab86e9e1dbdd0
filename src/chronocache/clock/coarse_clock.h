// CoarseClock: a process-wide millisecond tick, read with one relaxed atomic load.
//
// Why: steady_clock::now() costs ~20 ns and CLOCK_MONOTONIC_COARSE ~5-9 ns yet ticks only every
// 4 ms on a HZ=250 kernel; a cache hit should cost less than either. The tick is refreshed from
// steady_clock by
//   * a ticker thread, shared by every CoarseClock in the process and alive while any exists,
//     that wakes every kTickerPeriod (1 ms), so an embedder gets <= 1 ms precision (plus
//     scheduler delay on an overloaded machine) without doing anything; and
//   * refresh(), which a host with its own loop (the server, once per event-loop batch) calls so
//     that the time it uses for a batch is exact at the batch's start.
// The tick never moves backwards: concurrent refreshes keep the maximum.
// bench/micro/clock_bench.cc measures the read against steady_clock and CLOCK_MONOTONIC_COARSE.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "chronocache/clock/clock.h"

namespace chronocache {

namespace detail {
// Milliseconds since steady_clock's epoch; written by CoarseClock::refresh().
inline std::atomic<std::int64_t> coarse_tick_ms{0};
}  // namespace detail

class CoarseClock {
 public:
  static constexpr Duration kTickerPeriod{1};

  // Attaches to the shared ticker (starting it if this is the first clock) and refreshes the tick,
  // so the first reading is already current.
  CoarseClock() noexcept;
  CoarseClock(const CoarseClock&) noexcept;
  CoarseClock& operator=(const CoarseClock&) noexcept { return *this; }
  ~CoarseClock();

  TimePoint now() const noexcept {
    return TimePoint(Duration(detail::coarse_tick_ms.load(std::memory_order_relaxed)));
  }

  // Reads steady_clock and publishes it as the tick; returns the new reading.
  static TimePoint refresh() noexcept;
};

static_assert(Clock<CoarseClock>);

}  // namespace chronocache
