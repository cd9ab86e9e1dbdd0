// CycleThreshold: a time threshold in microseconds, also held in time-stamp-counter cycles
// (server/base/cycle_clock.h), so that a check made on every command is one integer compare:
// `cycles >= threshold.cycles()` never misses a time at or over the threshold (the cycle count
// is rounded down), and only those candidates are converted to time and checked exactly.
#pragma once

#include <cstdint>
#include <limits>

namespace chronocached {

class CycleThreshold {
 public:
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

  // `usec` < 0: nothing reaches it.
  void set_usec(std::int64_t usec) noexcept {
    usec_ = usec;
    update();
  }
  void set_cycles_per_usec(double rate) noexcept {
    cycles_per_usec_ = rate;
    update();
  }
  std::int64_t usec() const noexcept { return usec_; }
  std::uint64_t cycles() const noexcept { return cycles_; }
  // The exact check, for a candidate that passed cycles().
  bool reached_by(std::uint64_t usec) const noexcept {
    return usec_ >= 0 && usec >= static_cast<std::uint64_t>(usec_);
  }

 private:
  void update() noexcept {
    if (usec_ < 0) {
      cycles_ = kNever;
      return;
    }
    const double cycles = static_cast<double>(usec_) * cycles_per_usec_;
    cycles_ = cycles >= 1.8e19 ? kNever : static_cast<std::uint64_t>(cycles);
  }

  std::int64_t usec_ = -1;
  double cycles_per_usec_ = 1000.0;
  std::uint64_t cycles_ = kNever;
};

}  // namespace chronocached
