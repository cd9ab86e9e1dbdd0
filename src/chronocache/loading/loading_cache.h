// LoadingCache: a read-through cache over ShardedCache. A get that misses calls the user's loader,
// once per key however many threads miss it at once, and stores what it answers.
//
//   LoadingCache<int, std::string> users(
//       {.expire_after_write = 10min, .refresh_after = 1min, .negative_ttl = 30s},
//       [&](const int& id) -> LoadResult<std::string> { return db.fetch(id); });
//   LoadResult<std::string> u = users.get(42);       // a hit, or a load (joined if in flight)
//   std::shared_future<LoadResult<std::string>> f = users.get_async(43);
//   users.prefetch(44);                              // background load if absent; droppable
//
// Reference semantics: Caffeine's LoadingCache (get, getAll with loadAll, refreshAfterWrite,
// CacheStats). Where we differ, and why (docs/design/loading.md has the whole list):
//   * Results are values, not exceptions: get returns LoadResult<V> (value, NotFound, LoadError).
//     A loader error reaches every waiter of that load and is never cached (as Caffeine); a
//     NotFound is a cached answer when negative_ttl is set (Caffeine has no negative caching:
//     a null load is simply absent) and is counted apart from failures (Caffeine counts it as one).
//   * A put or invalidate during a load does not wait for it (Caffeine's compute blocks them on
//     the map's bin lock): the load is detached, its waiters still get its result, and the result
//     is not stored, so the put wins. As if the load had finished just before the put.
//   * Background work runs on a bounded executor; a full queue drops refreshes and prefetches
//     (counted) and runs get_async's load on the caller, where Caffeine's executor queues without
//     bound (ForkJoinPool.commonPool).
//   * Adaptive TTL and prefetch() are ours (below).
//
// Features, each off by default (LoadingOptions):
//   expire_after_write  the entry is gone this long after its write; the next get loads.
//   refresh_after       a get of an older entry returns it and schedules one background reload
//                       (single-flight with any load of the key). A failed reload keeps the old
//                       entry (counted; the next get past the age tries again).
//   negative_ttl        NotFound is cached this long.
//   adaptive            the key's freshness TTL grows by `increase` on each reload that finds
//                       the value unchanged and halves on each that finds it changed, within
//                       [min_ttl, max_ttl]: it settles near sqrt(2 * increase * how often the
//                       key changes). The entry is kept one more TTL past its freshness, so
//                       a get of a stale entry reloads it (blocking, single-flight) with the old
//                       value at hand to compare; a stale value is never returned.
//   prefetch(key)       the prefetch hook's operation: a background load of an absent key,
//                       single-flight, dropped under back-pressure. A prefetched entry carries a
//                       bit until its first read, which counts it "used" (accuracy = used/issued).
//   prefetch.enabled    predictive prefetch: each get records previous -> key in a
//                       SuccessorModel (predict/) through the caller's AccessStream, and
//                       prefetches the keys predicted after `key` (up to max_per_get, and
//                       read-ahead up to `depth` keys, 4 by default, while the chain is at
//                       least min_confidence likely) before it waits for its own load. The
//                       stream is the thread's (get(key): one per thread and cache, thread_local)
//                       or the caller's (get(key, stream): one per client connection).
//   prefetch.bundle     with a bulk loader, a get that misses loads its predicted keys in its
//                       own bulk call instead: one round trip, and they are stored when it
//                       returns.
//
// Cost: with refresh_after, adaptive and prefetch off, a hit is ShardedCache::get (one hash, the
// shard's shared side, no allocation beyond V's copy) plus two tests of what it returned (the
// prefetch bit, the negative flag): the per-entry metadata rides in the stored value
// (stored_entry.h) instead of a side table, and no counter of ours is written (hits are
// ShardedCache's own, minus our own extra reads). With refresh_after or adaptive on, a hit also
// reads the clock. Prefetch shares their flag (no test of its own on the plain hit); on, a get also
// records and predicts (model: ~90 + ~120 instructions for integer keys) and hashes the key once
// more (get(key)) or not at all (get(key, stream), which hashes once for the cache and the model).
// The miss path hashes again (the flight stripe), takes the stripe's mutex and re-reads the cache.
//
// Threads: every method is thread-safe. Loads run on the thread that missed (get, get_all), or
// on the executor (refreshes, prefetches, get_async). A loader must not call get/get_all on this
// cache for a key being loaded by its caller's thread: it would wait for itself (as in Caffeine).
// Destruction cancels queued background loads (their waiters get kShutDown) and waits for the
// running ones; no method may run during it.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "chronocache/base/hash.h"
#include "chronocache/base/mutex.h"
#include "chronocache/base/thread_annotations.h"
#include "chronocache/clock/clock.h"
#include "chronocache/clock/coarse_clock.h"
#include "chronocache/loading/adaptive_ttl.h"
#include "chronocache/loading/bounded_executor.h"
#include "chronocache/loading/flight_table.h"
#include "chronocache/loading/load_result.h"
#include "chronocache/loading/loader.h"
#include "chronocache/loading/loading_options.h"
#include "chronocache/loading/loading_stats.h"
#include "chronocache/loading/stored_entry.h"
#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/predict/access_stream.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/read_ahead.h"
#include "chronocache/predict/successor_model.h"
#include "chronocache/sharded_cache.h"

