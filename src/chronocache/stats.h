// CacheStats: what a cache has counted since construction. Plain counters: a Cache is used by one
// thread at a time (ShardedCache sums its shards' copies under their locks).
#pragma once

#include <cstdint>

namespace chronocache {

struct CacheStats {
  std::uint64_t hits = 0;     // get() found a live entry
  std::uint64_t misses = 0;   // get() found nothing live (absent or expired)
  std::uint64_t expired = 0;  // entries removed because their deadline passed (lazily or swept)
  std::uint64_t evicted = 0;  // live entries removed to make room under max_entries

  CacheStats& operator+=(const CacheStats& other) noexcept {
    hits += other.hits;
    misses += other.misses;
    expired += other.expired;
    evicted += other.evicted;
    return *this;
  }
  friend bool operator==(const CacheStats&, const CacheStats&) = default;
};

}  // namespace chronocache
