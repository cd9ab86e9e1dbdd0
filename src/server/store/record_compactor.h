// RecordCompactor: gives back the memory that random frees leave in the records' arena, Redis's
// active defragmentation (activedefrag) over our own allocator.
//
// Keys that expire or are deleted at random leave every arena page partly used, and no page
// empties, so RSS stays where the peak put it. When the arena's pages hold more unused bytes than
// both thresholds allow (active-defrag-ignore-bytes, and active-defrag-threshold-lower percent of
// the records' bytes), a pass starts: the arena marks its sparsest pages
// (RecordArena::plan_compaction), and the compactor walks the databases, a slice per server tick,
// moving each record on a marked page to a page that stays (Db::compact_records). A marked page
// whose last record leaves goes back to the OS. A pass ends when the walk has covered every
// database; the next one starts only when the waste is back above the thresholds. Turning
// activedefrag off stops new passes; one under way finishes (its marked pages would otherwise
// stay closed to new records until the next plan).
//
// During a mass expiry the thresholds stay crossed for as long as keys keep leaving, so two rules
// keep the compaction from costing more than the expiry it follows (make bench-expiry: 1 M keys
// expiring over 9 s beside 1 M persistent ones; Blob::compact took 28 % of the server's CPU
// samples, and the expiry 14 % of a core, before them):
//   * a record due within kSpareHorizon is left where it is: expiry frees its bytes soon, and
//     its page empties with it;
//   * a pass starts at least kPassCooldown after the last one ended: back to back, passes walked
//     the whole table every ~40 ms while moving next to nothing.
//
// Cost: the walk reads every slot once per pass (~5 ns a slot) and moves only the marked records
// (~80 ns each, bench/micro/arena_bench); a pass over 2 M slots with 1 M moves is ~90 ms of CPU,
// in slices of the expiry's 250 us budget (docs/design/memory.md has the measured pass).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "server/store/keyspace.h"

namespace chronocached {

class RecordCompactor {
 public:
  struct Settings {
    bool enabled = true;                 // activedefrag
    std::size_t ignore_bytes = 4 << 20;  // active-defrag-ignore-bytes
    unsigned threshold_percent = 10;     // active-defrag-threshold-lower
  };

  explicit RecordCompactor(Keyspace& keyspace) : keyspace_(&keyspace) {}
  void configure(const Settings& settings) { settings_ = settings; }

  static constexpr chronocache::Duration kSpareHorizon{10'000};
  static constexpr chronocache::Duration kPassCooldown{1'000};

  // One slice at `now` (the server's clock): starts a pass when the waste calls for one and the
  // cooldown is over, then moves records while keep_going() says so. Under the state lock (the
  // arena's serialisation).
  void step(TimePoint now, const std::function<bool()>& keep_going);

  bool running() const { return running_; }
  std::uint64_t moved() const { return moved_; }  // records moved (active_defrag_hits)
  // Records on evacuating pages left where they were (active_defrag_misses): due within
  // kSpareHorizon, or no memory to move them into.
  std::uint64_t spared() const { return spared_; }
  std::uint64_t passes() const { return passes_; }  // passes started, ever
  // How long the pass under way has run at `now`, and every pass since the start or the last
  // reset_stats() with it (Redis's current_active_defrag_time and total_active_defrag_time).
  chronocache::Duration current_pass_time(TimePoint now) const {
    return running_ ? now - pass_started_ : chronocache::Duration{0};
  }
  chronocache::Duration total_pass_time(TimePoint now) const {
    return ended_passes_time_ + current_pass_time(now);
  }
  // CONFIG RESETSTAT at `now`: the counts and times start again from 0 (a pass under way from
  // `now`).
  void reset_stats(TimePoint now) {
    moved_ = 0;
    spared_ = 0;
    ended_passes_time_ = chronocache::Duration{0};
    pass_started_ = now;
  }

 private:
  // Whether the arena wastes more than both thresholds allow.
  bool worth_a_pass() const;

  // Slots a walk examines between two keep_going() checks.
  static constexpr std::size_t kSlotsPerCheck = 1024;

  Keyspace* keyspace_;
  Settings settings_;
  bool running_ = false;
  std::size_t db_ = 0;        // the database the walk is in
  std::uint64_t cursor_ = 0;  // where in it
  std::uint64_t moved_ = 0;
  std::uint64_t spared_ = 0;
  std::uint64_t passes_ = 0;
  TimePoint next_pass_at_{};  // kPassCooldown after the last pass ended
  TimePoint pass_started_{};  // the running pass's start
  chronocache::Duration ended_passes_time_{0};
};

}  // namespace chronocached
