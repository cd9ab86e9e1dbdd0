// chronocache::Cache: an in-memory key-value cache with a time-to-live per entry.
//
//   #include "chronocache/cache.h"
//   using namespace std::chrono_literals;
//
//   chronocache::Cache<std::string, int> cache;
//   cache.put("answer", 42, 30s);                 // visible for 30 s
//   cache.put("forever", 7);                      // no expiry
//   std::optional<int> v = cache.get("answer");   // std::string_view lookups build no string
//   cache.reclaim_expired(1024);                  // a host's periodic, bounded sweep
//
//   // Bounded, with a policy chosen at compile time and a clock tests can move:
//   chronocache::Cache<int, int, chronocache::Lru, chronocache::ManualClock> lru({.max_entries =
//   2}); lru.clock().advance(5s);
//
// Semantics (tests in cache_test.cc pin each line):
//   * An entry with deadline D is visible strictly before D: at now == D it is gone for get,
//     contains, size and erase. Deadlines have millisecond resolution; a TTL is rounded up to a
//     whole millisecond, so a positive TTL never means "already expired".
//   * TTL <= 0: nothing is stored, any previous value of the key is removed, and put returns
//     kExpiredOnArrival (the entry would be dead at its own insertion).
//   * A TTL so long that now + TTL passes the end of time means "never expires".
//   * put on an existing key replaces value and deadline (a put without TTL clears the deadline).
//   * Expiry is lazy (get and put remove an expired entry they meet) plus proactive: the host calls
//     reclaim_expired(budget), which examines at most `budget` slots and frees the expired ones.
//   * size() counts live entries only and changes nothing. It is O(1) while no stored deadline can
//     have passed (it keeps a lower bound on the earliest deadline, refreshed by each full
//     reclaim_expired cycle) and O(capacity) otherwise.
//   * max_entries bounds stored entries; a new key beyond it evicts Policy's victim (or is refused
//     under TtlOnly). An expired victim counts as expired, not evicted.
//   * max_bytes bounds memory_used() (table + policy + HeapBytes of keys and values) the same
//     way; an overwrite that grows a value evicts other entries, never the one just written.
//
// Memory: `Cache<int, int, TtlOnly, CoarseClock, CompactIntHash<int>>` (base/compact_int_hash.h)
// stores 32-bit keys as 2-byte quotients of their hash: 12-12.6 bytes an int -> int entry from
// 1 M up instead of 14-17, for ~6 instructions a lookup; its keys are handed out by value.
//
// Cost model: one hash per operation, one clock read per public call (a relaxed atomic load with
// CoarseClock), no allocation except when the table grows (one segment at a time) or a deadline is
// beyond the ~49-day window of the 32-bit slot encoding (kept exactly in a side map, see
// expiry/deadline.h). Not thread-safe: use ShardedCache, or one Cache per thread.
//
// Invalidation: values are returned by copy, so nothing a Cache returns dangles.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "chronocache/base/hash.h"
#include "chronocache/capture.h"
#include "chronocache/clock/clock.h"
#include "chronocache/clock/coarse_clock.h"
#include "chronocache/concurrency/atomic_word.h"
#include "chronocache/expiry/deadline.h"
#include "chronocache/memory/heap_bytes.h"
#include "chronocache/options.h"
#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/ttl_only.h"
#include "chronocache/stats.h"
#include "chronocache/table/segmented_table.h"

namespace chronocache {

enum class PutOutcome : std::uint8_t {
  kInserted,          // the key had no live entry; now it has one
  kReplaced,          // a live entry got the new value and deadline
  kExpiredOnArrival,  // TTL <= 0 (or deadline <= now): nothing stored, old value removed
  kRejectedFull,      // max_entries reached and the policy names no victim (TtlOnly)
};

// What a lookup by a host counts (find_prehashed, find_key_prehashed, upsert_prehashed).
enum class Access : std::uint8_t {
  kRead,     // a read: a hit or a miss in stats, on_access for the policy
  kNoTouch,  // a hit or a miss in stats, nothing for the policy: a look at the entry
  kWrite,    // on_access for the policy, nothing in stats: the lookup of a write that keeps the
             // entry (the server's INCR and APPEND, as Redis's lookupKeyWrite)
  kPeek,     // neither: the lookup of a write (put, the server's SET without GET)
};
// Whether a lookup of `access` tells the policy (on_access), and whether it counts a hit or miss.
constexpr bool touches_policy(Access access) noexcept {
  return access == Access::kRead || access == Access::kWrite;
}
constexpr bool counts_in_stats(Access access) noexcept {
  return access == Access::kRead || access == Access::kNoTouch;
}

// A key's hash, computed once by a caller that needs it too (ShardedCache picks the shard with it).
struct Hashed {
  std::uint64_t value;
};

inline constexpr TimePoint kNoExpiry = detail::kNever;

template <class K, class V, EvictionPolicy Policy = TtlOnly, Clock ClockT = CoarseClock,
          class Hash = DefaultHash<K>, class Eq = std::equal_to<>,
          CacheFeatures Features = CacheFeatures{}>
class Cache {
 public:
  using key_type = K;
  using mapped_type = V;
  using policy_type = Policy;
  using clock_type = ClockT;

 private:
  // A policy that may keep no word at run time (PolicyMetaOptional) has it in a meta column the
  // table drops while unused; others keep it in the slot.
  using TableMeta =
      std::conditional_t<PolicyMetaOptional<Policy>, detail::MetaColumn<typename Policy::Meta>,
                         typename Policy::Meta>;
  using Table = detail::SegmentedTable<K, V, TableMeta, Hash, Eq>;
  using Slot = typename Table::SlotType;
  using Ref = typename Table::Ref;

 public:
  // The options by reference: by value, their 24 bytes went on the stack, and GCC kept a frame
  // pointer (a register fewer for every loop) in each function that constructs a Cache.
  explicit Cache(const CacheOptions& options = {}, ClockT clock = ClockT(), Hash hash = Hash(),
                 Eq eq = Eq())
      : options_(options),
        clock_(std::move(clock)),
        table_(hash, eq),
        epoch_(clock_.now()),
        far_(0, hash, eq) {
    if constexpr (Table::kMetaColumn) table_.set_meta_column(policy_.needs_meta());
    if (options_.initial_capacity != 0) reserve(options_.initial_capacity);
  }
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // ---- The everyday API: reads the clock once per call. ------------------------------------

  template <class Q, class Rep, class Period>
  requires std::constructible_from<K, Q&&> CC_ALWAYS_INLINE PutOutcome
  put(Q&& key, V value, std::chrono::duration<Rep, Period> ttl) {
    const TimePoint now = clock_.now();
    const Hashed h{table_.hash(key)};
    return put_for_prehashed(std::forward<Q>(key), std::move(value), detail::ttl_to_ms(ttl), h,
                             now);
  }

  // No expiry.
  template <class Q>
  requires std::constructible_from<K, Q&&> PutOutcome put(Q&& key, V value) {
    const Hashed h{table_.hash(key)};
    return put_prehashed(std::forward<Q>(key), std::move(value), kNoExpiry, h, clock_.now());
  }

  template <class Q>
  CC_ALWAYS_INLINE std::optional<V> get(const Q& key) {
    return get_read_clock(key, Hashed{table_.hash(key)}, [this] { return clock_.now(); });
  }

  // True when a live entry was removed.
  template <class Q>
  bool erase(const Q& key) {
    return erase_prehashed(key, Hashed{table_.hash(key)}, clock_.now());
  }

  template <class Q>
  bool contains(const Q& key) const {
    return contains_prehashed(key, Hashed{table_.hash(key)}, clock_.now());
  }

  // The live entry's deadline (kNoExpiry if it has none); nullopt if there is no live entry.
  template <class Q>
  std::optional<TimePoint> deadline(const Q& key) const {
    return deadline_prehashed(key, Hashed{table_.hash(key)}, clock_.now());
  }

  // Live entries. Const: removes nothing, so it is safe under a shared lock.
  std::size_t size() const { return size_at(clock_.now()); }
  std::size_t size_at(TimePoint now) const {
    if (now < next_expiry_lower_bound_) return table_.size();
    std::size_t live = 0;
    table_.for_each([&](const Ref& ref) { live += live_at(ref, now) ? 1 : 0; });
    return live;
  }
  bool empty() const { return size() == 0; }
  // Entries held, including expired ones not yet reclaimed: O(1) always (Redis's DBSIZE counts
  // the same way). size() is the live count, but may have to scan.
  std::size_t stored_size() const noexcept { return table_.size(); }
  // Of those, the entries with a deadline, expired ones included: O(1) (Redis's INFO keyspace
  // `expires=`, its expires dict's size). Kept only with CacheFeatures::count_volatile.
  std::size_t volatile_stored_size() const noexcept requires(Features.count_volatile) {
    return window_deadlines_ + far_.size();
  }