namespace chronocache {

enum class PrefetchOutcome : std::uint8_t {
  kScheduled,  // a background load was queued (counted as issued)
  kPresent,    // the key has an entry (live, negative or kept stale): nothing to do
  kInFlight,   // a load of the key is already running or queued
  kDropped,    // the executor's queue was full (counted as dropped)
};

template <class K, class V, EvictionPolicy Policy = TtlOnly, Clock ClockT = CoarseClock,
          class Hash = DefaultHash<K>, class Eq = std::equal_to<>>
class LoadingCache {
 public:
  using Result = LoadResult<V>;
  using key_type = K;
  using mapped_type = V;
  // The prefetch model: hashes by Hash, as the ShardedCache and the flight table do, so one hash
  // of a key serves all three.
  using Model = SuccessorModel<K, Hash>;

  // `change_detector`: what "unchanged" means for adaptive TTL (default: V's operator==).
  LoadingCache(LoadingOptions options, Loader<K, V> loader, BulkLoader<K, V> bulk_loader = {},
               ChangeDetector<V> change_detector = ChangeDetector<V>(), ClockT clock = ClockT())
      : options_(options),
        timed_(options.refresh_after > Duration::zero() || options.adaptive.enabled),
        checked_(timed_ || options.prefetch.enabled),
        bundles_(options.prefetch.enabled && options.prefetch.bundle &&
                 static_cast<bool>(bulk_loader)),
        initial_ttl_(initial_ttl_of(options)),
        loader_(std::move(loader)),
        bulk_loader_(std::move(bulk_loader)),
        change_detector_(std::move(change_detector)),
        cache_(options.cache, options.shard_count, clock),
        flights_(options.flight_stripes),
        model_(options.prefetch.enabled ? std::make_unique<Model>(options.prefetch.model)
                                        : nullptr),
        executor_(options.executor) {
    CC_CHECK(!options.adaptive.enabled || (options.adaptive.min_ttl > Duration::zero() &&
                                           options.adaptive.min_ttl <= options.adaptive.max_ttl &&
                                           options.adaptive.increase > Duration::zero()),
             "adaptive TTL needs 0 < min_ttl <= max_ttl and 0 < increase");
    // An entry keeps its TTL in 32-bit milliseconds (StoredEntry::ttl_ms): a longer max_ttl would
    // be cut to 49.7 days without a word.
    CC_CHECK(!options.adaptive.enabled || options.adaptive.max_ttl.count() <= UINT32_MAX,
             "adaptive TTL needs max_ttl <= 2^32 - 1 ms (49.7 days)");
  }

  // Background work first: its tasks use everything below (executor_ is also declared last).
  ~LoadingCache() { executor_.shutdown(); }

  LoadingCache(const LoadingCache&) = delete;
  LoadingCache& operator=(const LoadingCache&) = delete;

  // The value, NotFound, or the error of the load this get waited for. With prefetch on, the
  // read goes to this thread's stream for this cache (thread_local; a thread that alternates
  // between caches of one type starts its stream over at each switch) and the predicted keys
  // are prefetched before a miss waits for its load.
  Result get(const K& key) {
    std::optional<Entry> entry = cache_.get(key);
    if (entry && !entry->prefetched && !checked_) [[likely]]
      return answer_of(std::move(*entry));
    return get_checked(key, std::move(entry));
  }

