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

// Cycles per microsecond over a short spin of `over`: a first rate for a process that times
// commands before its tick has calibrated one (without it, a server's first 100 ms of
// commandstats, SLOWLOG and latency histograms read cycles at a guessed 1 GHz).
inline double measure_cycles_per_usec(std::chrono::microseconds over) noexcept {
  const auto start_time = std::chrono::steady_clock::now();
  const std::uint64_t start_cycles = cycles_now();
  auto elapsed = std::chrono::steady_clock::now() - start_time;
  while (elapsed < over) elapsed = std::chrono::steady_clock::now() - start_time;
  const std::uint64_t cycles = cycles_now() - start_cycles;
  return cycles_per_usec(cycles, elapsed);
}

// Cycles per microsecond, measured between two (cycles, steady time) readings.
class CycleRate {
 public:
  CycleRate() : first_cycles_(cycles_now()), first_time_(std::chrono::steady_clock::now()) {}

  void calibrate() noexcept {
    const std::uint64_t cycles = cycles_now();
    const auto elapsed = std::chrono::steady_clock::now() - first_time_;
    if (elapsed >= std::chrono::milliseconds(1)) {
      per_usec_ = cycles_per_usec(cycles - first_cycles_, elapsed);
      calibrated_ = true;
    }
  }
  double per_usec() const noexcept { return per_usec_; }
  // Whether per_usec() was measured (a millisecond has passed since construction).
  bool calibrated() const noexcept { return calibrated_; }

 private:
  std::uint64_t first_cycles_;
  std::chrono::steady_clock::time_point first_time_;
  double per_usec_ = 1000.0;  // until the first calibration: a 1 GHz guess
  bool calibrated_ = false;
};

}  // namespace chronocached
