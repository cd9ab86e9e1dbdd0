// LatencyMonitor: Redis's latency monitor (LATENCY LATEST, HISTORY, RESET, DOCTOR). While
// latency-monitor-threshold is above 0, each event that takes at least that many milliseconds
// leaves a sample in its event's series: the unix second and the milliseconds, one sample a
// second (the larger of two in the same second), the latest 160 kept, and the largest ever.
//
//   LatencyMonitor monitor;
//   monitor.set_threshold_ms(5);
//   monitor.add_if_needed("expire-cycle", ms, unix_seconds);
//   monitor.for_each([](std::string_view event, const LatencyMonitor::Series& s) { ... });
//
// chronocached's events: "command" and "fast-command" (a command, by its `fast` flag, as Redis
// names them), "expire-cycle" (a slice of active expiry), "eviction-cycle" (a step of maxmemory's
// background eviction) and "snapshot-step" (a slice of a BGSAVE's capture on the event loop: a
// BGSAVE here forks nothing, so Redis's "fork" has no counterpart).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "server/store/cycle_threshold.h"

namespace chronocached {

class LatencyMonitor {
 public:
  static constexpr std::size_t kHistory = 160;

  struct Sample {
    std::int64_t unix_seconds = 0;  // 0: an empty place
    std::uint64_t ms = 0;
  };
  struct Series {
    std::array<Sample, kHistory> samples{};
    std::size_t next = 0;  // where the next sample goes; the one before is the latest
    std::uint64_t max_ms = 0;

    const Sample& latest() const noexcept { return samples[(next + kHistory - 1) % kHistory]; }
    // fn(const Sample&), oldest first.
    template <class Fn>
    void for_each_sample(Fn&& fn) const {
      for (std::size_t i = 0; i < kHistory; ++i) {
        const Sample& s = samples[(next + i) % kHistory];
        if (s.unix_seconds != 0) fn(s);
      }
    }
  };

  // 0: off (Redis's default).
  void set_threshold_ms(std::int64_t ms) noexcept {
    threshold_ms_ = ms;
    threshold_.set_usec(ms > 0 ? ms * 1000 : -1);
  }
  std::int64_t threshold_ms() const noexcept { return threshold_ms_; }
  void set_cycles_per_usec(double rate) noexcept { threshold_.set_cycles_per_usec(rate); }
  // The threshold in time-stamp-counter cycles (cycle_threshold.h): one compare per command.
  std::uint64_t threshold_cycles() const noexcept { return threshold_.cycles(); }

  void add_if_needed(std::string_view event, std::uint64_t ms, std::int64_t unix_seconds) {
    if (threshold_ms_ > 0 && ms >= static_cast<std::uint64_t>(threshold_ms_))
      add(event, ms, unix_seconds);
  }
  void add(std::string_view event, std::uint64_t ms, std::int64_t unix_seconds);

  const Series* find(std::string_view event) const {
    const auto it = events_.find(event);
    return it == events_.end() ? nullptr : &it->second;
  }
  std::size_t events() const noexcept { return events_.size(); }
  // fn(event, series) in name order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& [event, series] : events_) fn(std::string_view(event), series);
  }
  // Forgets the named events (every event when none is named); returns how many it forgot.
  std::size_t reset(std::span<const std::string_view> events);

 private:
  std::int64_t threshold_ms_ = 0;
  CycleThreshold threshold_;
  std::map<std::string, Series, std::less<>> events_;
};

}  // namespace chronocached
