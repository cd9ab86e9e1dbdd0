// CacheOptions: the knobs of one Cache (or of each shard of a ShardedCache), set at construction.
// CacheFeatures: what a Cache keeps at compile time, for the users who want it.
#pragma once

#include <cstddef>

namespace chronocache {

struct CacheOptions {
  // Most entries the cache stores (expired-but-unreclaimed entries count). 0 = unbounded.
  // When full, a new key evicts the policy's victim; with TtlOnly it is refused instead.
  std::size_t max_entries = 0;
  // Most bytes the cache holds, counted as Cache::memory_used(): the table, the policy's own
  // structures, and what keys and values own on the heap (HeapBytes). 0 = unbounded. A put that
  // would pass it evicts the policy's victims first (TtlOnly: the put of a new key is refused).
  std::size_t max_bytes = 0;
  // Entries to make room for up front (like reserve()); 0 = grow on demand from one group.
  std::size_t initial_capacity = 0;
};

// Chosen at compile time, since each costs every write a few instructions that most users would
// pay for nothing: Cache<..., CacheFeatures{.count_volatile = true}>.
struct CacheFeatures {
  // Keep Cache::volatile_stored_size(), how many stored entries have a deadline, exact and O(1)
  // (Redis's INFO keyspace `expires=`): a few instructions on each write and erase (about 8 of
  // a whole SET request's ~1 700 in the server: docs/performance.md).
  bool count_volatile = false;
};

}  // namespace chronocache
