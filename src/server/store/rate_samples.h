// RateSamples: what INFO's instantaneous_* fields report (ops per second, input and output
// kbps). As Redis does, a running total is sampled every 100 ms (on the server's housekeeping
// tick), each sample is the per-second rate since the one before, and the figure is the mean of
// the last 16: a burst shows within a tick and fades out over 16 of them, and an idle server
// reads 0. Traffic before the first tick counts: the count starts when the server does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace chronocached {

class RateSamples {
 public:
  static constexpr std::size_t kSamples = 16;
  static constexpr std::int64_t kPeriodMs = 100;

  // Counting from `total` at `now_ms` (the server's start, CONFIG RESETSTAT), with every sample
  // 0: what the counter gains from here shows at the next add().
  explicit RateSamples(std::int64_t now_ms = 0, std::uint64_t total = 0) noexcept
      : last_ms_(now_ms), last_total_(total) {}
  void restart(std::int64_t now_ms, std::uint64_t total) noexcept {
    *this = RateSamples(now_ms, total);
  }

  // Samples the running `total` at `now_ms` (milliseconds, the same epoch as the start), at
  // most once per kPeriodMs: a call sooner than that after the last sample is ignored, so that
  // 16 samples span 1.6 s whatever the caller's pace (the server's tick runs every 1000 / hz
  // ms; Redis samples every 100 ms at any hz of 10 or more). A total below the last one's (a
  // counter reset that restart() was not told of) adds no sample and counts from here.
  void add(std::int64_t now_ms, std::uint64_t total) noexcept {
    if (now_ms - last_ms_ < kPeriodMs) return;
    if (total >= last_total_) {
      samples_[next_] =
          (total - last_total_) * 1000 / static_cast<std::uint64_t>(now_ms - last_ms_);
      next_ = (next_ + 1) % kSamples;
    }
    last_ms_ = now_ms;
    last_total_ = total;
  }

  // The mean of the last kSamples rates, per second (samples not yet taken count as 0).
  std::uint64_t per_second() const noexcept {
    std::uint64_t sum = 0;
    for (const std::uint64_t s : samples_) sum += s;
    return sum / kSamples;
  }

 private:
  std::array<std::uint64_t, kSamples> samples_{};
  std::size_t next_ = 0;
  std::int64_t last_ms_;
  std::uint64_t last_total_;
};

}  // namespace chronocached
