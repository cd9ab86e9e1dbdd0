// LoadingOptions: the knobs of one LoadingCache, set at construction. Every feature is off by
// default (a zero duration, enabled = false): with all of them off a get that hits costs what
// ShardedCache::get costs (loading_cache.h, "Cost").
#pragma once

#include <cstddef>

#include "chronocache/clock/clock.h"
#include "chronocache/loading/adaptive_ttl.h"
#include "chronocache/loading/bounded_executor.h"
#include "chronocache/options.h"
#include "chronocache/predict/successor_model_options.h"

namespace chronocache {

// Predictive prefetch (docs/design/prefetch.md): after each get, the caller's AccessStream records
// previous -> key in a SuccessorModel, and the keys the model predicts after `key` are prefetched
// (background loads, dropped under back-pressure), before the get waits for its own load.
struct PrefetchOptions {
  // Off: no model is allocated and a get costs what it costs without this option.
  bool enabled = false;
  // The model's table (4 MiB for integer keys at the default 65 536 rows).
  SuccessorModelOptions model{};
  // At most this many of the key's predicted successors are prefetched per get (strongest
  // first; at most SuccessorModel's kMaxPredictions, 4). At the default min_confidence of 0.6
  // the model predicts at most one key anyway.
  std::size_t max_per_get = 1;
  // Read-ahead: from the strongest prediction, follow the model's strongest prediction again,
  // up to `depth` keys ahead in all (1: the key's successors only), for as long as the chain's
  // probability (the product of its steps' confidences) stays at least model.min_confidence. A
  // reader that reads a chain back to back waits for one load per `depth` keys instead of one
  // per key, and a chain of uncertain steps stops where a guess would be more likely wrong than
  // a single prediction may be.
  std::size_t depth = 4;
  // With a bulk loader: a get that misses and loads its key itself loads the keys it predicts in
  // the same bulk call (one backend round trip, as a file system's read-ahead extends the read
  // that missed), so they are stored before the get returns, instead of racing it on the
  // executor. A hit, or a miss that joins a load in flight, prefetches in the background as
  // usual. Without a bulk loader this changes nothing. For backends whose bulk call costs about
  // what a single one does (a round trip to MGET, a query with IN).
  bool bundle = false;
};

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

  PrefetchOptions prefetch{};

  // Stripes of the in-flight table (single-flight) and of the loading counters; a power of two.
  std::size_t flight_stripes = 16;
};

}  // namespace chronocache
