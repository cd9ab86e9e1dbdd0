// StoredEntry<V>: what LoadingCache keeps in its ShardedCache for a key: the value (or a cached
// "not found"), when it was written, the key's adaptive TTL and the prefetch bit.
//
//   value       std::optional<V>   nullopt: a negative entry (the loader said NotFound)
//   written     TimePoint (8 B)    load or put time: refresh age and adaptive staleness count from
//   it ttl_ms      uint32 (4 B)       adaptive TTL: this key's current freshness; 0 when off
//   prefetched  bool (1 B)         loaded by prefetch() and not yet read (one bit, in the padding)
//
// Why the metadata rides in the value instead of a side table: a get reads it in the same copy
// as the value, under the one shard lock it takes anyway, so a hit costs no second hash and no
// second lock (loading_cache.h, "Cost"). The price is 16 bytes per entry beside V.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "chronocache/clock/clock.h"
#include "chronocache/memory/heap_bytes.h"

namespace chronocache {

namespace detail {

template <class V>
struct StoredEntry {
  std::optional<V> value;
  TimePoint written;
  std::uint32_t ttl_ms = 0;
  bool prefetched = false;

  Duration ttl() const noexcept { return Duration(ttl_ms); }
};

}  // namespace detail

// max_bytes counts the value's heap bytes, not the metadata's (it has none).
template <class V>
struct HeapBytes<detail::StoredEntry<V>> {
  static std::size_t of(const detail::StoredEntry<V>& entry) noexcept {
    return entry.value ? HeapBytes<V>::of(*entry.value) : 0;
  }
};

}  // namespace chronocache
