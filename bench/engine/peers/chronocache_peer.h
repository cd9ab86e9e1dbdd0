// ChronoCachePeer: chronocache::Cache with its defaults (TtlOnly policy, CoarseClock, DefaultHash),
// exactly as an embedder would declare it; CompactChronoCachePeer the same with CompactIntHash,
// whose table keeps 2 bytes of each 32-bit key (base/compact_int_hash.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include "chronocache/base/compact_int_hash.h"
#include "chronocache/base/hash.h"
#include "chronocache/cache.h"
#include "chronocache/clock/coarse_clock.h"
#include "chronocache/policy/ttl_only.h"

namespace chronocache::bench {

template <class K, class V, class Hash = DefaultHash<K>>
class ChronoCachePeer {
 public:
  using key_type = K;
  using mapped_type = V;
  static constexpr std::string_view kName =
      QuotientHash<Hash> ? "chronocache_compact" : "chronocache";

  [[gnu::always_inline]] void put(const K& key, V value, std::chrono::milliseconds ttl) {
    static_cast<void>(cache_.put(key, std::move(value), ttl));
  }
  [[gnu::always_inline]] std::optional<V> get(const K& key) { return cache_.get(key); }
  std::size_t size() const { return cache_.size(); }
  void reserve(std::size_t entries) { cache_.reserve(entries); }

  // What the engine believes it holds; engine_memory prints it beside the counted heap bytes.
  std::size_t memory_bytes() const { return cache_.memory_bytes(); }
  // Memory outside the heap (pages the table maps itself), which engine_memory adds to its count.
  std::size_t mapped_bytes() const { return cache_.mapped_bytes(); }
  std::size_t peak_mapped_bytes() const { return cache_.peak_mapped_bytes(); }

 private:
  Cache<K, V, TtlOnly, CoarseClock, Hash> cache_;
};

template <class K, class V>
using CompactChronoCachePeer = ChronoCachePeer<K, V, CompactIntHash<K>>;

}  // namespace chronocache::bench