  // Examines at most `budget` slots, continuing where the previous call stopped, and removes
  // the expired entries among them. Returns how many it removed.
  std::size_t reclaim_expired(std::size_t budget) {
    return reclaim_expired_at(budget, clock_.now());
  }
  // Slots one full reclaim cycle examines (full or not): a host that wants every entry visited
  // once per period P spends slot_capacity() * slice / P slots per slice (expiry/expiry_pacer.h).
  std::size_t slot_capacity() const noexcept { return table_.capacity(); }
  // False while no stored deadline can have passed at `now` (a lower bound on the earliest one,
  // lowered by every put and refreshed by each full reclaim cycle): a paced host skips its sweep,
  // so a cache without due entries costs no sweeping at all. O(1).
  bool may_hold_expired(TimePoint now) const noexcept { return now >= next_expiry_lower_bound_; }

  // Refits (to 0.86 full) up to `max_rebuilds` segments that erases left loose (under 3/4
  // full: SegmentedTable::is_loose). Erase shrinks a segment once it is half empty, and a mass
  // delete often goes on past that, leaving segments between 1/2 and 0.775 full; this gives their
  // slots back. O(segments) plus the moves: a host calls it from a periodic tick with a bound that
  // keeps each call short (a loose segment moves at most ~3 300 entries: tens of microseconds for
  // integer keys, a few hundred when each key is rehashed from a record elsewhere). Returns the
  // segments rebuilt. While entries may be due, it leaves alone the segments the expiry sweep has
  // passed or is in, as erase does (shrink_sparse_segments says why).
  std::size_t shrink_loose_segments(std::size_t max_rebuilds) {
    return shrink_loose_segments_while([&] { return max_rebuilds-- > 0; });
  }
  // The same walk, bounded by the host instead: keep_going() is asked before each rebuild (a host
  // with a time budget), and the walk stops at its first false. One pass over the segments.
  template <class KeepGoing>
  std::size_t shrink_loose_segments_while(KeepGoing&& keep_going) {
    const TimePoint now = clock_.now();
    std::size_t rebuilt = 0;
    for (std::size_t s = 0; s < table_.segment_count(); ++s) {
      if (table_.is_loose(s) && spares_the_sweep(s, now)) {
        if (!keep_going()) break;
        shrink_slow(s);
        ++rebuilt;
      }
    }
    return rebuilt;
  }

  // During a capture, clear() and reserve() first complete it (both change every segment).
  void clear() {
    finish_capture();
    table_.clear();
    policy_.clear();
    entry_heap_bytes_ = 0;
    window_deadlines_ = 0;
    far_.clear();
    next_expiry_lower_bound_ = kNoExpiry;
    cycle_min_stored_ = detail::kNoDeadlineInWindow;
    refresh_quiet_write_floor();
  }

  // Makes room for `entries` without further growth.
  void reserve(std::size_t entries) {
    finish_capture();
    table_.reserve(entries, on_move());
  }

  // Bytes held by the table, the policy and far deadlines (not heap owned by keys/values).
  std::size_t memory_bytes() const noexcept {
    return table_.memory_bytes() + policy_.memory_bytes() + far_.bucket_count() * sizeof(void*) +
           far_.size() * (sizeof(K) + 3 * sizeof(void*));
  }

  // The part of memory_bytes() in pages the table maps itself, outside the heap (its larger
  // segments: table/segmented_table.h), now and at its peak since the cache was made.
  std::size_t mapped_bytes() const noexcept { return table_.mapped_bytes(); }
  std::size_t peak_mapped_bytes() const noexcept { return table_.peak_mapped_bytes(); }

  // What max_bytes bounds: memory_bytes() plus the heap that stored keys and values own
  // (HeapBytes). O(1).
  std::size_t memory_used() const noexcept { return memory_bytes() + entry_heap_bytes_; }

  // Removes the policy's victim (an expired one counts as expired, a live one as evicted) and
  // calls on_evicted(const K&, const V&) before it goes. False when the policy names none (TtlOnly,
  // or the cache is empty). For hosts that keep their own budget (the server's maxmemory).
  template <class OnEvicted>
  bool evict_one(TimePoint now, OnEvicted&& on_evicted) {
    const std::optional<SlotId> victim = policy_.pick_victim();
    if (!victim) return false;
    const Ref ref = table_.at(*victim);
    on_evicted(table_.key_of(ref), std::as_const(ref.slot->value));
    if (erase_counting_expiry(ref, relative_now_rebased(now))) ++stats_.evicted;
    return true;
  }

  // A host that changed an entry's heap footprint in place (through find_prehashed or
  // find_key_prehashed) reports it here so memory_used() stays exact.
  void note_heap_resize(std::size_t old_bytes, std::size_t new_bytes) noexcept {
    entry_heap_bytes_ += new_bytes;
    entry_heap_bytes_ -= old_bytes;
  }

  // The policy object, for policies with run-time settings (the server's switchable policy).
  // After changing how it orders entries, call reset_policy().
  Policy& policy() noexcept { return policy_; }
  const Policy& policy() const noexcept { return policy_; }
  // Forgets the policy's order and registers every stored entry anew, in table order. O(n).
  // A policy with an optional word (SwitchablePolicy) gets the table's meta column added or
  // dropped here, as the newly selected policy needs: every entry keeps its SlotId.
  void reset_policy() {
    policy_.clear();
    if constexpr (Table::kMetaColumn) table_.set_meta_column(policy_.needs_meta());
    table_.for_each_with_meta([&](const Ref& ref, typename Policy::Meta& meta) {
      meta = policy_.on_insert(ref.id(), table_.entry_hash(ref));
    });
  }

  // ---- Point-in-time capture (capture.h): a consistent view of a live cache, for snapshots.
  // From begin_capture on, every entry live at `now` reaches sink.capture() exactly once, with
  // the key, value and deadline it has now: through capture_step, or just before a write would
  // change it. One capture at a time; the sink must outlive it.
  void begin_capture(CaptureSink<K, V>& sink, TimePoint now) {
    CC_CHECK(capture_ == nullptr, "a capture is already running");
    table_.begin_capture();
    capture_ = &sink;
    capture_now_ = now;
    refresh_quiet_write_floor();
  }
  // Hands over pending chunks (16-slot groups) until about `slots` slots were examined; true once
  // the capture is complete (then capturing() is false and the sink is no longer used).
  bool capture_step(std::size_t slots) {
    std::size_t examined = 0;
    while (capture_ != nullptr && examined < slots) {
      const typename Table::Chunk chunk = table_.next_pending_chunk();
      if (chunk.segment == Table::kNoSegment) break;  // not reached: the last one ends the capture
      examined += hand_over(chunk);
    }
    return capture_ == nullptr;
  }
  // Hands over everything still pending.
  void finish_capture() { capture_step(~std::size_t{0}); }
  // Stops a capture; the sink hears nothing more.
  void abandon_capture() noexcept {
    table_.end_capture();
    capture_ = nullptr;
    refresh_quiet_write_floor();
  }
  bool capturing() const noexcept { return capture_ != nullptr; }

  const CacheStats& stats() const noexcept { return stats_; }
  // Table bytes one entry occupies in its slot and control byte (not the share of empty slots).
  static constexpr std::size_t slot_bytes() noexcept { return sizeof(Slot) + 1; }
  // slot_bytes() plus the entry's policy word when the table keeps it in a column now.
  std::size_t entry_table_bytes() const noexcept {
    return slot_bytes() + (table_.meta_column() ? sizeof(typename Policy::Meta) : 0);
  }
  const CacheOptions& options() const noexcept { return options_; }
  ClockT& clock() noexcept { return clock_; }
  const ClockT& clock() const noexcept { return clock_; }

  // ---- For hosts that hash once and read the clock once per batch (ShardedCache, the server).
  // `h` must be table hash of `key` (hash_of); `now` must not run backwards across calls.

  template <class Q>
  std::uint64_t hash_of(const Q& key) const noexcept {
    return table_.hash(key);
  }
  const Hash& hash_function() const noexcept { return table_.hash_function(); }
  // For a host whose hash's top bits are its own (a group a client chooses): whether a new key of
  // hash `h` fits. False only once that many keys share the table's 20 leading hash bits that
  // their segment can grow no more, where an insert would stop the process; hash_prefix_skewed()
  // (one load) says whether any segment is near that, so a host asks only then.
  bool has_room_for_prehashed(Hashed h) const noexcept { return table_.has_room_for(h.value); }
  bool hash_prefix_skewed() const noexcept { return table_.prefix_skewed(); }

  // Stores `value` until `deadline` (kNoExpiry for none): an upsert that assigns a live entry or
  // inserts the key (the one path every write takes).
  template <class Q>
  requires std::constructible_from<K, Q&&> CC_ALWAYS_INLINE PutOutcome
  put_prehashed(Q&& key, V value, TimePoint deadline, Hashed h, TimePoint now) {
    return upsert_prehashed(key, h, now, Access::kPeek, [&](Upsert& entry) CC_ALWAYS_INLINE_LAMBDA {
      if (entry.found()) return entry.assign(std::move(value), deadline);
      return entry.insert(std::forward<Q>(key), std::move(value), deadline);
    });
  }

