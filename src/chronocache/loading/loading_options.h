// LoadingOptions: the knobs of one LoadingCache, set at construction. Every feature is off by
// default (a zero duration, enabled = false): with all of them off a get that hits costs what
// ShardedCache::get costs (loading_cache.h, "Cost").
#pragma once

#include <cstddef>

#include "chronocache/clock/clock.h"
#include "chronocache/loading/adaptive_ttl.h"
#include "chronocache/loading/bounded_executor.h"
#include "chronocache/options.h"

namespace chronocache {

struct LoadingOptions {
  // Bounds of the underlying ShardedCache (max_entries, max_bytes), and its shard count.
  CacheOptions cache{};  // `{}`: lets `{.refresh_after = 1s}` leave it out without a warning
  std::size_t shard_count = 16;

  // An entry is gone (the next get loads) this long after it was loaded or put. 0: never.
  // With adaptive TTL on, the first TTL a key gets (clamped to [min_ttl, max_ttl]; 0: min_ttl).
  Duration expire_after_write{0};

  // Caffeine's refreshAfterWrite: a get of an entry at least this old returns it at once and
  // schedules one background reload. 0: off. Meaningful only below the entry's expiry.
  Duration refresh_after{0};

  // A loader's NotFound is cached this long (get answers "not found" without calling the loader
  // until then). 0: off, every get of an absent key calls the loader.
  Duration negative_ttl{0};

  AdaptiveTtlOptions adaptive{};

  // The background workers: refreshes, prefetches and get_async loads.
  ExecutorOptions executor{};

  // Stripes of the in-flight table (single-flight) and of the loading counters; a power of two.
  std::size_t flight_stripes = 16;
};

}  // namespace chronocache
