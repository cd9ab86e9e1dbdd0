// LoadingStats: what a LoadingCache has counted since construction (Caffeine's CacheStats, plus
// refresh, prefetch and adaptive-TTL counters). Summed by LoadingCache::stats() from per-stripe
// counters (each kept under its stripe's mutex, on paths that take it anyway) and from the
// underlying ShardedCache's own hit and miss counts, so a get that hits counts nothing of ours.
#pragma once

#include <cstdint>

#include "chronocache/clock/clock.h"
#include "chronocache/stats.h"

namespace chronocache {

struct LoadingStats {
  // As Caffeine counts them: a get that ran a load is a miss, and one that waited for a load
  // another started (a get's, a refresh's or a prefetch's) is a hit, as Caffeine's waiter on
  // another thread's computation is. `joins` counts the latter apart.
  std::uint64_t hits = 0;    // gets (and get_all keys) answered without a load of their own
  std::uint64_t misses = 0;  // gets that ran a load, and get_if_present calls that found nothing
  std::uint64_t joins = 0;   // hits that waited for a load in flight (misses + joins: all waits)

  std::uint64_t loads = 0;           // loader answers: successes + not_found + failures
  std::uint64_t load_successes = 0;  // ... with a value
  std::uint64_t load_not_found = 0;  // ... with NotFound (Caffeine counts a null as a failure)
  std::uint64_t load_failures = 0;   // ... with an error (never cached)
  Duration total_load_time{0};       // by the cache's clock, summed over loads

  std::uint64_t refreshes = 0;          // background reloads scheduled by refresh_after
  std::uint64_t refresh_failures = 0;   // of which the loader failed (the old value stays)
  std::uint64_t refreshes_dropped = 0;  // not scheduled: the executor's queue was full

  std::uint64_t prefetches_issued = 0;  // prefetch() calls that scheduled a load
  std::uint64_t prefetches_used = 0;  // prefetched entries a get then read (accuracy: used/issued)
  std::uint64_t prefetches_dropped = 0;  // not scheduled: the executor's queue was full
  std::uint64_t prefetches_bundled = 0;  // of those issued: loaded with a miss (prefetch.bundle)

  std::uint64_t loads_on_caller = 0;  // get_async loads run on the caller: the queue was full
  std::uint64_t cancelled = 0;        // queued loads cancelled by shutdown (waiters got kShutDown)

  std::uint64_t ttl_grown = 0;   // adaptive: reloads that found the value unchanged
  std::uint64_t ttl_shrunk = 0;  // adaptive: reloads that found it changed

  CacheStats cache;  // the underlying ShardedCache's (its expired and evicted counts)
};

namespace detail {

// One stripe's share of LoadingStats: plain counters under the stripe's mutex.
struct LoadingCounters {
  std::uint64_t misses = 0;
  std::uint64_t joins = 0;
  std::uint64_t extra_lookups = 0;  // our own re-reads of the ShardedCache (not gets)
  std::uint64_t loads = 0;
  std::uint64_t load_successes = 0;
  std::uint64_t load_not_found = 0;
  std::uint64_t load_failures = 0;
  Duration total_load_time{0};
  std::uint64_t refreshes = 0;
  std::uint64_t refresh_failures = 0;
  std::uint64_t refreshes_dropped = 0;
  std::uint64_t prefetches_issued = 0;
  std::uint64_t prefetches_used = 0;
  std::uint64_t prefetches_dropped = 0;
  std::uint64_t prefetches_bundled = 0;
  std::uint64_t loads_on_caller = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t ttl_grown = 0;
  std::uint64_t ttl_shrunk = 0;

  void add_to(LoadingStats& out) const noexcept {
    out.misses += misses;
    out.joins += joins;
    out.loads += loads;
    out.load_successes += load_successes;
    out.load_not_found += load_not_found;
    out.load_failures += load_failures;
    out.total_load_time += total_load_time;
    out.refreshes += refreshes;
    out.refresh_failures += refresh_failures;
    out.refreshes_dropped += refreshes_dropped;
    out.prefetches_issued += prefetches_issued;
    out.prefetches_used += prefetches_used;
    out.prefetches_dropped += prefetches_dropped;
    out.prefetches_bundled += prefetches_bundled;
    out.loads_on_caller += loads_on_caller;
    out.cancelled += cancelled;
    out.ttl_grown += ttl_grown;
    out.ttl_shrunk += ttl_shrunk;
  }
};

}  // namespace detail
}  // namespace chronocache