  // put_prehashed with the deadline now + ttl_ms (ttl_ms <= 0: expired on arrival). A TTL below
  // 24.8 days (nearly all) is stored as relative_now + ttl_ms: no encode into the window, no
  // test for a far deadline or one already passed (callgrind: putSingle 74 -> 62 instructions).
  // A write that must rebase first, or whose `now` is before the epoch (a host's reading ahead of
  // this cache's clock), takes the absolute deadline, which is exact there too. That test stands
  // in for the one upsert_prehashed makes, at 1 instruction more (GCC holds 2^31 in a register).
  template <class Q>
  requires std::constructible_from<K, Q&&> CC_ALWAYS_INLINE PutOutcome
  put_for_prehashed(Q&& key, V value, std::int64_t ttl_ms, Hashed h, TimePoint now) {
    const std::uint64_t unchecked = epoch_.unchecked_relative_now(now);
    if (!detail::WindowDeadline::fits(ttl_ms) || !detail::DeadlineEpoch::is_usable(unchecked))
        [[unlikely]]
      return put_prehashed(std::forward<Q>(key), std::move(value),
                           detail::deadline_for_ttl_ms(now, ttl_ms), h, now);
    const auto relative_now = static_cast<std::uint32_t>(unchecked);
    return upsert_at(key, h, now, relative_now, Access::kPeek,
                     [&](Upsert& entry) CC_ALWAYS_INLINE_LAMBDA {
                       const auto deadline = detail::WindowDeadline::after(relative_now, ttl_ms);
                       if (entry.found()) return entry.assign_window(std::move(value), deadline);
                       return entry.insert_window(std::forward<Q>(key), std::move(value), deadline);
                     });
  }

  // ---- Upsert: insert or update in place, with one hash and one probe -----------------------
  // Looks `key` up once and calls fn(Upsert& entry) exactly once, with the live entry or its
  // absence; fn decides what happens, through at most one of entry's actions, and what upsert
  // returns (fn's result). In the spirit of Abseil's try_emplace/lazy_emplace: a key is built
  // only when inserted, and the value of a live entry may be rewritten where it lies.
  //
  //   cache.upsert_prehashed(key, h, now, Access::kPeek, [&](auto& entry) {
  //     if (!entry.found()) return entry.insert(std::string(key), 1, deadline);   // build K
  //     ++entry.mutable_value();                      // an edit in place ...
  //     return entry.update(entry.deadline());        // ... kept, with the deadline it had
  //   });
  //
  // What fn sees. entry.found() is true when a live entry is there; key(), value() and
  // deadline() read it (kNoExpiry: none). An expired entry met by the probe is removed first
  // (counted as expired; a running capture may leave it out, capture.h) and fn sees the key
  // absent.
  // What fn may do, at most one action; none leaves the cache as it was:
  //   assign(value, deadline)  found: replaces value and deadline        -> kReplaced
  //   update(deadline, old_heap_bytes, new_heap_bytes)
  //                            found: fn changed the entry through mutable_value() or
  //                            mutable_key() (which must stay equal to `key` under Hash and Eq);
  //                            stores `deadline` and takes the heap size change the edit made
  //                            (0, 0: none)                                -> kReplaced
  //   erase()                  found: removes the entry                   -> true
  //   insert(k, value, deadline)
  //                            absent: stores a new entry, K built from k  -> kInserted, or
  //                            kRejectedFull as put
  // A deadline <= now makes assign and update remove the entry and insert store nothing (k is not
  // converted to K): kExpiredOnArrival, as put. A deadline beyond the 32-bit window is kept exactly
  // (far deadlines), as put. fn must not call into this cache at all: before the action, insert
  // takes the free slot the lookup found (another write could take or move it; under a byte
  // budget it looks again); after it, entry and anything read through it are invalid (insert may
  // move slots, erase frees).
  //
  // Stats and policy. Access::kRead counts the probe as a hit (found) or a miss and tells the
  // policy of the access, as get; Access::kNoTouch counts it and tells the policy nothing;
  // Access::kWrite tells the policy and counts nothing; Access::kPeek does neither (put). assign
  // and update are an access for the policy as well (Redis's SET refreshes a key's LRU clock and
  // LFU counter), so a kRead lookup that overwrites is two accesses, as a GET followed by a SET.
  // insert is on_insert, erase on_erase; neither counts a hit or a miss.
  //
  // Budgets. insert honours max_entries and max_bytes as put does (it may evict other entries,
  // or refuse with kRejectedFull); assign and update that grow the entry evict other entries
  // under max_bytes, never the entry itself (it may stay over budget until the next write).
  //
  // Capture. A running capture is handed the entry's pending group before any change: by every
  // action, and by mutable_value()/mutable_key() before they hand out the entry (the reads
  // key(), value() and deadline() hand nothing over).
  //
  // Preconditions: `h` is hash_of(key); `now` does not run backwards across calls.
  // Invalidation: pointers from find_prehashed/find_key_prehashed, as any write.
  class Upsert {
   public:
    Upsert(const Upsert&) = delete;  // lives only for the call of fn, on upsert's stack
    Upsert& operator=(const Upsert&) = delete;

    bool found() const noexcept { return static_cast<bool>(ref_); }
    // The live entry (found() only).
    decltype(auto) key() const noexcept { return cache_->table_.key_of(ref_); }
    const V& value() const noexcept { return ref_.slot->value; }
    TimePoint deadline() const { return cache_->stored_deadline(ref_); }
    // The live entry for an edit in place, which update() then completes (found() only).
    K& mutable_key() requires(!Table::kQuotientKeys) {
      cache_->before_write(ref_);
      return ref_.slot->key;
    }
    V& mutable_value() {
      cache_->before_write(ref_);
      return ref_.slot->value;
    }

    CC_ALWAYS_INLINE PutOutcome assign(V value, TimePoint deadline) {
      CC_ASSERT(found());
      cache_->before_write(ref_);
      if (deadline <= now_) [[unlikely]]
        return erase_on_arrival();
      replace_value(std::move(value));
      return written(deadline, kValueOwnsHeap);
    }

    CC_ALWAYS_INLINE PutOutcome update(TimePoint deadline, std::size_t old_heap_bytes = 0,
                                       std::size_t new_heap_bytes = 0) {
      CC_ASSERT(found());
      Cache& cache = *cache_;
      cache.before_write(ref_);
      cache.note_heap_resize(old_heap_bytes, new_heap_bytes);
      if (deadline <= now_) [[unlikely]]
        return erase_on_arrival();
      return written(deadline, new_heap_bytes > old_heap_bytes);
    }

    bool erase() {
      CC_ASSERT(found());
      cache_->before_write(ref_);
      cache_->erase_entry(ref_);
      ref_ = Ref{};
      return true;
    }

    template <class KArg>
    requires std::constructible_from<K, KArg&&> CC_ALWAYS_INLINE PutOutcome
    insert(KArg&& key, V value, TimePoint deadline) {
      CC_ASSERT(!found());
      if (deadline <= now_) [[unlikely]]
        return PutOutcome::kExpiredOnArrival;
      return cache_->put_absent(std::forward<KArg>(key), std::move(value), deadline, h_,
                                relative_now_, ref_);
    }

   private:
    friend class Cache;
    CC_ALWAYS_INLINE Upsert(Cache& cache, Ref ref, Hashed h, TimePoint now,
                            std::uint32_t relative_now) noexcept
        : cache_(&cache), ref_(ref), h_(h), now_(now), relative_now_(relative_now) {}

    // assign and insert with a deadline in stored form (put_for_prehashed), which is never
    // passed: the same steps less the test.
    CC_ALWAYS_INLINE PutOutcome assign_window(V value, detail::WindowDeadline deadline) {
      CC_ASSERT(found());
      if (cache_->is_quiet_write(deadline)) [[likely]] {
        replace_value(std::move(value));
        cache_->count_window_deadline(ref_.slot->deadline, deadline.stored);
        ref_.slot->deadline = deadline.stored;
        return accessed(kValueOwnsHeap);
      }
      cache_->before_write(ref_);
      replace_value(std::move(value));
      return written(deadline, kValueOwnsHeap);
    }
    template <class KArg>
    CC_ALWAYS_INLINE PutOutcome insert_window(KArg&& key, V value,
                                              detail::WindowDeadline deadline) {
      CC_ASSERT(!found());
      return cache_->put_absent(std::forward<KArg>(key), std::move(value), deadline, h_,
                                relative_now_, ref_);
    }

    CC_ALWAYS_INLINE void replace_value(V&& value) {
      if constexpr (kValueOwnsHeap) {
        cache_->entry_heap_bytes_ -= HeapBytes<V>::of(ref_.slot->value);
        ref_.slot->value = std::move(value);
        cache_->entry_heap_bytes_ += HeapBytes<V>::of(ref_.slot->value);
      } else {
        ref_.slot->value = std::move(value);
      }
    }

