// ShardedCache: a thread-safe Cache. N independent Caches ("shards"), each behind its own mutex;
// a key's hash, computed once, picks the shard and is handed to it, so nothing is hashed twice.
//
//   chronocache::ShardedCache<std::string, std::string> cache({.max_entries = 1 << 20}, 16);
//   cache.put("k", "v", 10s);   // from any thread
//
// Threads contend only when they touch the same shard. The clock is read once per call, outside
// every lock. Each shard's options are the given ones divided by the shard count (max_entries and
// max_bytes are per-shard bounds, rounded up), so the whole cache holds about options.max_entries
// entries and options.max_bytes bytes.
// The path to lock-free reads (docs/design/engine.md): get() mutates only counters and, with
// TtlOnly, nothing else, so a reader-writer or seqlock shard is a local change here.
#pragma once

#include <bit>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"
#include "chronocache/cache.h"

namespace chronocache {

template <class K, class V, EvictionPolicy Policy = TtlOnly, Clock ClockT = CoarseClock,
          class Hash = DefaultHash<K>, class Eq = std::equal_to<>>
class ShardedCache {
 public:
  using Shard = Cache<K, V, Policy, ClockT, Hash, Eq>;
  using key_type = K;
  using mapped_type = V;

  // `shard_count` is rounded up to a power of two.
  explicit ShardedCache(CacheOptions options = {}, std::size_t shard_count = 16,
                        ClockT clock = ClockT())
      : shard_count_(std::bit_ceil(shard_count == 0 ? 1 : shard_count)),
        clock_(clock),
        shards_(std::make_unique<Slot[]>(shard_count_)) {
    CacheOptions per_shard = options;
    per_shard.max_entries = (options.max_entries + shard_count_ - 1) / shard_count_;
    per_shard.max_bytes = (options.max_bytes + shard_count_ - 1) / shard_count_;
    per_shard.initial_capacity = (options.initial_capacity + shard_count_ - 1) / shard_count_;
    for (std::size_t i = 0; i < shard_count_; ++i) {
      Slot& slot = shards_[i];
      MutexLock lock(slot.mu);  // uncontended: no other thread sees the cache yet
      slot.cache.emplace(per_shard, clock_);
    }
  }

  template <class Q, class Rep, class Period>
  PutOutcome put(Q&& key, V value, std::chrono::duration<Rep, Period> ttl) {
    const TimePoint now = clock_.now();
    const TimePoint deadline = detail::deadline_for_ttl(now, ttl);
    return put_until(std::forward<Q>(key), std::move(value), deadline, now);
  }

  template <class Q>
  PutOutcome put(Q&& key, V value) {
    return put_until(std::forward<Q>(key), std::move(value), kNoExpiry, clock_.now());
  }

  template <class Q>
  std::optional<V> get(const Q& key) {
    return with_shard(key, [&](Shard& shard, Hashed h, TimePoint now) {
      return shard.get_prehashed(key, h, now);
    });
  }

  template <class Q>
  bool erase(const Q& key) {
    return with_shard(key, [&](Shard& shard, Hashed h, TimePoint now) {
      return shard.erase_prehashed(key, h, now);
    });
  }

  template <class Q>
  bool contains(const Q& key) {
    return with_shard(key, [&](Shard& shard, Hashed h, TimePoint now) {
      return shard.contains_prehashed(key, h, now);
    });
  }

  // Live entries across shards; each shard is counted under its lock, so concurrent writers may
  // make the total a mix of moments, never a torn count of one shard.
  std::size_t size() const {
    std::size_t total = 0;
    const TimePoint now = clock_.now();  // the shards' own clocks are copies that tests never move
    for_each_shard([&](const Shard& shard) { total += shard.size_at(now); });
    return total;
  }

  // Sweeps `budget_per_shard` slots in every shard; returns entries removed.
  std::size_t reclaim_expired(std::size_t budget_per_shard) {
    const TimePoint now = clock_.now();
    std::size_t reclaimed = 0;
    for_each_shard(
        [&](Shard& shard) { reclaimed += shard.reclaim_expired_at(budget_per_shard, now); });
    return reclaimed;
  }

  void clear() {
    for_each_shard([](Shard& shard) { shard.clear(); });
  }

