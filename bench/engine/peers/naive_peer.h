// NaivePeer: the deliberately naive TTL cache, the design a first attempt usually is and the
// baseline our "vs naive" column divides by. Kept faithful on purpose; do not optimise it:
//   * std::unordered_map<K, Entry> with the default hash (identity for int) and allocator
//     (one node allocation per entry);
//   * one std::mutex, locked on every call, even uncontended;
//   * std::chrono::steady_clock::now() read on every call (a vDSO call, ~20 ns);
//   * lazy expiry: a get that meets an expired entry erases it and misses.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace chronocache::bench {

template <class K, class V>
class NaivePeer {
 public:
  using key_type = K;
  using mapped_type = V;
  static constexpr std::string_view kName = "naive";

  [[gnu::always_inline]] void put(const K& key, V value, std::chrono::milliseconds ttl) {
    std::lock_guard lock(mu_);
    if (ttl <= std::chrono::milliseconds::zero()) {
      map_.erase(key);
      return;
    }
    map_.insert_or_assign(key, Entry{std::move(value), std::chrono::steady_clock::now() + ttl});
  }

  [[gnu::always_inline]] std::optional<V> get(const K& key) {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    const auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    if (it->second.deadline <= now) {
      map_.erase(it);
      return std::nullopt;
    }
    return it->second.value;
  }

  std::size_t size() const {
    std::lock_guard lock(mu_);
    return map_.size();
  }
  void reserve(std::size_t entries) {
    std::lock_guard lock(mu_);
    map_.reserve(entries);
  }

 private:
  struct Entry {
    V value;
    std::chrono::steady_clock::time_point deadline;
  };

  mutable std::mutex mu_;
  std::unordered_map<K, Entry> map_;
};

}  // namespace chronocache::bench
