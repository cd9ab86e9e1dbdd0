// ShardedCache: a thread-safe Cache. N independent Caches ("shards"), each behind its own
// read-mostly lock; a key's hash, computed once, picks the shard and is handed to it, so nothing
// is hashed twice.
//
//   chronocache::ShardedCache<std::string, std::string> cache({.max_entries = 1 << 20}, 16);
//   cache.put("k", "v", 10s);   // from any thread
//   cache.get("k");             // from any thread; reads on different cores do not contend
//
// Each shard's options are the given ones divided by the shard count (max_entries and max_bytes
// are per-shard bounds, rounded up), so the whole cache holds about options.max_entries entries
// and options.max_bytes bytes. The clock is read once per call, outside every lock.
//
// IMPLEMENTATION: reads that write no shared cache line (docs/design/engine.md, "Concurrent
// reads"). Each shard's lock is a ReadMostlyLock (concurrency/read_mostly_lock.h): a reader
// announces itself in its own stripe, a writer waits for the shard's stripes to empty, except
// an overwrite of a value that is one atomic word, which readers may watch (put, below; design
// notes, "Overwrites beside readers"): it takes the writer mutex alone. Under the shared side a
// read is Cache::peek_prehashed, which is const: an expired entry is reported missing and left for
// the next write or sweep of its shard to remove. What a read would have written goes to the
// reader's stripe of that shard instead:
//   * hits and misses: how the stripe's read sections ended (ReadMostlyLock::Reader::ends_as),
//     summed by stats();
//   * the policy's hit: a policy with on_shared_access (Sieve, S3Fifo: one relaxed atomic store,
//     only when a bit changes; TtlOnly: nothing) is told at once. Every other policy (Lru, Lfu,
//     WTinyLfu, SwitchablePolicy) gets the hit's SlotId in the stripe's lossy log (11 entries),
//     replayed through on_access under the shard's writer mutex by the next writer of the shard,
//     or (its own stripe) by a reader that filled its log and wins a try_lock; hits arriving at a
//     full log are dropped, as in Caffeine's read buffers. Why a logged SlotId is still valid when
//     replayed: every write section of the shard replays the logs and starts a new generation
//     before it changes anything, and only entries of the current generation are replayed, so a
//     replayed entry was recorded after the shard's last change (replay_logged_hits has the
//     argument).
//
// Concurrency contract, call by call ("exclusive": the shard's writer side, which waits for the
// shard's readers; "mutex": the shard's writer mutex only, which excludes writers but runs beside
// fast readers):
//   get, contains        shared side of one shard: atomic with respect to every write of the
//                        key (a value some put stored, never a torn one). Never blocks on other
//                        readers; waits only while a writer holds that shard.
//   put                  atomic on one shard. An overwrite of a live entry whose value is one
//                        atomic word (an integer, a pointer, a small struct), with a deadline in
//                        the window and not earlier than the entry's, is made under the shard's
//                        writer mutex alone: readers of the shard read on beside it and see the
//                        old value or the new one, each with a deadline that holds for it
//                        (Cache::overwrite_beside_readers). Every other put is exclusive.
//   erase                exclusive on one shard: atomic.
//                        An exclusive put or erase first replays the shard's logged hits, and
//                        removes an expired entry it meets, as Cache does.
//   reclaim_expired, clear, capture_step, abandon_capture
//                        exclusive, one shard at a time: each shard's part is atomic; the whole
//                        is a mix of moments across shards.
//   begin_capture        exclusive on every shard at once: the capture is the contents at one
//                        instant (see below).
//   size, stats, memory_bytes, memory_used
//                        mutex, one shard at a time: each shard's part is exact for a moment,
//                        the total a mix of moments. stats adds the stripes' hit and miss
//                        counters, read relaxed: a read that finished before the call is counted,
//                        one running beside it may or may not be.
//   shard_count, clock   no lock (fixed at construction; the clock is thread-safe).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "chronocache/base/thread_annotations.h"
#include "chronocache/cache.h"
#include "chronocache/concurrency/read_mostly_lock.h"
#include "chronocache/policy/eviction_policy.h"

namespace chronocache {

template <class K, class V, EvictionPolicy Policy = TtlOnly, Clock ClockT = CoarseClock,
          class Hash = DefaultHash<K>, class Eq = std::equal_to<>,
          CacheFeatures Features = CacheFeatures{}>
class ShardedCache {
 public:
  using Shard = Cache<K, V, Policy, ClockT, Hash, Eq, Features>;
  using key_type = K;
  using mapped_type = V;