  // get(key), with the read recorded in `stream`: one per client or connection, when reads of
  // one thread belong to several sequences (a server thread serving many connections). The key
  // is hashed once for the cache, the model and the prefetch checks. Prefetch off: get(key).
  // `stream` belongs to one caller at a time (AccessStream is not thread-safe).
  Result get(const K& key, AccessStream<K>& stream) {
    if (!model_) return get(key);
    const std::uint64_t key_hash = cache_.hash(key);
    const std::span<const Ahead> ahead = predict(key, key_hash, stream);
    std::optional<Entry> entry = cache_.get_prehashed(key, key_hash);
    if (entry && !entry->prefetched && !timed_) {
      prefetch_ahead(ahead);
      return answer_of(std::move(*entry));
    }
    return get_loading(key, std::move(entry), ahead);
  }

  // A hit is a ready future; a miss joins the key's flight or starts one on the executor (on
  // this thread, before returning, if the executor's queue is full).
  std::shared_future<Result> get_async(const K& key) {
    const TimePoint now = clock().now();
    if (std::optional<Entry> entry = cache_.get(key); entry && !is_stale(*entry, now))
      return ready(serve(key, std::move(*entry), now));
    Lookup lookup = find_or_register(key, now);
    if (lookup.found) return ready(serve(key, std::move(*lookup.found), now));
    if (lookup.joined.valid()) return lookup.joined;
    detail::Flight<V>* flight = lookup.own;
    std::shared_future<Result> future = flight->result;  // before the task may complete it
    if (submit(key, flight) != SubmitOutcome::kAccepted) {
      {
        Stripe& stripe = flights_.stripe_of(key);
        MutexLock lock(stripe.mu);
        ++stripe.counters.loads_on_caller;
      }
      (void)complete(key, flight, loader_.load(key), /*cancelled=*/false);
    }
    return future;
  }

  // One result per key, in order. The keys that miss and are not in flight are loaded together
  // by the bulk loader (or one by one by the loader, on this thread); those in flight are joined.
  // A key may appear more than once. Single-flight with get: a get of a key this call is loading
  // waits for this call's load, and the other way round.
  std::vector<Result> get_all(std::span<const K> keys) {
    const TimePoint now = clock().now();
    std::vector<std::optional<Result>> answers(keys.size());
    std::vector<std::pair<std::size_t, std::shared_future<Result>>> joined;
    std::vector<std::size_t> own_at;
    std::vector<K> own_keys;
    std::vector<detail::Flight<V>*> own_flights;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const K& key = keys[i];
      if (std::optional<Entry> entry = cache_.get(key); entry && !is_stale(*entry, now)) {
        answers[i] = serve(key, std::move(*entry), now);
        continue;
      }
      Lookup lookup = find_or_register(key, now);
      if (lookup.found) {
        answers[i] = serve(key, std::move(*lookup.found), now);
      } else if (lookup.joined.valid()) {
        joined.emplace_back(i, std::move(lookup.joined));
      } else {
        own_at.push_back(i);
        own_keys.push_back(key);
        own_flights.push_back(lookup.own);
      }
    }
    // Ours are completed before any other flight is waited for: two get_alls that each own a key
    // the other joined would otherwise wait for each other.
    if (!own_keys.empty()) {
      if (bulk_loader_) {
        std::vector<Result> results = bulk_loader_.load_all(std::span<const K>(own_keys));
        for (std::size_t j = 0; j < own_keys.size(); ++j)
          answers[own_at[j]] = complete(own_keys[j], own_flights[j], std::move(results[j]), false);
      } else {
        for (std::size_t j = 0; j < own_keys.size(); ++j)
          answers[own_at[j]] =
              complete(own_keys[j], own_flights[j], loader_.load(own_keys[j]), false);
      }
    }
    for (auto& [at, future] : joined) answers[at] = future.get();
    std::vector<Result> out;
    out.reserve(keys.size());
    for (std::optional<Result>& answer : answers) out.push_back(std::move(*answer));
    return out;
  }

