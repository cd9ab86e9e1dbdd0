// SuccessorRow: one row of a SuccessorModel's table: a key (the row's owner) and its top
// successors with counts, behind a RowLock. Machinery of successor_model.h, not API.
//
//   +----------+--------+-------+----------------------+-------------------+-------------------+
//   | RowLock  | tenure | owner | successor[0..W)      | count[0..W)       | inherited[0..W)   |
//   | 4 B      | 2 B    | K     | W x K                | 4 x 16 bits       | 4 x 16 bits       |
//   +----------+--------+-------+----------------------+-------------------+-------------------+
//   The counts are lanes of one 64-bit word (PackedCounts), so W <= 4 and a row's total, its
//   halving and its guaranteed counts are a few word operations, not a loop.
//   64 bytes for 8-byte keys and W = 4 (static_assert in successor_model_test.cc); 192 for
//   std::string (32-byte objects, their heap bytes beside).
//
// Invariants, whenever the lock is free:
//   * tenure == 0 means the row is empty (every count is 0); else owner is the row's key and
//     1 <= tenure <= owner_tenure.
//   * count[i] == 0 means slot i is free; else successor[i] is a key seen after owner, and
//     inherited[i] <= count[i]. count[i] - inherited[i] transitions to it were seen since it
//     entered the row (its guaranteed count); inherited[i] is the count of the weaker successor
//     whose place it took (space-saving: Metwally, Agrawal, El Abbadi, ICDT 2005), so the sum of
//     the counts is the transitions seen from owner, and a newcomer ranks as well as the one it
//     replaced without being believed more than it was seen.
//   * sum(count) < decay_period: reaching it halves every count and inherited (floor; a count
//     of 1 becomes 0 and frees its slot), so old transitions weigh half after each period.
//
// Keys of one atomic word (integers, enums, small PODs) are std::atomic cells, written with
// release stores under the lock and read optimistically without it (RowLock's header); other
// keys (strings) are plain members read and written only under the lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "chronocache/base/thread_annotations.h"
#include "chronocache/concurrency/atomic_word.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/row_lock.h"

namespace chronocache::detail {

// Whether rows of K are read optimistically (no store by readers) or under the row's lock.
template <class K>
inline constexpr bool kOptimisticRows = is_one_atomic_word<K>();

// A key in a row: an atomic cell for one-word keys, the key itself otherwise.
template <class K, bool kAtomic = kOptimisticRows<K>>
class KeyCell {
 public:
  K load() const noexcept { return value_.load(std::memory_order_acquire); }
  void store(const K& key) noexcept { value_.store(key, std::memory_order_release); }

 private:
  std::atomic<K> value_{};
};

template <class K>
class KeyCell<K, false> {
 public:
  const K& load() const noexcept { return value_; }
  // May allocate (a longer string than the cell held); the row's lock is held meanwhile.
  void store(const K& key) { value_ = key; }

 private:
  K value_{};
};

// The options a row needs, in the forms its hot path compares.
struct RowParams {
  std::uint32_t decay_period = 64;
  std::uint16_t owner_tenure = 8;
  std::uint32_t min_count = 2;
  std::uint32_t min_confidence_q16 = 1u << 15;  // min_confidence x 65536
};

// Four 16-bit counters in one 64-bit word, lane i at bits [16i, 16i + 16): a row's counts (and
// its inherited counts) are loaded, summed, halved and stored as one word.
struct PackedCounts {
  static constexpr std::uint64_t kLaneOnes = 0x0001000100010001ULL;
  static constexpr std::uint64_t kLaneLowBitsCleared = 0x7fff7fff7fff7fffULL;

  static std::uint32_t lane(std::uint64_t word, std::size_t i) noexcept {
    return static_cast<std::uint32_t>((word >> (16 * i)) & 0xffff);
  }
  static std::uint64_t one_in(std::size_t i) noexcept { return std::uint64_t{1} << (16 * i); }
  // The sum of the four lanes; exact while it is below 65 536 (decay_period keeps it there).
  static std::uint32_t sum(std::uint64_t word) noexcept {
    return static_cast<std::uint32_t>((word * kLaneOnes) >> 48);
  }
  // Every lane halved (floor).
  static std::uint64_t halved(std::uint64_t word) noexcept {
    return (word >> 1) & kLaneLowBitsCleared;
  }
  static std::uint64_t with_lane(std::uint64_t word, std::size_t i, std::uint32_t value) noexcept {
    return (word & ~(std::uint64_t{0xffff} << (16 * i))) | (std::uint64_t{value} << (16 * i));
  }
};

template <class K, std::size_t kWays>
struct alignas(64) SuccessorRow {
  static_assert(kWays >= 1 && kWays <= 4, "a row's counts are four 16-bit lanes of one word");

  static constexpr auto kRelaxed = std::memory_order_relaxed;
  static constexpr auto kAcquire = std::memory_order_acquire;
  static constexpr auto kRelease = std::memory_order_release;

