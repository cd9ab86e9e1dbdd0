// S3Fifo: three FIFO queues (J. Yang, Y. Zhang, Z. Qiu, Y. Yue, K. V. Rashmi, "FIFO queues are
// all you need for cache eviction", SOSP'23), as libCacheSim implements it (S3FIFO-0.1-2).
//
//   new key ──> S (small, ~10 %) ──(reused >= kMoveToMain times)──> M (main, ~90 %) ──┐
//                 │ not reused                                       ^  reused: back │
//                 v                                                  └── to the front┘
//               G (ghost: fingerprints of ~|M| keys evicted from S)
//   new key found in G ──────────────────────────────────────────────> M
//
// Most keys in real traces are requested once ("one-hit wonders"); S lets them leave after a
// short stay without disturbing M (quick demotion). A hit only bumps a 2-bit counter
// (saturating at 3): no list moves on reads. Evicting from M reinserts an entry whose counter is
// non-zero, decremented, at M's front (a 2-bit CLOCK), so M keeps frequently used entries.
//
// The policy does not know the cache's capacity: it takes it as its own entry count when asked
// for a victim (the cache asks only when full), and sizes S, M and G from that.
//
// Per entry: the 4-byte handle in the slot and a 16-byte LinkedNodes node whose spare word holds
// the state below. Every hook is O(1); pick_victim is O(1) amortised (each entry it moves to M or
// reinserts was paid for by a hit).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/ghost_queue.h"
#include "chronocache/policy/linked_nodes.h"

namespace chronocache {

class S3Fifo {
 public:
  struct Meta {
    detail::LinkedNodes::Handle node = 0;
  };

  // Share of the capacity for S, in percent (the paper's 10 %).
  static constexpr std::size_t kSmallPercent = 10;
  // Ghost entries, in percent of the capacity (the paper's 90 %: about |M|).
  static constexpr std::size_t kGhostPercent = 90;
  // Hits an entry needs while in S to move to M instead of leaving (libCacheSim's default: with
  // it our hit ratios match libCacheSim's S3-FIFO column to within ~0.3 points on average).
  static constexpr std::uint32_t kMoveToMain = 2;
  static constexpr std::uint32_t kMaxFreq = 3;

  Meta on_insert(SlotId id, std::uint64_t hash) {
    const std::uint32_t fp = fingerprint(hash);
    const bool to_main = ghost_.take(fp >> kStateBits);
    const auto node = nodes_.allocate(id, fp | (to_main ? kInMain : 0));
    nodes_.push_front(to_main ? kMain : kSmall, node);
    ++(to_main ? main_count_ : small_count_);
    return {node};
  }
  void on_access(Meta& meta) noexcept {
    std::uint32_t& aux = nodes_[meta.node].aux;
    if ((aux & kFreqMask) != kMaxFreq) ++aux;
  }
  // on_access for a reader that holds a shared lock (ShardedCache): many may run at once, never
  // beside a hook above. Stores only when the counter changes (so a hot entry's line is only
  // read once saturated); two readers racing may count one hit instead of two, which the
  // 2-bit counter tolerates, and the other bits of aux (fingerprint, queue) change only under
  // the exclusive lock, so a lost race cannot corrupt them. Const as Sieve's.
  void on_shared_access(const Meta& meta) const noexcept {
    std::atomic_ref<std::uint32_t> aux(const_cast<std::uint32_t&>(nodes_[meta.node].aux));
    const std::uint32_t seen = aux.load(std::memory_order_relaxed);
    if ((seen & kFreqMask) != kMaxFreq) aux.store(seen + 1, std::memory_order_relaxed);
  }
  void on_erase(Meta& meta) noexcept {
    --((nodes_[meta.node].aux & kInMain) ? main_count_ : small_count_);
    nodes_.unlink(meta.node);
    nodes_.release(meta.node);
  }
  void on_move(Meta& meta, SlotId id) noexcept { nodes_[meta.node].slot = id; }

  std::optional<SlotId> pick_victim() {
    const std::size_t capacity = small_count_ + main_count_;
    if (capacity == 0) return std::nullopt;
    if (capacity > ghost_.capacity() * 100 / kGhostPercent) {
      ghost_.set_capacity(capacity * kGhostPercent / 100);
    }
    const std::size_t main_max = capacity - capacity * kSmallPercent / 100;
    for (;;) {
      if (main_count_ > main_max || small_count_ == 0) {
        if (const auto victim = evict_from_main()) return victim;
      } else if (const auto victim = evict_from_small()) {
        return victim;
      }
    }
  }

  void clear() {
    nodes_.clear();
    ghost_.clear();
    small_count_ = main_count_ = 0;
  }
  std::size_t memory_bytes() const noexcept {
    return nodes_.memory_bytes() + ghost_.memory_bytes();
  }
  std::size_t growth_bytes_if_inserted() const noexcept {
    return nodes_.growth_bytes_if_allocated();
  }

  std::size_t small_size() const noexcept { return small_count_; }
  std::size_t main_size() const noexcept { return main_count_; }

 private:
  using Handle = detail::LinkedNodes::Handle;
  static constexpr std::uint32_t kSmall = 0;
  static constexpr std::uint32_t kMain = 1;
  // The node's spare word: | fingerprint:29 | in main:1 | freq:2 |
  static constexpr unsigned kStateBits = 3;
  static constexpr std::uint32_t kFreqMask = 3;
  static constexpr std::uint32_t kInMain = 4;

  static std::uint32_t fingerprint(std::uint64_t hash) noexcept {
    return static_cast<std::uint32_t>(hash >> 32) & ~((1u << kStateBits) - 1);
  }

  // S's oldest entry leaves (to G) unless it was reused enough, then it moves to M and the
  // search goes on. nullopt when S ran empty.
  std::optional<SlotId> evict_from_small() {
    while (!nodes_.empty(kSmall)) {
      const Handle tail = nodes_.back(kSmall);
      auto& node = nodes_[tail];
      if ((node.aux & kFreqMask) >= kMoveToMain) {
        node.aux = (node.aux & ~kFreqMask) | kInMain;
        nodes_.move_to_front(kMain, tail);
        --small_count_;
        ++main_count_;
        continue;
      }
      ghost_.insert(node.aux >> kStateBits);
      return node.slot;
    }
    return std::nullopt;
  }

  // M's oldest entry leaves unless its counter is non-zero: then it goes back to M's front with
  // the counter decremented. Terminates: each lap decrements every counter.
  std::optional<SlotId> evict_from_main() noexcept {
    while (!nodes_.empty(kMain)) {
      const Handle tail = nodes_.back(kMain);
      auto& node = nodes_[tail];
      if ((node.aux & kFreqMask) != 0) {
        --node.aux;
        nodes_.move_to_front(kMain, tail);
        continue;
      }
      return node.slot;
    }
    return std::nullopt;
  }

  detail::LinkedNodes nodes_{2};
  detail::GhostQueue ghost_;
  std::size_t small_count_ = 0;
  std::size_t main_count_ = 0;
};

static_assert(EvictionPolicy<S3Fifo>);

}  // namespace chronocache
