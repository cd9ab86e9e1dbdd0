// ExpiryPacer: proactive expiry with bounded work, for hosts that drive Cache::reclaim_expired in
// slices from their own loop (the server's event loop; an embedder's timer).
//
//   chronocache::ExpiryPacer pacer;  // every slot examined at least once per 500 ms
//   // On a timer, every pacer.interval(cache.slot_capacity(), 1ms, 100ms):
//   chronocache::reclaim_slice(cache, pacer, now, [&] { return !out_of_time(); });
//
// Why a paced full sweep, not a timing wheel or TTL buckets: measured first (Release, GCC 12,
// -march=x86-64-v2, a shared 2-core VM; bench/micro/sweep_bench.cc, whose header has the commands).
// 2 M entries, half with a TTL, 4.19 M slots (load 0.48), nothing due:
//
//                                          ns/slot   instructions/slot   mispredicts/slot
//   generic sweep(fn), a branch per entry    5.1          12.9              0.43
//   sweep_expired, branch-free per group     2.9          12.0              0.07
//
// (instructions: callgrind at 2 M entries; mispredicts: cachegrind --branch-sim at 400 K entries,
// load 0.76.) The generic walk tested "has a deadline?" per entry, a coin toss when persistent
// and volatile keys are mixed. At 2.9 ns a full cycle over 4.19 M slots every 0.5 s is ~2.4 % of
// a core, and each expired entry is found within one cycle of its deadline however TTLs are
// spread; with every volatile entry due, sweep plus 1 M erases ran at 3.8 ns per slot. A wheel
// would cost memory per entry (a link or bucket index) and a hook on every put, overwrite and
// erase, to save CPU the sweep hardly spends; a per-segment minimum deadline skips nothing when
// the hash spreads volatile keys over every segment (the common case); so neither was built.
// What the sweep cannot do cheaply is run when there is nothing to find, so the pacer asks the
// cache first: while no stored deadline can have passed (Cache::may_hold_expired), a slice
// examines nothing and no debt builds up.
//
// Pacing: a slice owes capacity * elapsed / cycle slots since the previous slice (debt left by a
// slice cut short carries over), at most max_slice_slots; the host's keep_going() is asked every
// kCheckEverySlots slots so a slice also stays inside a time budget. The guarantee: while slices
// keep up (each pays its debt), every entry is examined at least once per cycle, so an entry is
// gone at most `cycle` plus one slice interval after its deadline.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "chronocache/clock/clock.h"

namespace chronocache {

struct ExpiryPacing {
  // Every slot is examined at least once per cycle: the worst lag of proactive expiry.
  Duration cycle{500};
  // The most one slice examines (~0.4 ms at ~3 ns per slot): a loop that fell behind catches up
  // over several slices instead of stalling its clients in one.
  std::size_t max_slice_slots = std::size_t{128} * 1024;
  // The slice size interval() aims at (~0.1 ms of sweeping): small enough to hide between
  // requests, large enough that a 2 M-key table needs a slice only every ~3 ms.
  std::size_t target_slice_slots = std::size_t{32} * 1024;
};

class ExpiryPacer {
 public:
  // keep_going() is asked after each chunk of this many slots (one clock read per ~12 us of work).
  static constexpr std::size_t kCheckEverySlots = 4096;

  explicit ExpiryPacer(ExpiryPacing pacing = {}) noexcept : pacing_(pacing) {}

  const ExpiryPacing& pacing() const noexcept { return pacing_; }

  // Slots the slice at `now` should examine for a table of `capacity` slots: its share of the
  // cycle since the previous call, plus unpaid debt, capped at max_slice_slots. The first call
  // only starts the clock (and owes nothing).
  std::size_t slots_due(TimePoint now, std::size_t capacity) noexcept {
    if (!started_) {
      started_ = true;
      last_ = now;
      return 0;
    }
    const auto cycle = static_cast<std::uint64_t>(std::max<std::int64_t>(1, pacing_.cycle.count()));
    // Debt never exceeds one cycle's worth: a loop stalled for seconds owes one full pass (and
    // capping the elapsed time first keeps the product below from overflowing).
    const std::uint64_t elapsed = std::min<std::uint64_t>(
        cycle, static_cast<std::uint64_t>(std::max<std::int64_t>(0, (now - last_).count())));
    last_ = now;
    // Rounded up: a small table still gets at least a slot per elapsed millisecond's share.
    const std::uint64_t share = (std::uint64_t{capacity} * elapsed + cycle - 1) / cycle;
    debt_ = std::min<std::uint64_t>(debt_ + share, capacity);
    return static_cast<std::size_t>(std::min<std::uint64_t>(debt_, pacing_.max_slice_slots));
  }

  // Records that a slice examined `slots` of what slots_due asked for.
  void paid(std::size_t slots) noexcept { debt_ -= std::min<std::uint64_t>(debt_, slots); }

  // Nothing to find (no deadline can have passed): forgets the debt; the next slice owes only
  // what accrues from `now`.
  void idle(TimePoint now) noexcept {
    started_ = true;
    last_ = now;
    debt_ = 0;
  }

  // How often to run slices for a table of `capacity` slots so that each one examines about
  // target_slice_slots, never more often than `shortest` and never less than `longest`.
  Duration interval(std::size_t capacity, Duration shortest, Duration longest) const noexcept {
    const auto cycle = static_cast<std::uint64_t>(std::max<std::int64_t>(1, pacing_.cycle.count()));
    const std::uint64_t slices = std::max<std::uint64_t>(1, capacity / pacing_.target_slice_slots);
    const auto ms = static_cast<std::int64_t>(cycle / slices);
    return std::clamp(Duration(ms), shortest, std::max(shortest, longest));
  }

  std::uint64_t debt() const noexcept { return debt_; }

 private:
  ExpiryPacing pacing_;
  bool started_ = false;
  TimePoint last_{};
  std::uint64_t debt_ = 0;  // slots owed to the current cycle
};

struct SliceResult {
  std::size_t examined = 0;
  std::size_t reclaimed = 0;
  bool out_of_time = false;  // keep_going() stopped it before it examined what was due
};

// One paced slice on `cache` (anything with reclaim_expired_at, slot_capacity and
// may_hold_expired, e.g. chronocache::Cache): examines what `pacer` says is due, in chunks of
// kCheckEverySlots, stopping early when keep_going() returns false (the host's time budget).
template <class CacheT, class KeepGoing>
SliceResult reclaim_slice(CacheT& cache, ExpiryPacer& pacer, TimePoint now,
                          KeepGoing&& keep_going) {
  SliceResult result;
  if (!cache.may_hold_expired(now)) {
    pacer.idle(now);
    return result;
  }
  const std::size_t due = pacer.slots_due(now, cache.slot_capacity());
  while (result.examined < due) {
    const std::size_t chunk = std::min(ExpiryPacer::kCheckEverySlots, due - result.examined);
    result.reclaimed += cache.reclaim_expired_at(chunk, now);
    result.examined += chunk;
    if (!cache.may_hold_expired(now)) {  // a cycle just ended with nothing left due: done
      pacer.idle(now);
      return result;
    }
    if (result.examined < due && !keep_going()) {
      result.out_of_time = true;
      break;
    }
  }
  pacer.paid(result.examined);
  return result;
}

}  // namespace chronocache
