// run_experiment: every (policy, cache size) pair of a run over one decoded trace, spread over
// threads.
//
// Runs are independent (each owns its Cache and only reads the shared Trace), so they need no
// locking: workers take the next pair from one atomic counter and write their result into their
// own element of a vector sized up front. The calling thread only waits, waking every
// kTickInterval to let a progress bar redraw.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "sim/policy_registry.h"
#include "sim/replay.h"
#include "sim/trace.h"

namespace chronocache::sim {

struct RunResult {
  std::string_view policy;  // PolicyEntry::name (static storage)
  std::size_t cache_size = 0;
  ReplayResult replay;

  double hit_ratio() const noexcept {
    return replay.requests == 0
               ? 0.0
               : static_cast<double>(replay.hits) / static_cast<double>(replay.requests);
  }
  double miss_ratio() const noexcept { return replay.requests == 0 ? 0.0 : 1.0 - hit_ratio(); }
};

inline constexpr std::chrono::milliseconds kTickInterval{100};

// Results in policy-major order: for each policy (in the given order), each size (in the given
// order). `threads` 0 means one per hardware thread. `on_tick(requests_done)` runs on the calling
// thread about every kTickInterval while the runs go on (the total is requests * runs).
std::vector<RunResult> run_experiment(const Trace& trace,
                                      std::span<const PolicyEntry* const> policies,
                                      std::span<const std::size_t> sizes, unsigned threads,
                                      const std::function<void(std::uint64_t)>& on_tick = {});

}  // namespace chronocache::sim