    // The new deadline of an assigned or updated entry (a TimePoint or a WindowDeadline), then
    // accessed().
    template <class Deadline>
    CC_ALWAYS_INLINE PutOutcome written(Deadline deadline, bool may_have_grown) {
      cache_->forget_far_deadline(ref_);
      cache_->set_deadline(ref_, deadline);
      return accessed(may_have_grown);
    }
    // An overwrite counts as an access for the policy, and meets the byte budget when the entry
    // may have grown.
    CC_ALWAYS_INLINE PutOutcome accessed(bool may_have_grown) {
      Cache& cache = *cache_;
      cache.policy_.on_access(cache.table_.meta(ref_));
      if (may_have_grown && cache.options_.max_bytes != 0)
        cache.enforce_byte_budget(ref_.id(), relative_now_);  // may stay over: see above
      return PutOutcome::kReplaced;
    }
    PutOutcome erase_on_arrival() {
      cache_->erase_entry(ref_);
      ref_ = Ref{};
      return PutOutcome::kExpiredOnArrival;
    }

    Cache* cache_;
    Ref ref_;  // found: the entry; not found: where insert() puts the key (find_for_insert;
               // under a byte budget the insert looks again)
    Hashed h_;
    TimePoint now_;
    std::uint32_t relative_now_;
  };

  template <class Q, class Fn>
  CC_ALWAYS_INLINE decltype(auto) upsert_prehashed(const Q& key, Hashed h, TimePoint now,
                                                   Access access, Fn&& fn) {
    return upsert_at(key, h, now, relative_now_rebased(now), access, std::forward<Fn>(fn));
  }

  template <class Q>
  CC_ALWAYS_INLINE std::optional<V> get_prehashed(const Q& key, Hashed h, TimePoint now) {
    return get_read_clock(key, h, [now] { return now; });
  }

  template <class Q>
  bool erase_prehashed(const Q& key, Hashed h, TimePoint now) {
    const std::uint32_t relative_now = relative_now_rebased(now);
    const Ref ref = table_.find(key, h.value);
    if (!ref) return false;
    const std::size_t segment = ref.segment()->index;
    const bool live = erase_counting_expiry(ref, relative_now);
    if (spares_the_sweep(segment, now)) shrink_if_sparse(segment);
    return live;
  }

  template <class Q>
  bool contains_prehashed(const Q& key, Hashed h, TimePoint now) const {
    const Ref ref = table_.find(key, h.value);
    return ref && live_at(ref, now);
  }

  template <class Q>
  std::optional<TimePoint> deadline_prehashed(const Q& key, Hashed h, TimePoint now) const {
    const Ref ref = table_.find(key, h.value);
    if (!ref || !live_at(ref, now)) return std::nullopt;
    return stored_deadline(ref);
  }

  // In-place access: the live entry's value, or nullptr. Counts a hit or a miss, tells the policy
  // of the access and removes an expired entry it meets, as get does; copies nothing. The pointer
  // is valid until the next call that is not const. A host may change the value through it (the
  // server's APPEND and INCR), never the key.
  template <class Q>
  V* find_prehashed(const Q& key, Hashed h, TimePoint now) {
    const Ref ref = find_live(key, h, now, Access::kRead);
    return ref ? &ref.slot->value : nullptr;
  }

  // The live entry's stored key, or nullptr; otherwise as find_prehashed. For keys that carry
  // their value (a record: K holds key and value bytes, V is empty), the host may rewrite the
  // record through this pointer, provided it stays equal to `key` under Hash and Eq.
  template <class Q>
  K* find_key_prehashed(const Q& key, Hashed h, TimePoint now,
                        Access access = Access::kRead) requires(!Table::kQuotientKeys) {
    const Ref ref = find_live(key, h, now, access);
    return ref ? &ref.slot->key : nullptr;
  }

  // A read in place: as find_key_prehashed, but the stored key is handed out const, so a running
  // capture need not hand its segment over first (a read changes nothing a capture delivers).
  // The server's GET path (kRead), and its second look at a key it has read (kPeek).
  template <class Q>
  CC_ALWAYS_INLINE const K* read_key_prehashed(
      const Q& key, Hashed h, TimePoint now,
      Access access = Access::kRead) requires(!Table::kQuotientKeys) {
    const Ref ref = read_live(key, h, now, access, reads_remove_expired_);
    return ref ? &ref.slot->key : nullptr;
  }

  // A look at the live entry of `key`, for a host's introspection (the server's OBJECT, as
  // Redis's LOOKUP_NOTOUCH): a hit or a miss in stats, as a read, but no access for the policy,
  // so looking does not make the entry recent or frequent. Both pointers null: no live entry.
  // Valid until the next call that is not const.
  struct Inspection {
    const K* key = nullptr;
    const typename Policy::Meta* meta = nullptr;  // the entry's policy word
  };
  template <class Q>
  Inspection inspect_prehashed(const Q& key, Hashed h,
                               TimePoint now) requires(!Table::kQuotientKeys) {
    const Ref ref = read_live(key, h, now, Access::kNoTouch, reads_remove_expired_);
    if (!ref) return {};
    return {&ref.slot->key, &table_.meta(ref)};
  }

  // Whether a read that meets an expired entry removes it (the default) or reports it missing and
  // leaves it stored, for a sweep or a later read to remove. Off while the host must not change
  // its data: the server during CLIENT PAUSE, where Redis 7 pauses expiry too (so DBSIZE and
  // expired_keys stay put). Applies to get/get_prehashed and read_key_prehashed; a write that
  // meets an expired entry always removes it first.
  void set_reads_remove_expired(bool remove) noexcept { reads_remove_expired_ = remove; }

  // Batch hints for a host that knows its next keys (the server's pipelined commands): prefetch()
  // starts loading the table memory a lookup of hash `h` touches; later, prefetch_keys() calls
  // fn(const K&) for the stored keys that lookup will compare, so the host can prefetch what they
  // point to. Neither changes anything; both are only worth it across several keys.
  void prefetch(Hashed h) const noexcept { table_.prefetch(h.value); }
  template <class Fn>
  void prefetch_keys(Hashed h, Fn&& fn) const {
    table_.for_each_candidate(h.value, [&](const Ref& ref) { fn(table_.key_of(ref)); });
  }

  // ---- Reads that write nothing, for concurrent readers (ShardedCache) ----------------------
  // The live entry of `key` at `now`, seen through a Peek. Const all the way down: counts no hit or
  // miss, tells the policy nothing, and leaves an expired entry where it is (reported missing;
  // the next write or sweep removes it). So any number of threads may peek at once while no
  // thread writes. The Peek is valid until the next call that is not const.
  class Peek {
   public:
    Peek() = default;
    explicit operator bool() const noexcept { return static_cast<bool>(ref_); }
    decltype(auto) key() const noexcept { return table_->key_of(ref_); }
    // The value, copied out. Where writers may overwrite it beside readers
    // (overwrite_beside_readers), it is read as the one atomic word it is.
    V value() const noexcept {
      if constexpr (kOverwritesBesideReaders)
        return std::atomic_ref<V>(ref_.slot->value).load(std::memory_order_relaxed);
      else
        return ref_.slot->value;
    }
    const typename Policy::Meta& meta() const noexcept { return table_->meta(ref_); }
    SlotId id() const noexcept { return ref_.id(); }  // for note_access later

   private:
    friend class Cache;
    Peek(Ref ref, const Table& table) noexcept : ref_(ref), table_(&table) {}
    Ref ref_;
    const Table* table_ = nullptr;
  };
  // Calls on_hit(const Peek&) for a live entry, else on_miss(), and returns what it returns.
  // Continuations rather than a returned Peek: GCC materialised the returned one in memory
  // at the join of hit and miss, and tested it again there (callgrind: 4 instructions a read).
  template <class Q, class OnHit, class OnMiss>
  CC_ALWAYS_INLINE decltype(auto) peek_prehashed(const Q& key, Hashed h, TimePoint now,
                                                 OnHit&& on_hit, OnMiss&& on_miss) const {
    const Ref ref = table_.find(key, h.value);
    if (!ref) return on_miss();
    // The deadline is loaded once, before the value (Peek::value): an overwrite beside readers
    // stores the value first and the deadline last (overwrite_beside_readers says why that pair
    // is always consistent). Acquire and relaxed loads are plain moves on x86.
    const detail::StoredDeadline deadline = load_deadline(*ref.slot);
    // live_at, with the test for "no deadline in the window" moved behind the common answer: that
    // mark reads as a deadline at the window's end, after every `now` and far deadline a rebase
    // allows, so only an entry that looks expired takes the exact check, out of line (callgrind,
    // engine_ops chronocache_sharded: 2 instructions a hit fewer than testing the mark first;
    // inlined whole, the far-deadline lookup cost ~10 more).
    const bool live =
        epoch_.is_before_window_deadline(deadline, now) || live_outside_window(ref, now);
    if (!live) return on_miss();
    return on_hit(Peek(ref, table_));
  }

