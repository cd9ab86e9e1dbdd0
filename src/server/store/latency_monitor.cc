#include "server/store/latency_monitor.h"

#include "server/base/ascii.h"

namespace chronocached {

void LatencyMonitor::add(std::string_view event, std::uint64_t ms, std::int64_t unix_seconds) {
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& series = it->second;
  if (ms > series.max_ms) series.max_ms = ms;
  Sample& latest = series.samples[(series.next + kHistory - 1) % kHistory];
  if (latest.unix_seconds == unix_seconds) {  // one sample a second: the larger
    if (ms > latest.ms) latest.ms = ms;
    return;
  }
  series.samples[series.next] = Sample{unix_seconds, ms};
  series.next = (series.next + 1) % kHistory;
}

std::size_t LatencyMonitor::reset(std::span<const std::string_view> events) {
  if (events.empty()) {
    const std::size_t all = events_.size();
    events_.clear();
    return all;
  }
  // Names match as Redis's strcasecmp matches them (LATENCY HISTORY's lookup is exact, as there).
  std::size_t forgotten = 0;
  for (std::string_view event : events)
    forgotten +=
        std::erase_if(events_, [&](const auto& entry) { return option_is(event, entry.first); });
  return forgotten;
}

}  // namespace chronocached
