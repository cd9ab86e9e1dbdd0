// SlotId: where an entry lives in the table, as the eviction policies see it.
//
// 32 bits: the segment's index in the table (high 16) and the slot inside it (low 16). A slot id is
// stable until the table relocates the entry (growth); the table reports every relocation through
// the policy's on_move hook, so policies may keep SlotIds but never pointers.
#pragma once

#include <cstdint>

namespace chronocache {

using SlotId = std::uint32_t;

inline constexpr unsigned kSlotIdSlotBits = 16;

inline constexpr SlotId make_slot_id(std::uint32_t segment, std::uint32_t slot) noexcept {
  return (segment << kSlotIdSlotBits) | slot;
}
inline constexpr std::uint32_t slot_id_segment(SlotId id) noexcept { return id >> kSlotIdSlotBits; }
inline constexpr std::uint32_t slot_id_slot(SlotId id) noexcept {
  return id & ((1u << kSlotIdSlotBits) - 1);
}

}  // namespace chronocache
