// Sieve: SIEVE eviction (Y. Zhang, J. Yang, Y. Yue, Y. Vigfusson, K. V. Rashmi, "SIEVE is Simpler
// than LRU: an Efficient Turn-Key Eviction Algorithm for Web Caches", NSDI'24).
//
// One FIFO queue in insertion order and a "hand". A hit only sets the entry's visited bit: no list
// moves, so reads never reorder anything (lazy promotion). To pick a victim the hand walks from
// the oldest entry towards the newest, clearing visited bits, and stops at the first entry not
// visited; the hand stays there, so the next search resumes where this one ended, and wraps to the
// oldest entry when it passes the newest.
//
//   newest                                       oldest
//   [front] <-> e5 <-> e4* <-> e3 <-> e2* <-> e1* <-> [back]      * = visited
//                               ^ hand: e1, e2 lose their bits; e3 is the victim
//
// New entries enter at the front, behind the hand's path, so one-hit wonders at the old end are
// swept out quickly while visited entries survive a pass (quick demotion).
//
// Cost: a hit writes one bit into the entry's node; insert and erase are O(1) list operations;
// pick_victim is O(1) amortised (each visited bit it clears was set by a hit). 16 bytes of node
// per entry plus the 4-byte handle in the slot, as Lru.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/linked_nodes.h"

namespace chronocache {

class Sieve {
 public:
  struct Meta {
    detail::LinkedNodes::Handle node = 0;
  };

  Meta on_insert(SlotId id, std::uint64_t /*hash*/) {
    const auto node = nodes_.allocate(id, 0);
    nodes_.push_front(kQueue, node);
    return {node};
  }
  void on_access(Meta& meta) noexcept { nodes_[meta.node].aux = kVisited; }
  // on_access for a reader that holds a shared lock (ShardedCache): many may run at once, never
  // beside a hook above. The bit is stored only when it changes, so a hot entry's node line is
  // read, not written, by every hit after the first: readers do not bounce it between cores.
  // Const because readers hold the cache const; the nodes themselves are never const objects.
  void on_shared_access(const Meta& meta) const noexcept {
    std::atomic_ref<std::uint32_t> aux(const_cast<std::uint32_t&>(nodes_[meta.node].aux));
    if (aux.load(std::memory_order_relaxed) != kVisited)
      aux.store(kVisited, std::memory_order_relaxed);
  }
  void on_erase(Meta& meta) noexcept {
    // The hand moves on to the next newer entry (or back to the start when it was the newest).
    if (hand_ == meta.node) hand_ = nodes_[meta.node].prev;
    nodes_.unlink(meta.node);
    nodes_.release(meta.node);
  }
  void on_move(Meta& meta, SlotId id) noexcept { nodes_[meta.node].slot = id; }

  // The first entry without its visited bit, from the hand towards the newest, wrapping. Leaves
  // the hand on it: if the cache does not erase it, the next call names it again.
  std::optional<SlotId> pick_victim() noexcept {
    if (nodes_.empty(kQueue)) return std::nullopt;
    Handle at = nodes_.is_sentinel(hand_) ? nodes_.back(kQueue) : hand_;
    while (nodes_[at].aux == kVisited) {
      nodes_[at].aux = 0;
      at = nodes_[at].prev;
      if (nodes_.is_sentinel(at)) at = nodes_.back(kQueue);
    }
    hand_ = at;
    return nodes_[at].slot;
  }
  void clear() {
    nodes_.clear();
    hand_ = kQueue;
  }
  std::size_t memory_bytes() const noexcept { return nodes_.memory_bytes(); }
  std::size_t growth_bytes_if_inserted() const noexcept {
    return nodes_.growth_bytes_if_allocated();
  }

 private:
  using Handle = detail::LinkedNodes::Handle;
  static constexpr std::uint32_t kQueue = 0;
  static constexpr std::uint32_t kVisited = 1;

  detail::LinkedNodes nodes_{1};
  Handle hand_ = kQueue;  // the sentinel: start from the oldest entry
};

static_assert(EvictionPolicy<Sieve>);

}  // namespace chronocache
