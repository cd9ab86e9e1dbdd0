// Lru: exact least-recently-used order. A get hit or an overwrite makes an entry the most recent;
// the victim is the least recent. One list, 16 bytes of node per entry plus a 4-byte handle in
// the slot; every hook is O(1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/linked_nodes.h"

namespace chronocache {

class Lru {
 public:
  struct Meta {
    detail::LinkedNodes::Handle node = 0;
  };

  Meta on_insert(SlotId id, std::uint64_t /*hash*/) {
    const auto node = nodes_.allocate(id);
    nodes_.push_front(kList, node);
    return {node};
  }
  void on_access(Meta& meta) noexcept {
    nodes_.unlink(meta.node);
    nodes_.push_front(kList, meta.node);
  }
  void on_erase(Meta& meta) noexcept {
    nodes_.unlink(meta.node);
    nodes_.release(meta.node);
  }
  void on_move(Meta& meta, SlotId id) noexcept { nodes_[meta.node].slot = id; }
  std::optional<SlotId> pick_victim() const noexcept {
    if (nodes_.empty(kList)) return std::nullopt;
    return nodes_[nodes_.back(kList)].slot;
  }
  void clear() { nodes_.clear(); }
  std::size_t memory_bytes() const noexcept { return nodes_.memory_bytes(); }
  std::size_t growth_bytes_if_inserted() const noexcept {
    return nodes_.growth_bytes_if_allocated();
  }

 private:
  static constexpr std::uint32_t kList = 0;
  detail::LinkedNodes nodes_{1};
};

static_assert(EvictionPolicy<Lru>);

}  // namespace chronocache
