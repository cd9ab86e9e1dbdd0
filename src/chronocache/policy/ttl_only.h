// TtlOnly: no eviction order at all. Entries leave by erase or expiry only; its Meta is empty, so
// it costs nothing per slot and nothing per operation. With a max_entries bound, inserts of new
// keys are refused (PutOutcome::kRejectedFull) while the cache is full, like Redis `noeviction`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "chronocache/policy/eviction_policy.h"

namespace chronocache {

struct TtlOnly {
  struct Meta {};

  Meta on_insert(SlotId, std::uint64_t) noexcept { return {}; }
  void on_access(Meta&) noexcept {}
  void on_shared_access(const Meta&) const noexcept {}  // a concurrent read (ShardedCache)
  void on_erase(Meta&) noexcept {}
  void on_move(Meta&, SlotId) noexcept {}
  std::optional<SlotId> pick_victim() noexcept { return std::nullopt; }
  void clear() noexcept {}
  std::size_t memory_bytes() const noexcept { return 0; }
};

static_assert(EvictionPolicy<TtlOnly>);

}  // namespace chronocache
