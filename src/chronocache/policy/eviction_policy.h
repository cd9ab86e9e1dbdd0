// EvictionPolicy: what a cache with a capacity bound asks of the code that picks victims.
//
// A policy keeps its own order over the cache's entries. The cache stores a small `Meta` value
// inside each slot on the policy's behalf (a handle, a counter: a few bytes, or nothing) and calls
// the hooks below at the moments they name. Entries are named by SlotId; the table reports every
// relocation through on_move, so a policy never holds a pointer into the table.
//
// Adding a policy is one file: a class satisfying this concept, plus a line in the conformance
// suite (policy/policy_conformance_test.cc).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "chronocache/base/slot_id.h"

namespace chronocache {

template <class P>
concept EvictionPolicy = std::default_initializable<P> &&
    std::default_initializable<typename P::Meta> &&
    std::is_trivially_copyable_v<typename P::Meta> &&
    requires(P& policy, const P& const_policy, typename P::Meta& meta, SlotId id,
             std::uint64_t hash) {
  // A new entry was stored at `id`; `hash` is its key's 64-bit table hash (frequency sketches and
  // ghost queues key on it). Returns the metadata to keep in its slot.
  { policy.on_insert(id, hash) } -> std::same_as<typename P::Meta>;
  // A get hit or an overwrite touched the entry.
  policy.on_access(meta);
  // The entry leaves the cache: erase, expiry, eviction or clear.
  policy.on_erase(meta);
  // Table growth moved the entry to `id`.
  policy.on_move(meta, id);
  // The entry to drop to make room; nullopt means "refuse the insert instead".
  { policy.pick_victim() } -> std::same_as<std::optional<SlotId>>;
  // Forget every entry (the cache was cleared).
  policy.clear();
  // Heap bytes the policy holds beyond the per-slot Meta.
  { const_policy.memory_bytes() } -> std::convertible_to<std::size_t>;
};

// Optional: a policy whose memory_bytes() grows in steps on insert (a new chunk of nodes) says
// how much the next on_insert adds, `std::size_t growth_bytes_if_inserted() const`, so a byte
// budget makes room before the step, not after it (when evicting could not take it back).
template <class P>
std::size_t policy_growth_bytes(const P& policy) noexcept {
  if constexpr (requires { policy.growth_bytes_if_inserted(); })
    return policy.growth_bytes_if_inserted();
  else
    return 0;
}

// Optional: a policy whose per-entry word may be unused while it runs (SwitchablePolicy, while the
// alternative it has selected keeps none) says which with `bool needs_meta() const`. The cache
// then keeps the words in a column beside the table's slots, and the column exists only while
// needs_meta() (asked at construction and by reset_policy): 4 bytes a slot saved until then.
template <class P>
concept PolicyMetaOptional = requires(const P& policy) {
  { policy.needs_meta() } -> std::convertible_to<bool>;
};

// Optional: a policy whose hit bookkeeping is a few bits it can update with relaxed atomics has
// `void on_shared_access(const Meta&) const`, which ShardedCache calls from concurrent readers
// under a shared lock (never beside another hook). Other policies get their hits logged by
// readers and replayed through on_access under the shard's lock (sharded_cache.h).
template <class P>
concept SharedAccessPolicy = EvictionPolicy<P> &&
    requires(const P& policy, const typename P::Meta& meta) {
  policy.on_shared_access(meta);
};

}  // namespace chronocache