  // Stores `value` as if loaded now. A load of the key in flight is detached: its waiters get
  // what it loads, the cache keeps `value` (the put wins). Adaptive: the key starts over at the
  // initial TTL.
  void put(const K& key, V value) {
    const TimePoint now = clock().now();
    Stripe& stripe = flights_.stripe_of(key);
    MutexLock lock(stripe.mu);
    detach_locked(stripe, key);
    write_locked(key, Entry{std::move(value), now, ttl_ms_of(initial_ttl_), false}, now);
  }

  // Caffeine's getIfPresent: the key's live entry (its value, or NotFound for a cached negative)
  // without ever loading; nullopt when there is none (absent, stale, or only being loaded).
  // Counted as a hit or a miss; spends a prefetched entry's bit and schedules a due refresh, as
  // get does.
  std::optional<Result> get_if_present(const K& key) {
    std::optional<Entry> entry = cache_.get(key);
    if (entry && !entry->prefetched && !timed_) return answer_of(std::move(*entry));
    const TimePoint now = clock().now();
    if (entry && !is_stale(*entry, now)) return serve(key, std::move(*entry), now);
    Stripe& stripe = flights_.stripe_of(key);
    MutexLock lock(stripe.mu);
    ++stripe.counters.misses;
    return std::nullopt;
  }

  // Caffeine's refresh(key): reloads the key in the background while get keeps answering its
  // current entry, which a failed reload keeps. A load of the key already in flight is joined
  // instead; an absent key is loaded. Runs on the caller when the executor's queue is full (the
  // future is then ready on return), as get_async does.
  std::shared_future<Result> refresh(const K& key) {
    const TimePoint now = clock().now();
    Stripe& stripe = flights_.stripe_of(key);
    Flight* on_caller = nullptr;
    std::shared_future<Result> future;
    {
      MutexLock lock(stripe.mu);
      if (auto it = stripe.flights.find(key); it != stripe.flights.end()) return it->second->result;
      ++stripe.counters.extra_lookups;
      auto flight = std::make_unique<Flight>(detail::FlightKind::kRefresh, cache_.get(key), now);
      future = flight->result;
      ++stripe.counters.refreshes;
      if (submit(key, flight.get()) != SubmitOutcome::kAccepted) {
        ++stripe.counters.loads_on_caller;
        on_caller = flight.get();
      }
      stripe.flights.emplace(key, flight.release());  // the task's, or ours below
    }
    if (on_caller != nullptr)
      (void)complete(key, on_caller, loader_.load(key), /*cancelled=*/false);
    return future;
  }

  // Removes the key's entry (value, negative or stale) and detaches its load in flight, whose
  // result is then not stored: the next get loads afresh.
  void invalidate(const K& key) {
    Stripe& stripe = flights_.stripe_of(key);
    MutexLock lock(stripe.mu);
    detach_locked(stripe, key);
    (void)cache_.erase(key);
  }

  // Caffeine's invalidateAll: every entry removed, every load in flight detached (its waiters get
  // what it loads; the cache does not keep it). Stripe by stripe, then the entries: a put or a
  // load that races it may survive, as one that came just after it would.
  void invalidate_all() {
    for (std::size_t i = 0; i < flights_.stripe_count(); ++i) {
      Stripe& stripe = flights_.stripe(i);
      MutexLock lock(stripe.mu);
      for (auto& [key, flight] : stripe.flights) flight->detached = true;
      stripe.flights.clear();
    }
    cache_.clear();
  }

  // The prefetch hook's operation: loads `key` in the background unless it has an entry or a
  // load in flight. Never blocks on the loader; dropped (and counted) when the queue is full.
  // "Present" costs one hash and the shard's shared side (ShardedCache::contains; no count).
  PrefetchOutcome prefetch(const K& key) { return prefetch_prehashed(key, cache_.hash(key)); }

  // Exact once no call runs; a mix of moments otherwise (each stripe's part is exact).
  LoadingStats stats() const {
    LoadingStats out;
    std::uint64_t extra_lookups = 0;
    for (std::size_t i = 0; i < flights_.stripe_count(); ++i) {
      Stripe& stripe = flights_.stripe(i);
      MutexLock lock(stripe.mu);
      stripe.counters.add_to(out);
      extra_lookups += stripe.counters.extra_lookups;
    }
    out.cache = cache_.stats();
    // Every get reads the ShardedCache once (its hit or miss), and we count our other reads.
    const std::uint64_t lookups = out.cache.hits + out.cache.misses;
    const std::uint64_t gets = lookups > extra_lookups ? lookups - extra_lookups : 0;
    out.hits = gets > out.misses ? gets - out.misses : 0;
    return out;
  }

