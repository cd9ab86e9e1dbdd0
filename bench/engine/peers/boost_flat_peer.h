// BoostFlatPeer: boost::unordered_flat_map (Boost 1.81's open-addressing, SIMD-probed table) with
// a deadline beside each value, read from the same CoarseClock ChronoCache uses. No mutex, like
// Cache itself, so the difference to ChronoCache is the table and the entry layout, not the
// clock or locking. Default boost::hash (identity for int; the map post-mixes it).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include <boost/unordered/unordered_flat_map.hpp>

#include "chronocache/clock/clock.h"
#include "chronocache/clock/coarse_clock.h"

namespace chronocache::bench {

template <class K, class V>
class BoostFlatPeer {
 public:
  using key_type = K;
  using mapped_type = V;
  static constexpr std::string_view kName = "boost_flat";

  [[gnu::always_inline]] void put(const K& key, V value, std::chrono::milliseconds ttl) {
    if (ttl <= std::chrono::milliseconds::zero()) {
      map_.erase(key);
      return;
    }
    map_.insert_or_assign(key, Entry{std::move(value), clock_.now() + ttl});
  }

  [[gnu::always_inline]] std::optional<V> get(const K& key) {
    const auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    if (it->second.deadline <= clock_.now()) {
      map_.erase(it);
      return std::nullopt;
    }
    return it->second.value;
  }

  std::size_t size() const { return map_.size(); }

 private:
  struct Entry {
    V value;
    TimePoint deadline;
  };

  CoarseClock clock_;
  boost::unordered_flat_map<K, Entry> map_;
};

}  // namespace chronocache::bench
