// replay: one trace through one of the engine's real policies at one cache size.
//
// The cache is the engine itself, chronocache::Cache<std::uint64_t, Empty, Policy, ManualClock>,
// bounded by max_entries = cache size (in objects): the simulator measures the code that ships,
// not a model of it (Caffeine's simulator does the same with its product policy). The rule is the
// one the reference numbers of the sample traces' README use:
//
//   for each request key:  get(key) ? ++hits : put(key)
//
// Time stands still (ManualClock) unless the trace has TTLs; then each request first advances the
// clock to the request's timestamp (never backwards), and a miss puts with the request's TTL
// (0 = no expiry), so an entry that expired before it was asked for again is a miss.
//
// Cost: the table is reserved for the cache size up front, so the replay loop allocates nothing
// after the first fill (the policy's node pool grows with the entries, then stays). Progress is
// published every kProgressStride requests, one relaxed atomic add, so a progress bar costs
// nothing measurable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/options.h"
#include "chronocache/policy/eviction_policy.h"
#include "sim/trace.h"

namespace chronocache::sim {

// The value of every simulated entry: the engine stores an empty V in no bytes.
struct Empty {};

struct ReplayResult {
  std::uint64_t requests = 0;
  std::uint64_t hits = 0;
};

inline constexpr std::size_t kProgressStride = std::size_t{1} << 16;

template <EvictionPolicy Policy>
ReplayResult replay(const Trace& trace, std::size_t cache_size,
                    std::atomic<std::uint64_t>* progress = nullptr) {
  ReplayResult result;
  result.requests = trace.requests();
  if (cache_size == 0) {  // max_entries = 0 would mean "unbounded"; a zero-size cache never hits
    if (progress != nullptr) progress->fetch_add(result.requests, std::memory_order_relaxed);
    return result;
  }
  Cache<std::uint64_t, Empty, Policy, ManualClock> cache(
      CacheOptions{.max_entries = cache_size, .initial_capacity = cache_size});
  const std::size_t n = trace.requests();
  const bool has_ttls = trace.has_ttls();
  const std::uint32_t first_time = has_ttls && n != 0 ? trace.times_s[0] : 0;
  std::uint64_t clock_s = first_time;  // seconds of trace time the clock has been advanced to
  for (std::size_t begin = 0; begin < n; begin += kProgressStride) {
    const std::size_t end = begin + kProgressStride < n ? begin + kProgressStride : n;
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t key = trace.keys[i];
      if (has_ttls) {
        if (trace.times_s[i] > clock_s) {
          cache.clock().advance(std::chrono::seconds(trace.times_s[i] - clock_s));
          clock_s = trace.times_s[i];
        }
        if (cache.get(key)) {
          ++result.hits;
        } else if (trace.ttls_s[i] != 0) {
          (void)cache.put(key, Empty{}, std::chrono::seconds(trace.ttls_s[i]));
        } else {
          (void)cache.put(key, Empty{});
        }
      } else if (cache.get(key)) {
        ++result.hits;
      } else {
        (void)cache.put(key, Empty{});
      }
    }
    if (progress != nullptr) progress->fetch_add(end - begin, std::memory_order_relaxed);
  }
  return result;
}

}  // namespace chronocache::sim