  // Entries held: values, negatives, and (adaptive) stale ones kept for their next reload.
  std::size_t size() const { return cache_.size(); }

  // Blocks until no background work is queued or running: tests wait here, never sleep.
  void wait_idle() { executor_.wait_idle(); }

  ClockT& clock() noexcept { return cache_.clock(); }
  const LoadingOptions& options() const noexcept { return options_; }

 private:
  // A key a get predicts, with its hash.
  struct Ahead {
    K key;
    std::uint64_t hash;
  };
  using Entry = detail::StoredEntry<V>;
  using Flight = detail::Flight<V>;
  using Flights = detail::FlightTable<K, V, Hash, Eq>;
  using Stripe = typename Flights::Stripe;

  // What a miss found under its stripe's lock: an entry stored since its first look, a flight
  // to wait for, or a flight it registered and must complete.
  struct Lookup {
    std::optional<Entry> found{};
    std::shared_future<Result> joined{};
    Flight* own = nullptr;
  };

  static Duration initial_ttl_of(const LoadingOptions& options) noexcept {
    if (!options.adaptive.enabled) return Duration::zero();
    const Duration start = options.expire_after_write > Duration::zero()
                               ? options.expire_after_write
                               : options.adaptive.min_ttl;
    return std::clamp(start, options.adaptive.min_ttl, options.adaptive.max_ttl);
  }
  static std::uint32_t ttl_ms_of(Duration ttl) noexcept {
    return static_cast<std::uint32_t>(std::min<std::int64_t>(ttl.count(), UINT32_MAX));
  }

  static Result answer_of(Entry&& entry) {
    if (entry.value) return Result(std::move(*entry.value));
    return Result(NotFound{});
  }
  static std::shared_future<Result> ready(Result result) {
    std::promise<Result> promise;
    promise.set_value(std::move(result));
    return promise.get_future().share();
  }

  // Adaptive: a value entry past its own TTL is stale; it is kept only to be compared.
  bool is_stale(const Entry& entry, TimePoint now) const noexcept {
    return options_.adaptive.enabled && entry.value && now - entry.written >= entry.ttl();
  }
  bool is_refresh_due(const Entry& entry, TimePoint now) const noexcept {
    return options_.refresh_after > Duration::zero() && entry.value &&
           now - entry.written >= options_.refresh_after;
  }

  // Every get that is not the plain hit: a miss, a prefetched entry, or a timed feature or
  // prefetch is on. `entry` is what the first look found.
  [[gnu::noinline]] Result get_checked(const K& key, std::optional<Entry> entry) {
    const std::span<const Ahead> ahead =
        model_ ? predict(key, cache_.hash(key), local_stream()) : std::span<const Ahead>();
    if (entry && !entry->prefetched && !timed_) {
      prefetch_ahead(ahead);
      return answer_of(std::move(*entry));
    }
    return get_loading(key, std::move(entry), ahead);
  }

  // `ahead`: the keys this get predicts (prefetch on), prefetched before it waits for a load,
  // or loaded with its own (bundle).
  Result get_loading(const K& key, std::optional<Entry> entry, std::span<const Ahead> ahead) {
    const TimePoint now = clock().now();
    if (entry && !is_stale(*entry, now)) {
      prefetch_ahead(ahead);
      return serve(key, std::move(*entry), now);
    }
    Lookup lookup = find_or_register(key, now);
    if (lookup.own && bundles_ && !ahead.empty()) return load_bundled(key, lookup.own, ahead, now);
    prefetch_ahead(ahead);
    if (lookup.found) return serve(key, std::move(*lookup.found), now);
    if (lookup.joined.valid()) return lookup.joined.get();
    return complete(key, lookup.own, loader_.load(key), /*cancelled=*/false);
  }