  // The shard takes 12 hash bits of its own (shard_of): more shards would share bits with
  // the table's directory.
  static constexpr std::size_t kMaxShards = 4096;

  // `shard_count` is rounded up to a power of two, at most kMaxShards. Each shard's lock has a
  // reader stripe per hardware thread (ReadMostlyLock); more threads than stripes still work,
  // sharing lines.
  explicit ShardedCache(CacheOptions options = {}, std::size_t shard_count = 16,
                        ClockT clock = ClockT())
      : shard_count_(std::bit_ceil(std::clamp<std::size_t>(shard_count, 1, kMaxShards))),
        shard_offset_mask_((shard_count_ - 1) << kShardSlotShift),
        clock_(clock),
        shards_(std::make_unique<ShardSlot[]>(shard_count_)) {
    CacheOptions per_shard = options;
    per_shard.max_entries = (options.max_entries + shard_count_ - 1) / shard_count_;
    per_shard.max_bytes = (options.max_bytes + shard_count_ - 1) / shard_count_;
    per_shard.initial_capacity = (options.initial_capacity + shard_count_ - 1) / shard_count_;
    for (std::size_t i = 0; i < shard_count_; ++i) {
      ShardSlot& slot = shards_[i];
      ReadMostlyLock::Writer lock(slot.lock);  // uncontended: no other thread sees us yet
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

  // The live value, copied under the shard's shared side. Writes only this thread's stripe.
  template <class Q>
  CC_ALWAYS_INLINE std::optional<V> get(const Q& key) {
    return get_prehashed(key, hash_of(key));
  }
  // The same, with `key_hash` == hash(key) (a caller that hashed the key for something else).
  template <class Q>
  CC_ALWAYS_INLINE std::optional<V> get_prehashed(const Q& key, std::uint64_t key_hash) {
    const TimePoint now = clock_.now();
    const Hashed h{key_hash};
    ShardSlot& slot = shard_of(h);
    ReadMostlyLock::Stripe* full_log = nullptr;
    std::optional<V> value = read_locked(slot, key, h, now, full_log);
    if (full_log != nullptr) [[unlikely]]
      replay_when_free(slot, *full_log);
    return value;
  }

  // Whether a live entry is there; counts nothing and tells the policy nothing (as Cache).
  template <class Q>
  CC_ALWAYS_INLINE bool contains(const Q& key) {
    return contains_prehashed(key, hash_of(key));
  }
  // The same, with `key_hash` == hash(key).
  template <class Q>
  CC_ALWAYS_INLINE bool contains_prehashed(const Q& key, std::uint64_t key_hash) {
    const TimePoint now = clock_.now();
    const Hashed h{key_hash};
    ShardSlot& slot = shard_of(h);
    ReadMostlyLock::Reader reader(slot.lock);
    // A peek, not contains_prehashed: it loads the deadline as overwrites beside readers need.
    return std::as_const(*slot.cache)
        .peek_prehashed(
            key, h, now, [](const typename Shard::Peek&) CC_ALWAYS_INLINE_LAMBDA { return true; },
            []() CC_ALWAYS_INLINE_LAMBDA { return false; });
  }

  // The key's hash by the cache's Hash (every shard's), as the _prehashed calls take it.
  template <class Q>
  CC_ALWAYS_INLINE std::uint64_t hash(const Q& key) const {
    return hash_of(key);
  }

  template <class Q>
  bool erase(const Q& key) {
    const TimePoint now = clock_.now();
    const Hashed h{hash_of(key)};
    ShardSlot& slot = shard_of(h);
    ReadMostlyLock::Writer lock(slot.lock);
    replay_logged_hits(slot);
    return slot.cache->erase_prehashed(key, h, now);
  }

  // Live entries across shards (contract above).
  std::size_t size() const {
    std::size_t total = 0;
    const TimePoint now = clock_.now();  // the shards' own clocks are copies that tests never move
    for_each_shard_mutex([&](const Shard& shard) { total += shard.size_at(now); });
    return total;
  }

  // Stored entries with a deadline across shards, expired ones not yet reclaimed included
  // (Cache::volatile_stored_size: CacheFeatures::count_volatile).
  std::size_t volatile_stored_size() const requires(Features.count_volatile) {
    std::size_t total = 0;
    for_each_shard_mutex([&](const Shard& shard) { total += shard.volatile_stored_size(); });
    return total;
  }

  // Sweeps `budget_per_shard` slots in every shard; returns entries removed.
  std::size_t reclaim_expired(std::size_t budget_per_shard) {
    const TimePoint now = clock_.now();
    std::size_t reclaimed = 0;
    for_each_shard_exclusive(
        [&](Shard& shard) { reclaimed += shard.reclaim_expired_at(budget_per_shard, now); });
    return reclaimed;
  }

  void clear() {
    for_each_shard_exclusive([](Shard& shard) { shard.clear(); });
  }

  CacheStats stats() const {
    CacheStats total;
    for (std::size_t i = 0; i < shard_count_; ++i) {
      const ShardSlot& slot = shards_[i];
      for (std::size_t s = 0; s < slot.lock.stripe_count(); ++s) {
        const ReadMostlyLock::Stripe& stripe = slot.lock.stripe(s);
        total.hits += stripe.ended[ReadMostlyLock::kHit].load(std::memory_order_relaxed);
        total.misses += stripe.ended[ReadMostlyLock::kMiss].load(std::memory_order_relaxed);
      }
    }
    for_each_shard_mutex([&](const Shard& shard) { total += shard.stats(); });
    return total;
  }

  std::size_t memory_bytes() const {
    std::size_t total = 0;
    for_each_shard_mutex([&](const Shard& shard) { total += shard.memory_bytes(); });
    return total;
  }

  // What max_bytes bounds, summed over shards (Cache::memory_used).
  std::size_t memory_used() const {
    std::size_t total = 0;
    for_each_shard_mutex([&](const Shard& shard) { total += shard.memory_used(); });
    return total;
  }

  // ---- Point-in-time capture across shards (capture.h), for snapshots of a live cache ----------
  // Every shard's capture begins while all shards are held exclusively, so together they are the
  // contents at one instant; writers (and readers) wait only for that O(segments) start. `sink`
  // then hears entries from whichever thread hands a group over (a capture_step, or a writer
  // meeting a pending group), inside that shard's exclusive section: it must be safe to call from
  // several threads. Readers never hand anything over (a read changes nothing a capture
  // delivers). (Unchecked: the analysis cannot follow locks taken in a loop.)
  void begin_capture(CaptureSink<K, V>& sink) CC_NO_THREAD_SAFETY_ANALYSIS {
    const TimePoint now = clock_.now();
    for (std::size_t i = 0; i < shard_count_; ++i) {
      shards_[i].lock.lock();
      replay_logged_hits(shards_[i]);
    }
    for (std::size_t i = 0; i < shard_count_; ++i) shards_[i].cache->begin_capture(sink, now);
    for (std::size_t i = shard_count_; i-- > 0;) shards_[i].lock.unlock();
  }
  // Hands over about `slots_per_shard` slots of every shard still capturing, one shard at a time;
  // true once the capture is complete everywhere.
  bool capture_step(std::size_t slots_per_shard) {
    bool complete = true;
    for_each_shard_exclusive(
        [&](Shard& shard) { complete = shard.capture_step(slots_per_shard) && complete; });
    return complete;
  }
  void abandon_capture() {
    for_each_shard_exclusive([](Shard& shard) { shard.abandon_capture(); });
  }

  std::size_t shard_count() const noexcept { return shard_count_; }
  ClockT& clock() noexcept { return clock_; }

 private:
  // Aligned, so a shard's lock line does not false-share with the neighbouring shard's Cache.
  struct alignas(64) ShardState {
    ReadMostlyLock lock;
    std::optional<Shard> cache CC_GUARDED_BY(lock);
  };
  // Padded to a power of two, so finding a shard is a shift, not a multiply (callgrind: one
  // instruction per call).
  struct alignas(std::bit_ceil(sizeof(ShardState))) ShardSlot : ShardState {};
  static constexpr int kShardSlotShift = std::countr_zero(sizeof(ShardSlot));
  static_assert(kShardSlotShift <= 32);

  // The shard is bits 32..43 of the hash: the table uses bits 0..31 (tag, home group) and the
  // top 20 at most (directory), so the shard choice is independent of where the key lands inside
  // its shard. They are taken already scaled to the shard's byte offset: one shift less than an
  // index (callgrind: one instruction a call).
  CC_ALWAYS_INLINE ShardSlot& shard_of(Hashed h) noexcept {
    const auto offset =
        static_cast<std::size_t>(h.value >> (32 - kShardSlotShift)) & shard_offset_mask_;
    return *reinterpret_cast<ShardSlot*>(reinterpret_cast<char*>(shards_.get()) + offset);
  }

  // Every shard hashes alike, and hash_of() reads only the hash function, which is set when the
  // shard is built and never written after: no lock needed, which the analysis cannot know.
  template <class Q>
  CC_ALWAYS_INLINE std::uint64_t hash_of(const Q& key) const CC_NO_THREAD_SAFETY_ANALYSIS {
    return shards_[0].cache->hash_of(key);
  }

  // `full_log`: set to the reader's stripe when its log was full (the hit dropped).
  template <class Q>
  CC_ALWAYS_INLINE std::optional<V> read_locked(ShardSlot& slot, const Q& key, Hashed h,
                                                TimePoint now, ReadMostlyLock::Stripe*& full_log) {
    ReadMostlyLock::Reader reader(slot.lock);
    // Taken here, under the reader's hold: the analysis does not carry a hold into a lambda.
    const Shard& shard = *slot.cache;
    return shard.peek_prehashed(
        key, h, now,
        [&](const typename Shard::Peek& hit) CC_ALWAYS_INLINE_LAMBDA -> std::optional<V> {
          reader.ends_as(ReadMostlyLock::kHit);
          if constexpr (SharedAccessPolicy<Policy>)
            shard.policy().on_shared_access(hit.meta());
          else if (!log_access(reader.stripe(), hit.id()))
            full_log = &reader.stripe();
          return hit.value();
        },
        [&]() CC_ALWAYS_INLINE_LAMBDA -> std::optional<V> {
          reader.ends_as(ReadMostlyLock::kMiss);
          return std::nullopt;
        });
  }

  // Records a hit on `id` in the reader's stripe; false when the log was full (the hit dropped).
  // The entry carries the stripe's generation as this reader saw it (acquire: a reader that sees
  // a replay's new generation also sees its reset of `logged`).
  static bool log_access(ReadMostlyLock::Stripe& stripe, SlotId id) noexcept {
    if (stripe.logged.load(std::memory_order_relaxed) >= ReadMostlyLock::kLogCapacity) return false;
    const std::uint64_t generation = stripe.generation.load(std::memory_order_acquire);
    const std::uint32_t at = stripe.logged.fetch_add(1, std::memory_order_relaxed);
    if (at >= ReadMostlyLock::kLogCapacity) return false;
    stripe.log[at].store(generation << 32 | (std::uint64_t{id} + 1), std::memory_order_relaxed);
    return true;
  }

  // Replays every stripe's logged hits into the policy, empties the logs and starts a new
  // generation. Called with the shard's writer mutex held: either in a write section (no reader
  // inside), or beside fast readers, which is safe because for a logged policy they read only
  // the table and the policy reads the table and writes only its own state and the slots' Meta,
  // which readers of logged policies never read.
  // Why a replayed id still names the entry it was logged for: an entry is replayed only if it
  // carries the current generation, so it was logged by a read section after the last replay;
  // every write section replays (and so bumps the generation) before it changes the table, and
  // starts only once that read section ended, so the table has not changed since the entry was
  // logged. A reader beside a concurrent replay may claim a slot and store its entry after the
  // replay passed it (or after the reset of `logged`): the entry carries the old generation, or
  // lies beyond `logged`, and is never replayed; a hit lost, as when the log is full.
  // (replay_stripe is unchecked: the analysis sees a shared hold and a call that is not const;
  // the argument above is why it is safe.)
  void replay_logged_hits(ShardSlot& slot) {
    if constexpr (!SharedAccessPolicy<Policy>) {
      for (std::size_t s = 0; s < slot.lock.stripe_count(); ++s)
        replay_stripe(slot, slot.lock.stripe(s));
    }
  }
  void replay_stripe(ShardSlot& slot, ReadMostlyLock::Stripe& stripe) CC_NO_THREAD_SAFETY_ANALYSIS {
    // Only replays write the generation, and they hold the writer mutex: relaxed suffices.
    const std::uint32_t generation = stripe.generation.load(std::memory_order_relaxed);
    const std::uint32_t logged = stripe.logged.load(std::memory_order_relaxed);
    if (logged != 0) {
      const std::uint32_t end =
          logged < ReadMostlyLock::kLogCapacity ? logged : ReadMostlyLock::kLogCapacity;
      for (std::uint32_t i = 0; i < end; ++i) {
        const std::uint64_t entry = stripe.log[i].exchange(0, std::memory_order_relaxed);
        if (entry != 0 && (entry >> 32) == generation)
          slot.cache->note_access(static_cast<SlotId>(entry) - 1);
      }
      stripe.logged.store(0, std::memory_order_relaxed);
    }
    stripe.generation.store(generation + 1, std::memory_order_release);
  }
  // A reader whose log filled up replays it if no writer (or other replay) holds the shard's
  // mutex; otherwise the next writer replays it. Its own stripe only: the others' lines stay
  // where they are (the generation argument above holds stripe by stripe), so a read-only
  // workload under a logged policy writes only the mutex line, once per kLogCapacity hits.
  [[gnu::noinline]] void replay_when_free(ShardSlot& slot, ReadMostlyLock::Stripe& stripe) {
    if (!slot.lock.try_lock_shared_slow()) return;
    replay_stripe(slot, stripe);
    slot.lock.unlock_shared_slow();
  }

  template <class Q>
  PutOutcome put_until(Q&& key, V value, TimePoint deadline, TimePoint now) {
    const Hashed h{hash_of(key)};
    ShardSlot& slot = shard_of(h);
    if constexpr (Shard::kOverwritesBesideReaders) {
      slot.lock.lock_beside_readers();
      if (overwrite_beside_readers(slot, key, value, deadline, h, now)) {
        slot.lock.unlock_beside_readers();
        return PutOutcome::kReplaced;
      }
      slot.lock.exclude_readers();
      ReadMostlyLock::Writer lock(slot.lock, ReadMostlyLock::Writer::Adopt{});
      replay_logged_hits(slot);
      return slot.cache->put_prehashed(std::forward<Q>(key), std::move(value), deadline, h, now);
    } else {
      ReadMostlyLock::Writer lock(slot.lock);
      replay_logged_hits(slot);
      return slot.cache->put_prehashed(std::forward<Q>(key), std::move(value), deadline, h, now);
    }
  }
  // Cache::overwrite_beside_readers under the shard's writer mutex alone (unchecked: the analysis
  // sees a shared hold and a call that is not const). Safe beside fast readers for the reasons
  // that function gives; and the policy hears the access as from a replay of logged hits, which
  // runs beside fast readers under the same mutex (replay_logged_hits says why that is safe).
  // No replay is needed first: the overwrite moves no entry, so logged slot ids stay valid.
  // noexcept: nothing in it throws for a value that is one atomic word and a key whose equality
  // does not throw, and the caller holds the mutex without a guard across it.
  template <class Q>
  CC_ALWAYS_INLINE bool overwrite_beside_readers(
      ShardSlot& slot, const Q& key, const V& value, TimePoint deadline, Hashed h,
      TimePoint now) noexcept CC_NO_THREAD_SAFETY_ANALYSIS {
    return slot.cache->overwrite_beside_readers(key, value, deadline, h, now);
  }

  template <class Fn>
  void for_each_shard_exclusive(Fn&& fn) {
    for (std::size_t i = 0; i < shard_count_; ++i) {
      ShardSlot& slot = shards_[i];
      ReadMostlyLock::Writer lock(slot.lock);
      replay_logged_hits(slot);
      fn(*slot.cache);
    }
  }
  // Under the writer mutex only (fast readers run on): for const whole-shard reads.
  template <class Fn>
  void for_each_shard_mutex(Fn&& fn) const {
    for (std::size_t i = 0; i < shard_count_; ++i) {
      const ShardSlot& slot = shards_[i];
      slot.lock.lock_shared_slow();
      fn(std::as_const(*slot.cache));
      slot.lock.unlock_shared_slow();
    }
  }

  std::size_t shard_count_;
  std::size_t shard_offset_mask_;  // (shard_count_ - 1) * sizeof(ShardSlot), for shard_of
  ClockT clock_;
  std::unique_ptr<ShardSlot[]> shards_;
};

}  // namespace chronocache
