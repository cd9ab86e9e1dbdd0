// FlatMapPeer: an open-addressing flat map from a library, with a deadline beside each value read
// from the same CoarseClock ChronoCache uses, and lazy expiry on get. No mutex, like Cache itself,
// so the difference to ChronoCache is the table and the entry layout, not the clock or locking.
// Each library's default hash. Instantiated for boost::unordered_flat_map (Boost 1.81) and
// absl::flat_hash_map (the Swiss table) as BoostFlatPeer and AbslFlatPeer.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include <absl/container/flat_hash_map.h>
#include <boost/unordered/unordered_flat_map.hpp>

#include "chronocache/clock/clock.h"
#include "chronocache/clock/coarse_clock.h"

namespace chronocache::bench {

template <class V>
struct DeadlinedValue {
  V value;
  TimePoint deadline;
};

// Map is the library's map of K to DeadlinedValue<V>; Name is the table column.
template <class K, class V, class Map, const std::string_view& Name>
class FlatMapPeer {
 public:
  using key_type = K;
  using mapped_type = V;
  static constexpr std::string_view kName = Name;

  [[gnu::always_inline]] void put(const K& key, V value, std::chrono::milliseconds ttl) {
    if (ttl <= std::chrono::milliseconds::zero()) {
      map_.erase(key);
      return;
    }
    map_.insert_or_assign(key, DeadlinedValue<V>{std::move(value), clock_.now() + ttl});
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
  void reserve(std::size_t entries) { map_.reserve(entries); }

 private:
  CoarseClock clock_;
  Map map_;
};

inline constexpr std::string_view kBoostFlatName = "boost_flat";
inline constexpr std::string_view kAbslFlatName = "absl_flat";

template <class K, class V>
using BoostFlatPeer =
    FlatMapPeer<K, V, boost::unordered_flat_map<K, DeadlinedValue<V>>, kBoostFlatName>;
template <class K, class V>
using AbslFlatPeer = FlatMapPeer<K, V, absl::flat_hash_map<K, DeadlinedValue<V>>, kAbslFlatName>;

}  // namespace chronocache::bench