  // prefetch.bundle: the miss's own load and its predicted keys' in one bulk call. Each predicted
  // key with no entry and no load in flight gets a prefetch flight owned by this call (a get of
  // it joins this load); the others are already there or coming.
  Result load_bundled(const K& key, Flight* own, std::span<const Ahead> ahead, TimePoint now) {
    std::vector<K> keys;
    std::vector<Flight*> flights;
    keys.reserve(1 + ahead.size());
    flights.reserve(1 + ahead.size());
    keys.push_back(key);
    flights.push_back(own);
    for (const Ahead& next : ahead) {  // copied out before the loader runs (ahead is the thread's)
      if (Flight* flight = register_bundled(next.key, next.hash, now)) {
        keys.push_back(next.key);
        flights.push_back(flight);
      }
    }
    if (keys.size() == 1) return complete(key, own, loader_.load(key), /*cancelled=*/false);
    std::vector<Result> results = bulk_loader_.load_all(std::span<const K>(keys));
    Result mine = complete(key, own, std::move(results[0]), /*cancelled=*/false);
    for (std::size_t i = 1; i < keys.size(); ++i)
      (void)complete(keys[i], flights[i], std::move(results[i]), /*cancelled=*/false);
    return mine;
  }

  Flight* register_bundled(const K& key, std::uint64_t key_hash, TimePoint now) {
    Stripe& stripe = flights_.stripe_of_hash(key_hash);
    MutexLock lock(stripe.mu);
    if (stripe.flights.contains(key) || cache_.contains_prehashed(key, key_hash)) return nullptr;
    auto flight = std::make_unique<Flight>(detail::FlightKind::kPrefetch, std::nullopt, now);
    stripe.flights.emplace(key, flight.get());
    ++stripe.counters.prefetches_issued;
    ++stripe.counters.prefetches_bundled;
    return flight.release();  // owned by load_bundled until complete()
  }

  // A live (not stale) entry's answer, after its side effects: its prefetch bit is spent, and a
  // refresh is scheduled if it is due.
  Result serve(const K& key, Entry&& entry, TimePoint now) {
    if (entry.prefetched) [[unlikely]]
      spend_prefetch_bit(key, entry.written, now);
    if (is_refresh_due(entry, now)) (void)schedule(key, detail::FlightKind::kRefresh, entry, now);
    return answer_of(std::move(entry));
  }

  Lookup find_or_register(const K& key, TimePoint now) {
    Stripe& stripe = flights_.stripe_of(key);
    MutexLock lock(stripe.mu);
    // Re-read under the lock: a load may have stored the key and left since our first look.
    ++stripe.counters.extra_lookups;
    std::optional<Entry> again = cache_.get(key);
    if (again && !is_stale(*again, now)) return Lookup{.found = std::move(again)};
    if (auto it = stripe.flights.find(key); it != stripe.flights.end()) {
      ++stripe.counters.joins;
      Flight& flight = *it->second;
      if (flight.kind == detail::FlightKind::kPrefetch && !flight.waited_on)
        ++stripe.counters.prefetches_used;
      flight.waited_on = true;
      return Lookup{.joined = flight.result};
    }
    ++stripe.counters.misses;
    // `again` is the stale entry (adaptive), if any: the reload compares against it.
    auto flight = std::make_unique<Flight>(detail::FlightKind::kLoad, std::move(again), now);
    stripe.flights.emplace(key, flight.get());
    return Lookup{.own = flight.release()};  // owned by this caller until complete()
  }

  PrefetchOutcome prefetch_prehashed(const K& key, std::uint64_t key_hash) {
    if (cache_.contains_prehashed(key, key_hash)) return PrefetchOutcome::kPresent;
    return schedule(key, detail::FlightKind::kPrefetch, std::nullopt, clock().now(), key_hash);
  }

  // One thread's stream for this cache, and its scratch for predictions (for keys owning heap
  // memory, reused predictions keep their capacity: a warm get allocates nothing here).
  struct LocalStream {
    std::uint64_t owner = 0;  // the cache's id_; 0: none yet
    AccessStream<K> stream;
    std::array<Prediction<K>, Model::kMaxPredictions> predictions;
    std::vector<Ahead> ahead;  // what predict() returns: valid until this thread's next get
  };
  static LocalStream& local() {
    thread_local LocalStream local;
    return local;
  }
  AccessStream<K>& local_stream() {
    LocalStream& l = local();
    if (l.owner != id_) {  // another cache of this type used it last: not our sequence
      l.owner = id_;
      l.stream.reset();
    }
    return l.stream;
  }
  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> ids{0};
    return ids.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  // Records previous -> key in `stream` and returns the keys to prefetch for this read
  // (read_ahead: key's successors, then the chain the stream reads ahead, as far as `depth` and
  // min_confidence allow).
  std::span<const Ahead> predict(const K& key, std::uint64_t key_hash, AccessStream<K>& stream) {
    (void)stream.advance_prehashed(*model_, key, key_hash);
    LocalStream& l = local();
    l.ahead.clear();
    read_ahead(
        *model_, stream, key, key_hash,
        {.max_per_get = options_.prefetch.max_per_get, .depth = options_.prefetch.depth},
        std::span<Prediction<K>>(l.predictions),
        [this](const K& next) { return cache_.hash(next); },
        [&l](const K& next, std::uint64_t hash) {
          l.ahead.push_back({next, hash});
        });
    return l.ahead;
  }