  // ---- An overwrite beside readers (ShardedCache) -----------------------------------------
  // Whether values can be overwritten while peek_prehashed readers copy them: a value that is
  // one lock-free atomic word.
  static constexpr bool kOverwritesBesideReaders = detail::is_one_atomic_word<V>();

  // put_prehashed's overwrite of a live entry, made while readers may be inside peek_prehashed
  // (the caller excludes every other call that is not const): true once `value` and `deadline`
  // are stored and the policy has heard of the access, as put_prehashed would leave them. False,
  // changing nothing, unless the key has a live entry, no capture runs, no rebase is due and
  // the deadline is in the window (or kNoExpiry) and not before the entry's: the caller then
  // takes the exclusive path. Most overwrites qualify (a TTL refreshed, a value replaced).
  //
  // Why a reader always sees a consistent entry: the value is stored first and the deadline
  // last (release); a reader loads the deadline (acquire), then the value. So the value a
  // reader copies is the one stored with the deadline it loaded or a later one, and as
  // deadlines only grow here (each write section that may lower one excludes readers), that
  // value's own deadline is no earlier than the one the reader checked: if the entry looked
  // live, it was live with that value. A reader that finds the deadline passed reports a miss,
  // which is the entry as it was before the overwrites it has not seen the deadline of.
  template <class Q>
  CC_ALWAYS_INLINE bool overwrite_beside_readers(const Q& key, V value, TimePoint deadline,
                                                 Hashed h,
                                                 TimePoint now) requires kOverwritesBesideReaders {
    const std::uint64_t relative_now = epoch_.unchecked_relative_now(now);
    if (capture_ != nullptr || !detail::DeadlineEpoch::is_usable(relative_now)) return false;
    const detail::StoredDeadline stored = epoch_.encode(deadline);
    if (stored == detail::kNoDeadlineInWindow && deadline != kNoExpiry) return false;  // far
    const Ref ref = table_.find(key, h.value);
    if (!ref) return false;
    const detail::StoredDeadline old = ref.slot->deadline;
    // A live entry whose deadline is not after the new one: in the window, or none at all (the
    // mark with no far deadline anywhere).
    const bool live =
        old == detail::kNoDeadlineInWindow
            ? far_.empty()
            : detail::DeadlineEpoch::is_live(old, static_cast<std::uint32_t>(relative_now));
    if (!live || stored < old || deadline <= now) return false;
    count_window_deadline(old, stored);  // the writer's own count: no reader reads it
    std::atomic_ref<V>(ref.slot->value).store(value, std::memory_order_relaxed);
    std::atomic_ref<detail::StoredDeadline>(ref.slot->deadline)
        .store(stored, std::memory_order_release);
    // The expiry bounds need no update: the deadline did not move down.
    if constexpr (SharedAccessPolicy<Policy>)
      policy_.on_shared_access(table_.meta(ref));
    else
      policy_.on_access(table_.meta(ref));  // as a replay of logged hits beside readers does
    return true;
  }
  // Tells the policy of an access a peek found at `id` (Peek::id()). Precondition: nothing but
  // note_access and const calls ran since that peek, so `id` still names the same entry.
  void note_access(SlotId id) { policy_.on_access(table_.meta(table_.at(id))); }

  // Moves a live entry's deadline (kNoExpiry: never expires); a deadline at or before `now`
  // removes the entry. Returns whether a live entry was there. Touches no stats or policy.
  template <class Q>
  bool set_deadline_prehashed(const Q& key, Hashed h, TimePoint deadline, TimePoint now) {
    const std::uint32_t relative_now = relative_now_rebased(now);
    const Ref ref = table_.find(key, h.value);
    if (!ref) return false;
    before_write(ref);
    if (!detail::DeadlineEpoch::is_live(ref.slot->deadline, relative_now)) {
      erase_counting_expiry(ref, relative_now);
      return false;
    }
    if (deadline <= now) {
      erase_entry(ref);
      return true;
    }
    forget_far_deadline(ref);
    set_deadline(ref, deadline);
    return true;
  }

  // Calls fn(const K&, const V&, TimePoint deadline) for every live entry; fn must not modify
  // the cache. O(capacity).
  template <class Fn>
  void for_each_live(TimePoint now, Fn&& fn) const {
    table_.for_each([&](const Ref& ref) {
      if (live_at(ref, now)) fn(table_.key_of(ref), ref.slot->value, stored_deadline(ref));
    });
  }

  // A stateless, resumable walk (Redis's SCAN): examines about `slots` slots from `cursor` (0
  // starts), calls fn(const K&, const V&) for each live entry, and returns the next cursor, 0
  // when the walk is complete. Every entry live for the whole walk is reported at least once,
  // whatever the cache does between calls; an entry may be reported twice if the table grew.
  template <class Fn>
  std::uint64_t scan(std::uint64_t cursor, std::size_t slots, TimePoint now, Fn&& fn) const {
    return table_.scan(cursor, std::max<std::size_t>(slots, 1), [&](const Ref& ref) {
      if (live_at(ref, now)) fn(table_.key_of(ref), ref.slot->value);
    });
  }

  // Calls fn(const K&, const V&) for each live entry whose hash_of(key) starts with the
  // `bits`-bit `prefix` (1 <= bits <= 20), until fn returns false. The work is the entries of the
  // segments holding that part of the hash space, not the whole table: with a hash that puts a
  // key's group in its top bits, this walks one group (the server's keys of one hash slot).
  template <class Fn>
  void for_each_live_with_hash_prefix(std::uint64_t prefix, unsigned bits, TimePoint now,
                                      Fn&& fn) const {
    table_.visit_hash_prefix(prefix, bits, [&](const Ref& ref) {
      return !live_at(ref, now) || fn(table_.key_of(ref), ref.slot->value);
    });
  }

  // scan()'s walk for a host that keeps its keys' bytes elsewhere (the server's records in a
  // RecordArena): calls fn(K&, TimePoint deadline) for each stored entry, live or not, of about
  // `slots` slots from `cursor`, and returns the next cursor, 0 when the walk is complete. fn may
  // move the key's storage, but must leave everything the cache sees of it as it was: its hash,
  // its equality, and the bytes a capture would deliver. So nothing is handed over to a running
  // capture, and the table does not change. (The deadline lets it leave alone what expiry is
  // about to free.)
  template <class Fn>
  std::uint64_t rewrite_keys(std::uint64_t cursor, std::size_t slots,
                             Fn&& fn) requires(!Table::kQuotientKeys) {
    return table_.scan(cursor, std::max<std::size_t>(slots, 1), [&](const Ref& ref) {
      fn(const_cast<K&>(ref.slot->key), stored_deadline(ref));
    });
  }

  // A live entry's key chosen from `random` (a few tries past expired ones), or nullptr.
  const K* sample_key(std::uint64_t random, TimePoint now) const requires(!Table::kQuotientKeys) {
    for (int attempt = 0; attempt < 16; ++attempt) {
      const Ref ref = table_.sample(random);
      if (!ref) return nullptr;
      if (live_at(ref, now)) return &ref.slot->key;
      random = hash_integer(random ^ 0x9e3779b97f4a7c15ULL);
    }
    return nullptr;
  }

  // reclaim_expired with the host's clock reading. Cost: ~3 ns per examined slot plus an erase
  // per expired entry (numbers and method in expiry/expiry_pacer.h). A key type with a
  // prefetch() member (the server's Blob) has its heap block prefetched before the erase.
  std::size_t reclaim_expired_at(std::size_t budget, TimePoint now) {
    const std::uint32_t relative_now = relative_now_rebased(now);
    std::size_t reclaimed = 0;
    detail::StoredDeadline min_live = detail::kNoDeadlineInWindow;
    // Expired entries are erased in batches, each key's heap block prefetched when it is found:
    // freeing a record reads its cold allocator header, and the batch overlaps those misses.
    // (Erasing later is safe: erase_at moves nothing and invalidates only the erased Ref.)
    Ref batch[kReclaimBatch];
    std::size_t batched = 0;
    const auto erase_batch = [&] {
      for (std::size_t i = 0; i < batched; ++i) erase_entry(batch[i]);
      reclaimed += batched;
      batched = 0;
    };
    const detail::SweepProgress progress =
        table_.sweep_expired(budget, relative_now, min_live, [&](Ref ref) {
          if constexpr (requires(const K& key) { key.prefetch(); }) ref.slot->key.prefetch();
          batch[batched++] = ref;
          if (batched == kReclaimBatch) erase_batch();
        });
    erase_batch();
    if (progress.wrapped) shrink_sparse_segments();
    stats_.expired += reclaimed;
    cycle_min_stored_ = std::min(cycle_min_stored_, min_live);
    // Far deadlines lie beyond the window of the current epoch (rebase keeps it so); bounding by
    // the window's end whenever any exist is looser than per entry, and as safe.
    if (!far_.empty()) cycle_min_stored_ = std::min(cycle_min_stored_, detail::kWindowEndStored);
    if (progress.wrapped) {
      next_expiry_lower_bound_ = cycle_min_stored_ == detail::kNoDeadlineInWindow
                                     ? kNoExpiry
                                     : epoch_.decode(cycle_min_stored_);
      cycle_min_stored_ = detail::kNoDeadlineInWindow;
    }
    refresh_quiet_write_floor();
    return reclaimed;
  }

