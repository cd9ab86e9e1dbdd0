// CacheOptions: the knobs of one Cache (or of each shard of a ShardedCache), set at construction.
#pragma once

#include <cstddef>

namespace chronocache {

struct CacheOptions {
  // Most entries the cache stores (expired-but-unreclaimed entries count). 0 = unbounded.
  // When full, a new key evicts the policy's victim; with TtlOnly it is refused instead.
  std::size_t max_entries = 0;
  // Entries to make room for up front (like reserve()); 0 = grow on demand from one group.
  std::size_t initial_capacity = 0;
};

}  // namespace chronocache