  // Never blocks: a prefetch is only scheduled.
  void prefetch_ahead(std::span<const Ahead> ahead) {
    for (const Ahead& next : ahead) (void)prefetch_prehashed(next.key, next.hash);
  }

  // A background load of `key` unless one is in flight (or, for a prefetch, the key is there).
  PrefetchOutcome schedule(const K& key, detail::FlightKind kind, std::optional<Entry> previous,
                           TimePoint now) {
    return schedule(key, kind, std::move(previous), now, cache_.hash(key));
  }
  PrefetchOutcome schedule(const K& key, detail::FlightKind kind, std::optional<Entry> previous,
                           TimePoint now, std::uint64_t key_hash) {
    Stripe& stripe = flights_.stripe_of_hash(key_hash);
    MutexLock lock(stripe.mu);
    if (stripe.flights.contains(key)) return PrefetchOutcome::kInFlight;
    if (kind == detail::FlightKind::kPrefetch && cache_.contains_prehashed(key, key_hash))
      return PrefetchOutcome::kPresent;  // stored since the caller's look
    auto flight = std::make_unique<Flight>(kind, std::move(previous), now);
    const bool is_refresh = kind == detail::FlightKind::kRefresh;
    // Submitted under the stripe's lock, so the task's complete() cannot run before the flight
    // is registered, and a refused flight was never seen by anyone. (Lock order: stripe, then
    // the executor's; the executor calls no task under its own.)
    if (submit(key, flight.get()) != SubmitOutcome::kAccepted) {
      ++(is_refresh ? stripe.counters.refreshes_dropped : stripe.counters.prefetches_dropped);
      return PrefetchOutcome::kDropped;
    }
    stripe.flights.emplace(key, flight.release());  // owned by the task now
    ++(is_refresh ? stripe.counters.refreshes : stripe.counters.prefetches_issued);
    return PrefetchOutcome::kScheduled;
  }

  // The task completes (and so deletes) `flight` exactly once, run or cancelled.
  SubmitOutcome submit(const K& key, Flight* flight) {
    return executor_.try_submit([this, key, flight](TaskMode mode) {
      if (mode == TaskMode::kCancel) {
        (void)complete(key, flight,
                       LoadError{LoadErrorCode::kShutDown, "cache destroyed before the load ran"},
                       /*cancelled=*/true);
      } else {
        (void)complete(key, flight, loader_.load(key), /*cancelled=*/false);
      }
    });
  }

  // Ends `flight` (and deletes it): counts the load, stores its result unless the flight was
  // detached, unregisters it (in the same critical section, so a get that misses after this
  // sees the result on its re-read), then wakes its waiters. Returns the result.
  Result complete(const K& key, Flight* flight_ptr, Result result, bool cancelled) {
    const std::unique_ptr<Flight> flight(flight_ptr);
    const TimePoint now = clock().now();
    Stripe& stripe = flights_.stripe_of(key);
    {
      MutexLock lock(stripe.mu);
      if (cancelled)
        ++stripe.counters.cancelled;
      else
        count_load_locked(stripe, *flight, result, now);
      if (!flight->detached) {
        stripe.flights.erase(key);
        if (!cancelled) store_locked(stripe, key, *flight, result, now);
      }
    }
    flight->promise.set_value(result);
    return result;
  }