 private:
  // Before a change to the entry at `ref`, or an insert of hash `h`: hands the chunk it is in
  // over if a capture still waits for it (an insert that must grow its segment first hands the
  // whole segment over: growth moves every entry). Out of line: the common case is one load and
  // a branch not taken.
  CC_ALWAYS_INLINE void before_write(const Ref& ref) {
    if (capture_ != nullptr) [[unlikely]]
      before_write_slow(Table::chunk_of(ref.segment(), ref.index));
  }
  [[gnu::noinline]] void before_write_slow(typename Table::Chunk chunk) {
    if (table_.capture_pending(chunk)) hand_over(chunk);
  }
  [[gnu::noinline]] void before_insert_slow(std::uint64_t h) {
    const typename Table::InsertTarget target = table_.insert_target(h);
    if (!target.grows) return before_write_slow(Table::chunk_of(target.segment(), target.index));
    hand_over_segment(target.segment()->index);
  }
  // Every pending chunk of a segment whose entries are about to move (growth, shrinking).
  void hand_over_segment(std::size_t segment) {
    for (unsigned chunk = table_.first_pending_chunk(segment);
         chunk != Table::kNoChunk && capture_ != nullptr;
         chunk = table_.first_pending_chunk(segment))
      hand_over({segment, chunk});
  }
  std::size_t hand_over(typename Table::Chunk chunk) {
    CaptureSink<K, V>& sink = *capture_;
    const std::size_t examined = table_.hand_over(
        chunk,
        [](const Ref& ref) {
          if constexpr (requires(const K& key) { key.prefetch(); }) ref.slot->key.prefetch();
        },
        [&](const Ref& ref) {
          if (live_at(ref, capture_now_))
            sink.capture(table_.key_of(ref), ref.slot->value, stored_deadline(ref));
        });
    if (!table_.capturing()) {
      capture_ = nullptr;
      refresh_quiet_write_floor();
    }
    return examined;
  }

  // After erases: a segment left sparse gives half its memory back (SegmentedTable::shrink),
  // handing its pending chunks to a running capture first, as growth does.
  CC_ALWAYS_INLINE void shrink_if_sparse(std::size_t segment) {
    if (table_.is_sparse(segment)) [[unlikely]]
      shrink_slow(segment);
  }
  [[gnu::noinline]] void shrink_slow(std::size_t segment) {
    if (capture_ != nullptr) hand_over_segment(segment);
    table_.shrink(segment, on_move());
  }
  // Whether rebuilding `segment` now leaves the expiry sweep's cycle as it is: a segment the
  // running sweep has passed or is in would stretch the cycle (shrink_sparse_segments says how),
  // unless nothing may be due, when no cycle is running. Those shrink when the cycle ends.
  bool spares_the_sweep(std::size_t segment, TimePoint now) const noexcept {
    return segment > table_.sweep_segment() || !may_hold_expired(now);
  }

  // At the end of a sweep cycle, every segment the cycle's erases left sparse. Not during the
  // cycle: a segment rebuilt behind the cursor shrinks the capacity the pacer divides into
  // slices while the slots still to sweep stay as many, and one at the cursor is swept again,
  // so the cycle would run late (cache_expiry_test's pacing test fails so). O(segments) a cycle.
  void shrink_sparse_segments() {
    for (std::size_t s = 0; s < table_.segment_count(); ++s) shrink_if_sparse(s);
  }

  auto on_move() noexcept {
    return [this](Slot&, typename Policy::Meta& meta, SlotId id) { policy_.on_move(meta, id); };
  }

  // upsert_prehashed once `now - epoch` is known to be usable (relative_now_rebased's result).
  template <class Q, class Fn>
  CC_ALWAYS_INLINE decltype(auto) upsert_at(const Q& key, Hashed h, TimePoint now,
                                            std::uint32_t relative_now, Access access, Fn&& fn) {
    Ref ref = table_.find_for_insert(key, h.value);
    if (ref) [[likely]] {
      if (!detail::DeadlineEpoch::is_live(ref.slot->deadline, relative_now)) [[unlikely]] {
        erase_expired(ref);
        ref = Ref{};  // names no free slot: the insert looks for one
      }
    }
    if (ref && touches_policy(access)) policy_.on_access(table_.meta(ref));
    if (counts_in_stats(access)) {
      if (ref)
        ++stats_.hits;
      else
        ++stats_.misses;
    }
    Upsert entry(*this, ref, h, now, relative_now);
    return std::forward<Fn>(fn)(entry);
  }

  CC_ALWAYS_INLINE std::uint32_t relative_now_rebased(TimePoint now) {
    const std::uint64_t relative = epoch_.unchecked_relative_now(now);
    if (detail::DeadlineEpoch::is_usable(relative)) [[likely]]
      return static_cast<std::uint32_t>(relative);
    return relative_now_slow(now);
  }

  [[gnu::noinline]] std::uint32_t relative_now_slow(TimePoint now) {
    if (epoch_.is_before_epoch(now)) return 0;  // a caller's clock behind ours: treat as the epoch
    rebase(now - kRebaseLag);
    return static_cast<std::uint32_t>(kRebaseLag.count());
  }
  // How far behind the writer's `now` a rebase puts the epoch: half the distance that triggers
  // one, so rebases come every 12.4 days instead of 24.8. The shift marks passed deadlines 0,
  // which reads as the epoch itself: a reader whose reading predates the writer's (a ShardedCache
  // reader reads the clock before it takes the shard's lock, and may wait there behind the O(n)
  // rebase) must still find that behind its own now, or an entry dead for weeks would read as
  // live to it. 12.4 days is a lag no reader has; a second was one a preempted reader could.
  static constexpr Duration kRebaseLag = detail::kRebaseAfter / 2;

  // Every 12.4 days of uptime: moves the epoch to `now` (kRebaseLag before the caller's reading)
  // and shifts every stored deadline. O(n).
  // A running capture is completed first, while the deadlines still read as they did at its
  // start: a deadline the shift marks expired decodes as the new epoch, later than the
  // capture's `now`, so a pending entry dead when the capture began would be handed over alive.
  void rebase(TimePoint now) {
    if (capture_ != nullptr) finish_capture();
    const std::uint64_t shift = epoch_.advance_to(now);
    table_.for_each_mutable([shift](Slot& slot) {
      slot.deadline = detail::DeadlineEpoch::shifted(slot.deadline, shift);
    });
    cycle_min_stored_ = detail::DeadlineEpoch::shifted(cycle_min_stored_, shift);
    for (auto it = far_.begin(); it != far_.end();) {
      const detail::StoredDeadline stored = epoch_.encode(it->second);
      if (stored == detail::kNoDeadlineInWindow) {
        ++it;
        continue;
      }
      const Ref ref = table_.find(it->first, table_.hash(it->first));
      CC_CHECK(ref, "a far deadline without its entry");
      count_window_deadline(ref.slot->deadline, stored);
      ref.slot->deadline = stored;
      it = far_.erase(it);
    }
    refresh_quiet_write_floor();
  }

  TimePoint stored_deadline(const Ref& ref) const {
    if (ref.slot->deadline != detail::kNoDeadlineInWindow) return epoch_.decode(ref.slot->deadline);
    const auto far = far_.find(table_.key_of(ref));
    return far == far_.end() ? kNoExpiry : far->second;
  }

  // Exact liveness for const paths, which may not rebase: a far deadline may have passed since the
  // last rebase when the clock jumped (a ManualClock, or a process that slept for weeks).
  bool live_at(const Ref& ref, TimePoint now) const {
    return live_with(ref, ref.slot->deadline, now);
  }
  // live_at for the entries peek_prehashed's quick check reads as expired, kept out of its line.
  // It loads the deadline again, as peek_prehashed does (acquire, before the value is copied):
  // passing the one loaded cost the inline path an instruction (callgrind, getHit).
  // (Out-of-line calls take their Ref by value, here and below: a reference would keep the
  // caller's Ref in memory, stored on the hot path; callgrind, getHit 51 -> 57.)
  [[gnu::noinline]] bool live_outside_window(Ref ref, TimePoint now) const {
    return live_with(ref, load_deadline(*ref.slot), now);
  }
  // A slot's deadline as a reader beside overwrites loads it (overwrite_beside_readers).
  static detail::StoredDeadline load_deadline(const Slot& slot) noexcept {
    return std::atomic_ref<detail::StoredDeadline>(
               const_cast<detail::StoredDeadline&>(slot.deadline))
        .load(std::memory_order_acquire);
  }
  // live_at for the entry at `ref` holding `deadline`.
  CC_ALWAYS_INLINE bool live_with(const Ref& ref, detail::StoredDeadline deadline,
                                  TimePoint now) const {
    if (deadline == detail::kNoDeadlineInWindow && !far_.empty()) [[unlikely]] {
      const auto far = far_.find(table_.key_of(ref));
      if (far != far_.end()) return far->second > now;
    }
    return epoch_.is_live_at(deadline, now);
  }

