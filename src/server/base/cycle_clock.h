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

// Cycles per microsecond over a short spin of `over`: a first rate for a process that times
// commands before its tick has calibrated one (without it, a server's first 100 ms of
// commandstats, SLOWLOG and latency histograms read cycles at a guessed 1 GHz).
inline double measure_cycles_per_usec(std::chrono::microseconds over) noexcept {
  const auto start_time = std::chrono::steady_clock::now();
  const std::uint64_t start_cycles = cycles_now();
  auto elapsed = std::chrono::steady_clock::now() - start_time;
  while (elapsed < over) elapsed = std::chrono::steady_clock::now() - start_time;
  const std::uint64_t cycles = cycles_now() - start_cycles;
  const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count();
  return usec > 0 ? static_cast<double>(cycles) / static_cast<double>(usec) : 1000.0;
}

// Cycles per microsecond, measured between two (cycles, steady time) readings.
class CycleRate {
 public:
  CycleRate() : first_cycles_(cycles_now()), first_time_(std::chrono::steady_clock::now()) {}

  void calibrate() noexcept {
    const std::uint64_t cycles = cycles_now();
    const auto elapsed = std::chrono::steady_clock::now() - first_time_;
    const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count();
    if (usec >= 1000) {
      per_usec_ = static_cast<double>(cycles - first_cycles_) / static_cast<double>(usec);
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
