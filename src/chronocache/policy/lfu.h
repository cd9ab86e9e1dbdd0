// Lfu: least-frequently-used, ties broken by least-recently-used (the O(1) scheme of Shah, Mitra
// and Matani, "An O(1) algorithm for implementing the LFU cache eviction scheme", 2010).
//
// Each entry counts its accesses (insert = 1, each get hit or overwrite +1, saturating at
// kMaxCount = 255) and sits in the list of its count; the victim is the least recent entry of the
// lowest non-empty count. There is no aging: an entry that was hot long ago keeps its count (the
// frequency-sketch policies of issue 4 add aging). O(1) per hook, except that erasing the last
// entry of the lowest count scans upward for the next one (at most 255 steps).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/linked_nodes.h"

namespace chronocache {

class Lfu {
 public:
  static constexpr std::uint32_t kMaxCount = 255;

  struct Meta {
    detail::LinkedNodes::Handle node = 0;
  };

  Meta on_insert(SlotId id, std::uint64_t /*hash*/) {
    const auto node = nodes_.allocate(id, 1);
    nodes_.push_front(1, node);
    min_count_ = 1;
    return {node};
  }
  void on_access(Meta& meta) noexcept {
    auto& node = nodes_[meta.node];
    const std::uint32_t count = node.aux;
    nodes_.unlink(meta.node);
    const std::uint32_t next = count < kMaxCount ? count + 1 : count;
    node.aux = next;
    nodes_.push_front(next, meta.node);
    if (count == min_count_ && nodes_.empty(count)) min_count_ = next;
  }
  void on_erase(Meta& meta) noexcept {
    nodes_.unlink(meta.node);
    nodes_.release(meta.node);
  }
  void on_move(Meta& meta, SlotId id) noexcept { nodes_[meta.node].slot = id; }
  // The entry's count: 1 at insert, +1 for each access, at most kMaxCount.
  std::uint32_t count_of(const Meta& meta) const noexcept { return nodes_[meta.node].aux; }
  std::optional<SlotId> pick_victim() noexcept {
    while (min_count_ <= kMaxCount && nodes_.empty(min_count_)) ++min_count_;
    if (min_count_ > kMaxCount) {
      min_count_ = 1;
      return std::nullopt;  // no entries at all
    }
    return nodes_[nodes_.back(min_count_)].slot;
  }
  void clear() {
    nodes_.clear();
    min_count_ = 1;
  }
  std::size_t memory_bytes() const noexcept { return nodes_.memory_bytes(); }
  std::size_t growth_bytes_if_inserted() const noexcept {
    return nodes_.growth_bytes_if_allocated();
  }

 private:
  // Lists 1..kMaxCount hold the entries with that count; list 0 is unused.
  detail::LinkedNodes nodes_{kMaxCount + 1};
  std::uint32_t min_count_ = 1;  // a lower bound on the lowest non-empty count
};

static_assert(EvictionPolicy<Lfu>);

}  // namespace chronocache
