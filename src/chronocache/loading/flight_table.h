// FlightTable: the loads in flight, by key, for single-flight (one load per key at a time; every
// other get of that key waits on it). Striped: a stripe is a Mutex, the flights of the keys that
// hash to it, and that stripe's loading counters.
//
// A Flight is one load: its kind, what it reloads, and the promise its waiters' shared_future
// reads. Ownership: a Flight is owned by whoever will complete it (the thread running the
// loader, or the executor task that will), never by the table, which only points at it while it
// is the key's current load. A put or invalidate of the key *detaches* the flight (removes it
// from the table and marks it) under the stripe's mutex: its waiters still get its result, but
// the result is not stored, so the newer put wins.
//
// The stripe's mutex is also what makes "recheck the cache, then register a flight" and "store
// a load's result, then unregister its flight" atomic against each other: a get that misses
// either sees the stored result on its recheck or finds the flight (loading_cache.h).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"
#include "chronocache/clock/clock.h"
#include "chronocache/loading/load_result.h"
#include "chronocache/loading/loading_stats.h"
#include "chronocache/loading/stored_entry.h"

namespace chronocache::detail {

enum class FlightKind : std::uint8_t {
  kLoad,      // a get (or get_all, get_async) missed: someone waits for it
  kRefresh,   // refresh_after: the entry is served meanwhile; a failure keeps it
  kPrefetch,  // prefetch(): nobody asked yet; its entry carries the prefetch bit when stored
};

template <class V>
struct Flight {
  Flight(FlightKind kind_in, std::optional<StoredEntry<V>> previous_in, TimePoint started_in)
      : kind(kind_in), previous(std::move(previous_in)), started(started_in) {}

  const FlightKind kind;
  // The entry being reloaded (a refresh, or a stale adaptive entry): kept by a failed refresh,
  // compared with the new value by adaptive TTL. nullopt for a plain miss.
  const std::optional<StoredEntry<V>> previous;
  const TimePoint started;
  std::promise<LoadResult<V>> promise;
  const std::shared_future<LoadResult<V>> result = promise.get_future().share();
  // Under the stripe's mutex:
  bool detached = false;   // a put or invalidate came after it began: its result is not stored
  bool waited_on = false;  // a get joined it (a prefetch used before it landed)
};

template <class K, class V, class Hash, class Eq>
class FlightTable {
 public:
  struct alignas(64) Stripe {  // aligned: stripes' mutexes do not share a line
    Mutex mu;
    std::unordered_map<K, Flight<V>*, Hash, Eq> flights CC_GUARDED_BY(mu);
    LoadingCounters counters CC_GUARDED_BY(mu);
  };

  // `stripe_count` is rounded up to a power of two.
  explicit FlightTable(std::size_t stripe_count)
      : mask_(std::bit_ceil(std::max<std::size_t>(stripe_count, 1)) - 1),
        stripes_(std::make_unique<Stripe[]>(mask_ + 1)) {}

  // Bits 44..: ShardedCache takes 32..43 for its shard and the table the rest; these are as well
  // mixed and pick stripes independently of shards.
  Stripe& stripe_of(const K& key) noexcept { return stripe_of_hash(Hash{}(key)); }
  // The same by the key's hash (Hash{}(key), which ShardedCache::hash also answers).
  Stripe& stripe_of_hash(std::uint64_t key_hash) noexcept {
    return stripes_[static_cast<std::size_t>(key_hash >> 44) & mask_];
  }
  std::size_t stripe_count() const noexcept { return mask_ + 1; }
  // Non-const from a const table: stats() locks stripes to read their counters.
  Stripe& stripe(std::size_t i) const noexcept { return stripes_[i]; }

 private:
  std::size_t mask_;
  std::unique_ptr<Stripe[]> stripes_;
};

}  // namespace chronocache::detail
