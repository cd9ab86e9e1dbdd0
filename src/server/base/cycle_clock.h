// CycleClock: the CPU's time-stamp counter, for timing each command (INFO commandstats) at a
// cost of a few cycles instead of two clock_gettime calls (~40 ns per command, measured under
// callgrind as ~80 instructions). The counter is converted to microseconds only when INFO is
// rendered, with a rate calibrated against the steady clock on every server tick.
// Requires an invariant TSC (constant_tsc, nonstop_tsc: every x86-64 server CPU of the last
// decade); elsewhere it falls back to the steady clock in nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace chronocached {

inline std::uint64_t cycles_now() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch() /
                                    std::chrono::nanoseconds(1));
#endif
}

// `cycles` over `elapsed` as cycles per microsecond, from the elapsed nanoseconds: whole
// microseconds would truncate, always downwards, and so overstate the rate (by up to 1 in 2 000
// over the first calibration's 2 ms), making every duration converted with it read short: a
// DEBUG SLEEP 0.1 logged by SLOWLOG as 99 984 us.
inline double cycles_per_usec(std::uint64_t cycles,
                              std::chrono::steady_clock::duration elapsed) noexcept {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
  return ns > 0 ? static_cast<double>(cycles) * 1000.0 / static_cast<double>(ns) : 1000.0;
}

// The counter and the steady clock read together: the clock between two reads of the counter,
// paired with their midpoint, retried while the two counter reads lie far apart. A thread
// preempted between reading one clock and the other would otherwise pair a time with a count
// taken later, and every rate measured from the pair would be off by the lost time: under
// make test's load a 2 ms calibration came out 0.3 % high, and SLOWLOG read a 100 ms sleep as
// 99 691 us.
struct ClockReading {
  std::uint64_t cycles;
  std::chrono::steady_clock::time_point time;
};
inline ClockReading read_clocks() noexcept {
  // A steady_clock read takes well under 1 000 cycles (vDSO); a wider bracket was interrupted.
  constexpr std::uint64_t kTight = 1000;
  ClockReading best{};
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int attempt = 0; attempt < 16 && best_width > kTight; ++attempt) {
    const std::uint64_t before = cycles_now();
    const auto time = std::chrono::steady_clock::now();
    const std::uint64_t width = cycles_now() - before;
    if (width < best_width) {
      best_width = width;
      best = ClockReading{before + width / 2, time};
    }
  }
  return best;
}

// Cycles per microsecond between two readings.
inline double cycles_per_usec(const ClockReading& from, const ClockReading& to) noexcept {
  return cycles_per_usec(to.cycles - from.cycles, to.time - from.time);
}

// Cycles per microsecond over a short spin of `over`: a first rate for a process that times
// commands before its tick has calibrated one (without it, a server's first 100 ms of
// commandstats, SLOWLOG and latency histograms read cycles at a guessed 1 GHz).
inline double measure_cycles_per_usec(std::chrono::microseconds over) noexcept {
  const ClockReading start = read_clocks();
  while (std::chrono::steady_clock::now() - start.time < over) {
  }
  return cycles_per_usec(start, read_clocks());
}

// Cycles per microsecond, measured between the reading taken at construction and the latest.
class CycleRate {
 public:
  CycleRate() : first_(read_clocks()) {}

  void calibrate() noexcept {
    const ClockReading now = read_clocks();
    if (now.time - first_.time >= std::chrono::milliseconds(1)) {
      per_usec_ = cycles_per_usec(first_, now);
      calibrated_ = true;
    }
  }
  double per_usec() const noexcept { return per_usec_; }
  // Whether per_usec() was measured (a millisecond has passed since construction).
  bool calibrated() const noexcept { return calibrated_; }

 private:
  ClockReading first_;
  double per_usec_ = 1000.0;  // until the first calibration: a 1 GHz guess
  bool calibrated_ = false;
};

}  // namespace chronocached