  // Records owner -> next if owner holds the row, or claims the row for it (see the header).
  // The caller has checked that prev != next and that both keys may be recorded.
  RecordOutcome record_locked(const K& prev, const K& next, const RowParams& params)
      CC_REQUIRES(lock) {
    RecordOutcome outcome = RecordOutcome::kCounted;
    std::uint64_t counts = count.load(kRelaxed);
    std::uint64_t inherits = inherited.load(kRelaxed);
    const std::uint16_t held = tenure.load(kRelaxed);
    if (held != 0 && owner.load() == prev) {
      if (held < params.owner_tenure) tenure.store(static_cast<std::uint16_t>(held + 1), kRelease);
    } else {
      if (held > 1) {
        tenure.store(static_cast<std::uint16_t>(held - 1), kRelease);
        return RecordOutcome::kRowHeld;
      }
      owner.store(prev);
      tenure.store(1, kRelease);
      counts = 0;
      inherits = 0;
      outcome = RecordOutcome::kClaimed;
    }

    std::size_t found = kWays;
    std::size_t free_slot = kWays;
    std::size_t weakest = 0;
    std::uint32_t weakest_count = UINT32_MAX;
    for (std::size_t i = 0; i < kWays; ++i) {
      const std::uint32_t c = PackedCounts::lane(counts, i);
      if (c == 0) {
        if (free_slot == kWays) free_slot = i;
      } else if (successor[i].load() == next) {
        found = i;
        break;
      } else if (c < weakest_count) {
        weakest_count = c;
        weakest = i;
      }
    }
    if (found != kWays) {
      counts += PackedCounts::one_in(found);
    } else {
      if (outcome == RecordOutcome::kCounted) outcome = RecordOutcome::kAdded;
      // A free place, else the weakest one's, inheriting its count (space-saving).
      const std::size_t slot = free_slot != kWays ? free_slot : weakest;
      const std::uint32_t inherit = free_slot != kWays ? 0 : weakest_count;
      successor[slot].store(next);
      inherits = PackedCounts::with_lane(inherits, slot, inherit);
      counts = PackedCounts::with_lane(counts, slot, inherit + 1);
    }
    if (PackedCounts::sum(counts) >= params.decay_period) {
      counts = PackedCounts::halved(counts);
      inherits = PackedCounts::halved(inherits);
    }
    count.store(counts, kRelease);
    inherited.store(inherits, kRelease);
    return outcome;
  }

  // Fills out[0..n) with the successors of `key` that pass the thresholds, strongest first, and
  // returns n (0 when the row belongs to another key). Never allocates for one-word keys; for
  // others, assigning into out[i].key reuses its capacity.
  std::size_t predict_locked(const K& key, std::span<Prediction<K>> out,
                             const RowParams& params) const CC_REQUIRES(lock) {
    const std::uint64_t counts = count.load(kAcquire);
    const std::uint32_t total = PackedCounts::sum(counts);
    if (total == 0 || !(owner.load() == key)) return 0;
    // Lane-wise counts less inherited: no borrow crosses lanes, since inherited <= count in each
    // (a torn optimistic copy may break that; the caller discards such a copy).
    const std::uint64_t guaranteed = counts - inherited.load(kAcquire);
    // Candidates by guaranteed count, strongest first (insertion sort over at most W).
    std::array<std::uint8_t, kWays> order{};
    std::size_t n = 0;
    const std::uint64_t bar = std::uint64_t{params.min_confidence_q16} * total;
    for (std::size_t i = 0; i < kWays; ++i) {
      const std::uint32_t g = PackedCounts::lane(guaranteed, i);
      if (g < params.min_count || (std::uint64_t{g} << 16) < bar) continue;
      std::size_t at = n++;
      for (; at > 0 && PackedCounts::lane(guaranteed, order[at - 1]) < g; --at) {
        order[at] = order[at - 1];
      }
      order[at] = static_cast<std::uint8_t>(i);
    }
    if (n > out.size()) n = out.size();
    const float per_transition = 1.0f / static_cast<float>(total);
    for (std::size_t j = 0; j < n; ++j) {
      out[j].key = successor[order[j]].load();
      out[j].confidence =
          static_cast<float>(PackedCounts::lane(guaranteed, order[j])) * per_transition;
    }
    return n;
  }

  // predict_locked without the lock, for one-word keys: a seqlock read. The copy is kept only if
  // no writer started meanwhile (RowLock's header has the argument); after `tries` torn copies it
  // gives up and predicts nothing, so a reader never waits for a writer.
  std::size_t predict_optimistic(const K& key, std::span<Prediction<K>> out,
                                 const RowParams& params, int tries) const
      // A seqlock: the fields are atomics read while a writer may hold the lock, and the copy is
      // validated by the lock's sequence, not protected by holding it.
      CC_NO_THREAD_SAFETY_ANALYSIS {
    static_assert(kOptimisticRows<K>, "only rows of one-word keys are read without the lock");
    for (; tries > 0; --tries) {
      const std::uint32_t begin = lock.read_begin();
      if ((begin & 1) != 0) {
        cpu_relax();
        continue;
      }
      const std::size_t n = predict_locked(key, out, params);
      if (lock.read_is_unchanged(begin)) return n;
    }
    return 0;
  }

  mutable RowLock lock;
  std::atomic<std::uint16_t> tenure CC_GUARDED_BY(lock){0};
  KeyCell<K> owner CC_GUARDED_BY(lock);
  std::array<KeyCell<K>, kWays> successor CC_GUARDED_BY(lock);
  // PackedCounts: lane i is successor i's count (0: the place is free) / inherited count.
  std::atomic<std::uint64_t> count CC_GUARDED_BY(lock){0};
  std::atomic<std::uint64_t> inherited CC_GUARDED_BY(lock){0};
};

}  // namespace chronocache::detail