  CC_ALWAYS_INLINE void set_deadline(const Ref& ref, TimePoint deadline) {
    const detail::StoredDeadline stored = epoch_.encode(deadline);
    // kNoExpiry encodes as kNoDeadlineInWindow too, so the common deadline in the window pays for
    // neither test (and kNoExpiry never lowers the bounds below).
    if (stored == detail::kNoDeadlineInWindow) [[unlikely]] {
      count_window_deadline(ref.slot->deadline, stored);
      ref.slot->deadline = stored;
      if (deadline == kNoExpiry) return;
      remember_far_deadline(ref, deadline);
      // The window's end bounds a far deadline from below, as reclaim_expired_at bounds them all.
      return lower_expiry_bounds(detail::kWindowEndStored);
    }
    set_deadline(ref, detail::WindowDeadline{stored});
  }

  CC_ALWAYS_INLINE void set_deadline(const Ref& ref, detail::WindowDeadline deadline) {
    count_window_deadline(ref.slot->deadline, deadline.stored);
    ref.slot->deadline = deadline.stored;
    lower_expiry_bounds(deadline.stored);
  }

  // Branches, not std::min: deadlines mostly grow, so the bounds are rarely stored, and a store
  // on every put would chain each put to the previous one through memory. Nested, because
  // next_expiry_lower_bound_ <= the cycle's minimum always (the cycle's minimum is of stored
  // deadlines, which the lower bound is below, until a cycle's end makes it the new bound), so
  // a deadline not below the cycle's minimum is not below the bound either: the common put
  // tests one (callgrind, putSingle: 2 instructions fewer). The minimum is kept in stored form,
  // so the test needs no decode.
  CC_ALWAYS_INLINE void lower_expiry_bounds(detail::StoredDeadline stored) {
    CC_ASSERT(cycle_min_stored_ == detail::kNoDeadlineInWindow ||
              next_expiry_lower_bound_ <= epoch_.decode(cycle_min_stored_));
    if (stored < cycle_min_stored_) [[unlikely]] {
      cycle_min_stored_ = stored;
      next_expiry_lower_bound_ = std::min(next_expiry_lower_bound_, epoch_.decode(stored));
      refresh_quiet_write_floor();
    }
  }

  // quiet_write_floor_ as the state it stands for gives it.
  detail::StoredDeadline wanted_quiet_write_floor() const noexcept {
    return capture_ != nullptr || !far_.empty() ? detail::kNoDeadlineInWindow : cycle_min_stored_;
  }
  void refresh_quiet_write_floor() noexcept { quiet_write_floor_ = wanted_quiet_write_floor(); }
  // Whether an overwrite storing `deadline` needs none of before_write, forget_far_deadline and
  // lower_expiry_bounds: one compare for their three tests (callgrind, putSingle 61 -> 56
  // instructions).
  CC_ALWAYS_INLINE bool is_quiet_write(detail::WindowDeadline deadline) const noexcept {
    CC_ASSERT(deadline.stored < detail::kNoDeadlineInWindow);
    CC_ASSERT(quiet_write_floor_ == wanted_quiet_write_floor());
    return deadline.stored >= quiet_write_floor_;
  }

  // The far-deadline map is touched only by TTLs beyond the ~49-day window: its calls stay out of
  // line so the common put carries no hash-map code (callgrind: putSingle 115 -> 80 instructions).
  [[gnu::noinline]] void remember_far_deadline(Ref ref, TimePoint deadline) {
    far_.insert_or_assign(table_.key_of(ref), deadline);
    refresh_quiet_write_floor();
  }
  [[gnu::noinline]] void erase_far_deadline(Ref ref) {
    far_.erase(table_.key_of(ref));
    refresh_quiet_write_floor();
  }

  // Every write of a slot's deadline (and an erase, as a write of none) calls this first,
  // so window_deadlines_ counts the slots whose deadline is in the window; far_ holds the rest.
  CC_ALWAYS_INLINE void count_window_deadline(detail::StoredDeadline before,
                                              detail::StoredDeadline after) noexcept {
    if constexpr (Features.count_volatile) {
      window_deadlines_ += static_cast<std::size_t>(after != detail::kNoDeadlineInWindow);
      window_deadlines_ -= static_cast<std::size_t>(before != detail::kNoDeadlineInWindow);
    }
  }

  CC_ALWAYS_INLINE void forget_far_deadline(const Ref& ref) {
    if (ref.slot->deadline == detail::kNoDeadlineInWindow && !far_.empty()) [[unlikely]]
      erase_far_deadline(ref);
  }

  void erase_entry(Ref ref) {
    entry_heap_bytes_ -= entry_heap_bytes(ref);
    policy_.on_erase(table_.meta(ref));
    count_window_deadline(ref.slot->deadline, detail::kNoDeadlineInWindow);
    forget_far_deadline(ref);
    table_.erase_at(ref);
  }

  // Erases and returns whether the entry was live; an expired one is counted as expired.
  bool erase_counting_expiry(Ref ref, std::uint32_t relative_now) {
    before_write(ref);  // an eviction's victim, an expired entry met, an erase
    const bool live = detail::DeadlineEpoch::is_live(ref.slot->deadline, relative_now);
    erase_entry(ref);
    if (!live) ++stats_.expired;
    return live;
  }

  // Inserts a key with no live entry. Inline: out of line (to spare the overwrite path's
  // registers) it cost new-key puts ~15 % (bm_putStress_10M 95 -> 111 ns) and bought nothing
  // measurable on bm_putSingle. A byte budget takes its own path, out of line: inline, its code
  // sat in every put loop, and a cache without a budget paid ~10 % a new key for it
  // (bm_putStress and bm_putStress_10M, alternating runs; a few instructions fewer, so the
  // loop's layout, not the test, cost the time).
  // `where`: the lookup's miss, naming the free slot it passed (Table::find_for_insert); dropped
  // once an eviction (which may shrink a segment) or a capture's hand-over (which may erase) ran.
  // `deadline`: a TimePoint, or a WindowDeadline (put_for_prehashed).
  template <class Q, class Deadline>
  CC_ALWAYS_INLINE PutOutcome put_absent(Q&& key, V value, Deadline deadline, Hashed h,
                                         std::uint32_t relative_now, Ref where) {
    if (options_.max_bytes != 0) [[unlikely]]
      return put_absent_within_budget<BudgetKey<Q>>(std::forward<Q>(key), std::move(value),
                                                    deadline, h, relative_now);
    if (!room_for_one_more(relative_now, where)) return PutOutcome::kRejectedFull;
    store_absent(where, std::forward<Q>(key), std::move(value), deadline, h);
    return PutOutcome::kInserted;
  }

  // How put_absent_within_budget takes a key of type Q: a trivially copyable K that comes as a K
  // by value, anything else as it came (a key is built only when inserted, and an rvalue is not
  // moved from by a put that is refused).
  template <class Q>
  using BudgetKey = std::conditional_t<
      std::is_trivially_copyable_v<K> && std::is_same_v<std::remove_cvref_t<Q>, K>, K, Q&&>;

  // Without the free slot the lookup named, and a trivially copyable key by value: passed in by
  // reference, the Ref and the key were stored to memory on every new key of a cache without a
  // budget too (4 instructions; such stores cost a put of new keys more than their count says:
  // engine.md, "Hot-path notes"), and a put under a budget is dearer than the probe it repeats.
  template <class KeyArg, class Deadline>
  [[gnu::noinline]] PutOutcome put_absent_within_budget(KeyArg key, V value, Deadline deadline,
                                                        Hashed h, std::uint32_t relative_now) {
    Ref where{};
    if (!room_for_one_more(relative_now, where)) return PutOutcome::kRejectedFull;
    // Room first for what the insert adds: table growth, if its segment is full, the policy's
    // next chunk of nodes, and the value's heap (the key's too when it comes as a K; otherwise
    // the check after settles it). Growth is asked again after each eviction, which may have
    // freed the slot or the node the insert will take: evicting until the cache is empty
    // because memory that is already held does not fall would be no budget at all.
    std::size_t entry_bytes = HeapBytes<V>::of(value);
    if constexpr (std::is_same_v<std::remove_cvref_t<KeyArg>, K>)
      entry_bytes += HeapBytes<K>::of(key);
    const auto incoming = [&] {
      return table_.growth_bytes_if_inserted(h.value) + policy_growth_bytes(policy_) + entry_bytes;
    };
    while (memory_used() + incoming() > options_.max_bytes && table_.size() != 0) {
      if (!make_room(relative_now)) return PutOutcome::kRejectedFull;
      where = Ref{};
    }
    const Ref fresh = store_absent(where, std::forward<KeyArg>(key), std::move(value), deadline, h);
    if (!enforce_byte_budget(fresh.id(), relative_now)) [[unlikely]] {
      erase_entry(fresh);  // over budget and no victim to drop (TtlOnly): refused after all
      return PutOutcome::kRejectedFull;
    }
    return PutOutcome::kInserted;
  }