  void count_load_locked(Stripe& stripe, const Flight& flight, const Result& result, TimePoint now)
      CC_REQUIRES(stripe.mu) {
    detail::LoadingCounters& c = stripe.counters;
    ++c.loads;
    c.total_load_time += now - flight.started;
    switch (result.status()) {
      case LoadStatus::kValue:
        ++c.load_successes;
        break;
      case LoadStatus::kNotFound:
        ++c.load_not_found;
        break;
      case LoadStatus::kError:
        ++c.load_failures;
        if (flight.kind == detail::FlightKind::kRefresh) ++c.refresh_failures;
        break;
    }
  }

  void store_locked(Stripe& stripe, const K& key, const Flight& flight, const Result& result,
                    TimePoint now) CC_REQUIRES(stripe.mu) {
    switch (result.status()) {
      case LoadStatus::kValue: {
        const bool unread = flight.kind == detail::FlightKind::kPrefetch && !flight.waited_on;
        const Duration ttl = options_.adaptive.enabled
                                 ? next_ttl_locked(stripe, flight.previous, result.value())
                                 : Duration::zero();
        write_locked(key, Entry{result.value(), now, ttl_ms_of(ttl), unread}, now);
        break;
      }
      case LoadStatus::kNotFound:
        if (options_.negative_ttl > Duration::zero())
          write_locked(key, Entry{std::nullopt, now, 0, false}, now);
        else if (flight.previous)
          (void)cache_.erase(key);  // what it reloaded exists no more
        break;
      case LoadStatus::kError:
        break;  // never cached; a refresh's or a stale reload's old entry stays
    }
  }

  Duration next_ttl_locked(Stripe& stripe, const std::optional<Entry>& previous, const V& loaded)
      CC_REQUIRES(stripe.mu) {
    if (!previous || !previous->value) return initial_ttl_;
    const bool changed = change_detector_.changed(*previous->value, loaded);
    ++(changed ? stripe.counters.ttl_shrunk : stripe.counters.ttl_grown);
    return next_adaptive_ttl(previous->ttl(), changed, options_.adaptive);
  }

  // Stores `entry` with the ShardedCache deadline its kind asks for, counted from its write.
  // Callers hold the key's stripe mutex (the analysis cannot name it here: the key picks it).
  void write_locked(const K& key, Entry entry, TimePoint now) {
    const Duration lifetime = !entry.value                ? options_.negative_ttl
                              : options_.adaptive.enabled ? 2 * entry.ttl()
                                                          : options_.expire_after_write;
    if (lifetime == Duration::zero()) {
      (void)cache_.put(key, std::move(entry));
      return;
    }
    const Duration left = lifetime - (now - entry.written);
    (void)cache_.put(key, std::move(entry), left);  // left <= 0: removed (already past its life)
  }

  void detach_locked(Stripe& stripe, const K& key) CC_REQUIRES(stripe.mu) {
    if (auto it = stripe.flights.find(key); it != stripe.flights.end()) {
      it->second->detached = true;
      stripe.flights.erase(it);
    }
  }

  // The first read of a prefetched entry: counts it used and stores it again without the bit,
  // unless it changed since the caller read it (another reader spent the bit, or a write came).
  void spend_prefetch_bit(const K& key, TimePoint written, TimePoint now) {
    Stripe& stripe = flights_.stripe_of(key);
    MutexLock lock(stripe.mu);
    ++stripe.counters.extra_lookups;
    std::optional<Entry> again = cache_.get(key);
    if (!again || !again->prefetched || again->written != written) return;
    ++stripe.counters.prefetches_used;
    again->prefetched = false;
    write_locked(key, std::move(*again), now);
  }

  const LoadingOptions options_;
  const bool timed_;    // refresh_after or adaptive: a hit must read the clock
  const bool checked_;  // timed_ or prefetch: every get takes get_checked
  const bool bundles_;  // prefetch.bundle with a bulk loader: a miss loads its predictions too
  const Duration initial_ttl_;
  const Loader<K, V> loader_;
  const BulkLoader<K, V> bulk_loader_;
  const ChangeDetector<V> change_detector_;
  ShardedCache<K, Entry, Policy, ClockT, Hash, Eq> cache_;
  Flights flights_;
  const std::unique_ptr<Model> model_;  // prefetch.enabled only
  const std::uint64_t id_ = next_id();  // names this cache to its threads' LocalStreams
  BoundedExecutor executor_;  // last: destroyed first, while what its tasks use still lives
};

}  // namespace chronocache