  CacheStats stats() const {
    CacheStats total;
    for_each_shard([&](const Shard& shard) { total += shard.stats(); });
    return total;
  }

  std::size_t memory_bytes() const {
    std::size_t total = 0;
    for_each_shard([&](const Shard& shard) { total += shard.memory_bytes(); });
    return total;
  }

  // What max_bytes bounds, summed over shards (Cache::memory_used).
  std::size_t memory_used() const {
    std::size_t total = 0;
    for_each_shard([&](const Shard& shard) { total += shard.memory_used(); });
    return total;
  }

  // ---- Point-in-time capture across shards (capture.h), for snapshots of a live cache ----------
  // Every shard's capture begins while all shard locks are held, so together they are the
  // contents at one instant; writers wait only for that O(segments) start. `sink` then hears
  // entries from whichever thread hands a group over (a capture_step, or a writer meeting a
  // pending group), under that shard's lock: it must be safe to call from several threads.
  // (Unchecked: the analysis cannot follow locks taken in a loop.)
  void begin_capture(CaptureSink<K, V>& sink) CC_NO_THREAD_SAFETY_ANALYSIS {
    const TimePoint now = clock_.now();
    for (std::size_t i = 0; i < shard_count_; ++i) shards_[i].mu.lock();
    for (std::size_t i = 0; i < shard_count_; ++i) shards_[i].cache->begin_capture(sink, now);
    for (std::size_t i = shard_count_; i-- > 0;) shards_[i].mu.unlock();
  }
  // Hands over about `slots_per_shard` slots of every shard still capturing, one shard lock at a
  // time; true once the capture is complete everywhere.
  bool capture_step(std::size_t slots_per_shard) {
    bool complete = true;
    for_each_shard(
        [&](Shard& shard) { complete = shard.capture_step(slots_per_shard) && complete; });
    return complete;
  }
  void abandon_capture() {
    for_each_shard([](Shard& shard) { shard.abandon_capture(); });
  }

  std::size_t shard_count() const noexcept { return shard_count_; }
  ClockT& clock() noexcept { return clock_; }

 private:
  struct alignas(64) Slot {  // one cache line apart, so neighbouring locks do not false-share
    mutable Mutex mu;
    std::optional<Shard> cache CC_GUARDED_BY(mu);
  };

  // Bits 20..35 of the hash: the table uses bits 0..18 (tag, group) and the top bits (directory),
  // so the shard choice is independent of where the key lands inside its shard.
  std::size_t shard_index(std::uint64_t h) const noexcept {
    return static_cast<std::size_t>(h >> 20) & (shard_count_ - 1);
  }

  // Every shard hashes alike, and hash_of() reads only the hash function, which is set when the
  // shard is built and never written after: no lock needed, which the analysis cannot know.
  template <class Q>
  std::uint64_t hash_of(const Q& key) const CC_NO_THREAD_SAFETY_ANALYSIS {
    return shards_[0].cache->hash_of(key);
  }

  template <class Q>
  PutOutcome put_until(Q&& key, V value, TimePoint deadline, TimePoint now) {
    const Hashed h{hash_of(key)};
    Slot& slot = shards_[shard_index(h.value)];
    MutexLock lock(slot.mu);
    return slot.cache->put_prehashed(std::forward<Q>(key), std::move(value), deadline, h, now);
  }

  template <class Q, class Fn>
  auto with_shard(const Q& key, Fn&& fn) {
    const TimePoint now = clock_.now();
    const Hashed h{hash_of(key)};
    Slot& slot = shards_[shard_index(h.value)];
    MutexLock lock(slot.mu);
    return fn(*slot.cache, h, now);
  }

  template <class Fn>
  void for_each_shard(Fn&& fn) {
    for (std::size_t i = 0; i < shard_count_; ++i) {
      Slot& slot = shards_[i];
      MutexLock lock(slot.mu);
      fn(*slot.cache);
    }
  }
  template <class Fn>
  void for_each_shard(Fn&& fn) const {
    for (std::size_t i = 0; i < shard_count_; ++i) {
      const Slot& slot = shards_[i];
      MutexLock lock(slot.mu);
      fn(std::as_const(*slot.cache));
    }
  }

  std::size_t shard_count_;
  ClockT clock_;
  std::unique_ptr<Slot[]> shards_;
};

}  // namespace chronocache
