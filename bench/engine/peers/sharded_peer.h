// ShardedCache (the thread-safe cache) behind the peer interface, for counting what its read path
// costs over Cache's in one thread (engine_ops, `make bench-instructions`): hashing, the shard
// choice, the reader announcement and the stripe's hit counter. Not in AllPeers: the engine
// tables compare single-threaded maps.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include "chronocache/sharded_cache.h"

namespace chronocache::bench {

template <class K, class V>
class ShardedPeer {
 public:
  using key_type = K;
  using mapped_type = V;
  static constexpr std::string_view kName = "chronocache_sharded";

  [[gnu::always_inline]] void put(const K& key, V value, std::chrono::milliseconds ttl) {
    static_cast<void>(cache_.put(key, std::move(value), ttl));
  }
  [[gnu::always_inline]] std::optional<V> get(const K& key) { return cache_.get(key); }
  std::size_t size() const { return cache_.size(); }

 private:
  ShardedCache<K, V> cache_;
};

}  // namespace chronocache::bench