  // Under max_entries, a full cache drops the policy's victim for the new key (and the free slot
  // `where` named, which the eviction may have moved): false when the policy names none.
  CC_ALWAYS_INLINE bool room_for_one_more(std::uint32_t relative_now, Ref& where) {
    if (options_.max_entries == 0 || table_.size() < options_.max_entries) return true;
    where = Ref{};
    return make_room(relative_now);
  }

  // The insert itself, once there is room: at `where` when the lookup named a free slot (a
  // capture's hand-over drops it), with the entry's heap, deadline and policy word.
  template <class Q, class Deadline>
  CC_ALWAYS_INLINE Ref store_absent(Ref where, Q&& key, V value, Deadline deadline, Hashed h) {
    if (capture_ != nullptr) [[unlikely]] {
      before_insert_slow(h.value);  // after make_room: an eviction may free the slot it takes
      where = Ref{};
    }
    const Ref fresh = table_.insert_at(where, std::forward<Q>(key), std::move(value), h.value,
                                       detail::kNoDeadlineInWindow, on_move());
    entry_heap_bytes_ += entry_heap_bytes(fresh);
    set_deadline(fresh, deadline);
    table_.meta(fresh) = policy_.on_insert(fresh.id(), h.value);
    return fresh;
  }

  std::size_t entry_heap_bytes(const Ref& ref) const noexcept {
    return HeapBytes<K>::of(table_.key_of(ref)) + HeapBytes<V>::of(ref.slot->value);
  }

  // Evicts other entries until memory_used() is within max_bytes, never the entry at `keep` (the
  // one just written: when it is the policy's only choice, the cache stays over budget until the
  // next write). False when over budget and the policy names no victim at all (TtlOnly).
  bool enforce_byte_budget(SlotId keep, std::uint32_t relative_now) {
    while (memory_used() > options_.max_bytes) {
      const std::optional<SlotId> victim = policy_.pick_victim();
      if (!victim) return table_.size() <= 1;
      if (*victim == keep) return true;
      if (erase_counting_expiry(table_.at(*victim), relative_now)) ++stats_.evicted;
    }
    return true;
  }

  // The live entry for find_prehashed and find_key_prehashed, whose callers may change it through
  // the pointer they get: a running capture is handed its chunk first.
  template <class Q>
  CC_ALWAYS_INLINE Ref find_live(const Q& key, Hashed h, TimePoint now, Access access) {
    const Ref ref = read_live(key, h, now, access, /*remove_expired=*/true);
    if (ref) before_write(ref);
    return ref;
  }
  // The live entry, for a read; an expired one it meets is removed when `remove_expired` (out of
  // line, as in get_past_window_deadline; a capture may leave it out, capture.h). A caller that
  // may insert the key next must remove it: the table holds a key once. kRead counts a hit or a
  // miss and tells the policy.
  template <class Q>
  CC_ALWAYS_INLINE Ref read_live(const Q& key, Hashed h, TimePoint now, Access access,
                                 bool remove_expired) {
    const std::uint32_t relative_now = relative_now_rebased(now);
    const Ref ref = table_.find(key, h.value);
    if (ref && detail::DeadlineEpoch::is_live(ref.slot->deadline, relative_now)) [[likely]] {
      if (touches_policy(access)) policy_.on_access(table_.meta(ref));
      if (counts_in_stats(access)) ++stats_.hits;
      return ref;
    }
    if (ref && remove_expired) erase_expired(ref);
    if (counts_in_stats(access)) ++stats_.misses;
    return Ref{};
  }
  [[gnu::noinline]] void erase_expired(Ref ref) {
    erase_entry(ref);
    ++stats_.expired;
  }

  // get_prehashed with the time read by read_clock() once the probe has found the key: a miss
  // reads no clock, and a hit holds no time in a register across the probe (which spilled the
  // key array's pointer in engine_bench's getRandomKeys loop, 2.8 -> 3.5 ns). A hit compares
  // `epoch + stored > now` in 64 bits, exact for every stored value but the "beyond the window"
  // mark, which reads as the window's end: it needs no rebase check, and an entry that only
  // looks expired is looked at again out of line (callgrind: getHit 52 -> 48, GetMiss 48 -> 41).
  template <class Q, class ReadClock>
  CC_ALWAYS_INLINE std::optional<V> get_read_clock(const Q& key, Hashed h, ReadClock read_clock) {
    const Ref ref = table_.find(key, h.value);
    if (ref) [[likely]] {
      const TimePoint now = read_clock();
      if (epoch_.is_before_window_deadline(ref.slot->deadline, now)) [[likely]] {
        policy_.on_access(table_.meta(ref));
        ++stats_.hits;
        return ref.slot->value;
      }
      return get_past_window_deadline(ref.id(), now);
    }
    ++stats_.misses;
    return std::nullopt;
  }

  // A get whose entry looks expired by its stored deadline read against the current epoch. A
  // rebase may be due (then the stored deadlines are shifted and far ones brought into the
  // window), after which the entry may be live: one that never expires, met after 49.7 days
  // without a write, or a far deadline not yet passed. Out of line, as is the erase of an
  // expired entry: its registers would otherwise be saved and restored on every hit (measured:
  // 9.4 -> 3.3 ns per hit). It takes the entry's SlotId, one register: a Ref (three words,
  // passed in memory) was stored on the hit path too wherever GCC hoisted the copy (callgrind,
  // CompactIntHash getHit: 6).
  [[gnu::noinline]] std::optional<V> get_past_window_deadline(SlotId id, TimePoint now) {
    const std::uint32_t relative_now = relative_now_rebased(now);  // moves no entry
    const Ref ref = table_.at(id);
    if (detail::DeadlineEpoch::is_live(ref.slot->deadline, relative_now)) {
      policy_.on_access(table_.meta(ref));
      ++stats_.hits;
      return ref.slot->value;
    }
    if (reads_remove_expired_) {
      erase_entry(ref);
      ++stats_.expired;
    }
    ++stats_.misses;
    return std::nullopt;
  }

  bool make_room(std::uint32_t relative_now) {
    const std::optional<SlotId> victim = policy_.pick_victim();
    if (!victim) return false;
    const Ref ref = table_.at(*victim);
    if (erase_counting_expiry(ref, relative_now)) ++stats_.evicted;
    return true;
  }

  static constexpr bool kValueOwnsHeap = !std::is_trivially_copyable_v<V>;
  // Expired entries reclaim_expired_at erases together: enough to overlap ~16 cache misses.
  static constexpr std::size_t kReclaimBatch = 16;

  CacheOptions options_;
  [[no_unique_address]] ClockT clock_;
  Table table_;
  [[no_unique_address]] Policy policy_;
  detail::DeadlineEpoch epoch_;
  CacheStats stats_;
  bool reads_remove_expired_ = true;  // set_reads_remove_expired
  // Sum of HeapBytes over stored keys and values (entries expired but not reclaimed included).
  std::size_t entry_heap_bytes_ = 0;
  // Slots whose stored deadline is in the window (CacheFeatures::count_volatile; else 0).
  std::size_t window_deadlines_ = 0;
  // No stored deadline is earlier than this, so size() may skip its scan while now is before it.
  TimePoint next_expiry_lower_bound_ = kNoExpiry;
  // The earliest deadline seen in the current reclaim cycle (and put since it began), stored
  // form (kNoDeadlineInWindow: none yet); a rebase shifts it with the slots.
  detail::StoredDeadline cycle_min_stored_ = detail::kNoDeadlineInWindow;
  // Exact deadlines of entries that expire beyond the 32-bit window (rare: TTLs over ~24 days).
  std::unordered_map<K, TimePoint, Hash, Eq> far_;
  // The running capture's sink (nullptr: none) and the time it began.
  CaptureSink<K, V>* capture_ = nullptr;
  TimePoint capture_now_{};
  // An overwrite whose deadline in the window is at least this is quiet: no capture runs, no far
  // deadline exists (so the old entry has none to forget), and the deadline lowers no expiry
  // bound (it is not below cycle_min_stored_). Otherwise kNoDeadlineInWindow, which no deadline
  // in the window reaches. Derived state, refreshed wherever capture_, far_ or
  // cycle_min_stored_ change (is_quiet_write asserts it).
  detail::StoredDeadline quiet_write_floor_ = detail::kNoDeadlineInWindow;
};

}  // namespace chronocache
