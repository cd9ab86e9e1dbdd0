// SuccessorModel<K, Hash, W>: which keys tend to be read next after a key: a first-order Markov
// model in a fixed table, for prefetching (LoadingCache records each read and prefetches what
// predict() returns; docs/design/prefetch.md).
//
//   chronocache::SuccessorModel<std::uint64_t> model({.rows = 1 << 16});
//   model.record(41, 42);                    // a caller read 41, then 42
//   std::array<chronocache::Prediction<std::uint64_t>, 4> next;
//   for (std::size_t i = 0, n = model.predict(42, next); i < n; ++i) prefetch(next[i].key);
//
// Callers keep their "previous key" in an AccessStream (access_stream.h), one per thread or
// connection, since a transition means something only within one caller's sequence.
//
// THE MODEL. The table has `rows` rows (a power of two), fixed at construction: a key's row is
// chosen by its hash, and a row holds one key (its owner) and that key's W most frequent
// successors with counts (successor_row.h draws it):
//   * record(prev, next) counts prev -> next in prev's row. A new successor takes a free place,
//     else the weakest one's, inheriting its count (space-saving), so the sum of a row's counts is
//     the number of transitions seen from its key.
//   * Decay: when that sum reaches decay_period, every count is halved, so the model follows a
//     changed pattern within about decay_period transitions from the key.
//   * A row wanted by another key (a hash collision in a fixed table): the owner's tenure, which
//     its own transitions raise up to owner_tenure and every rival's claim lowers, decides; at
//     zero the rival takes the row and its successors start afresh. So the row belongs to the
//     more frequently used key, and a key not used any more gives way within owner_tenure claims.
//   * predict(key) returns the successors whose guaranteed count (count less what it inherited)
//     is at least min_count and at least min_confidence of the row's total, strongest first.
//     A random stream spreads a row's counts over more keys than it has places, so no successor
//     reaches the bar and nothing is prefetched.
//
// MEMORY is rows x sizeof(row) (row_bytes(); 64 B for 8-byte keys and W = 4, so the default
// 65 536 rows take 4 MiB) plus, for keys owning heap memory, what the row's 1 + W keys own, at
// most about 1 + W allocations of max_key_bytes each (longer keys are not recorded): bounded by
// rows x (row_bytes() + (1 + W) x (max_key_bytes + 32)), whatever the key space.
//
// CONCURRENCY: thread-safe; every row has its own RowLock (row_lock.h), so threads on different
// rows never meet, and no call waits for another:
//   record    try-locks prev's row (one compare-exchange); a row another thread is writing is
//             left alone and the transition dropped (kBusy). Lossy by design: a statistical
//             model loses nothing by missing a transition now and then.
//   predict   one-word keys (integers): a seqlock read that stores nothing, so readers of a hot
//             key do not even share a cache line in write mode; torn copies are discarded (never
//             returned), and after a few it predicts nothing. Other keys (strings): the row's
//             lock, tried a few times, then nothing; readers of one row exclude each other, for
//             the few nanoseconds of copying at most W keys.
//   memory_bytes  locks each row in turn.
// Construction and destruction are not concurrent with anything.
//
// Costs (bench/micro/prefetch_model_bench.cc; docs/design/prefetch.md has the table): record
// hashes prev once (record_prehashed takes a hash the caller has, as ShardedCache's), scans one
// row and makes one compare-exchange; predict scans one row; neither allocates (strings: see
// Prediction) and neither takes a lock shared by rows.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "chronocache/base/assert.h"
#include "chronocache/base/hash.h"
#include "chronocache/memory/heap_bytes.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/successor_model_options.h"
#include "chronocache/predict/successor_row.h"

namespace chronocache {

template <class K, class Hash = DefaultHash<K>, std::size_t kSuccessors = 4>
class SuccessorModel {
  using Row = detail::SuccessorRow<K, kSuccessors>;

 public:
  using key_type = K;
  // The most predictions one predict() returns: a span of this many never truncates.
  static constexpr std::size_t kMaxPredictions = kSuccessors;
  // Whether predict reads rows without storing anything (keys of one atomic word).
  static constexpr bool kOptimisticReads = detail::kOptimisticRows<K>;

  explicit SuccessorModel(const SuccessorModelOptions& options = {}, Hash hash = {})
      : options_(options), hash_(std::move(hash)) {
    CC_CHECK(options.decay_period >= 2 && options.decay_period <= 32767,
             "decay_period: counts are 16-bit and must be halvable");
    CC_CHECK(options.owner_tenure >= 1 && options.owner_tenure <= 65535,
             "owner_tenure is a 16-bit count of at least 1");
    CC_CHECK(options.min_confidence >= 0 && options.min_confidence <= 1,
             "min_confidence is a share in [0, 1]");
    const std::size_t rows = std::bit_ceil(options.rows < 2 ? std::size_t{2} : options.rows);
    options_.rows = rows;
    shift_ = 64 - std::countr_zero(rows);
    params_.decay_period = options.decay_period;
    params_.owner_tenure = static_cast<std::uint16_t>(options.owner_tenure);
    params_.min_count = options.min_count < 1 ? 1 : options.min_count;
    params_.min_confidence_q16 =
        static_cast<std::uint32_t>(std::lround(options.min_confidence * 65536.0));
    rows_ = std::make_unique<Row[]>(rows);
  }

  SuccessorModel(const SuccessorModel&) = delete;
  SuccessorModel& operator=(const SuccessorModel&) = delete;

  std::uint64_t hash(const K& key) const noexcept { return hash_(key); }

  // Counts the transition prev -> next (a caller read prev, then next). Self-transitions and
  // keys longer than max_key_bytes are skipped. Thread-safe and lossy (kBusy: see the header).
  RecordOutcome record(const K& prev, const K& next) {
    return record_prehashed(prev, hash_(prev), next);
  }
  // The same, with prev's hash by this model's Hash (the one a ShardedCache computed, when the
  // two share a hash function).
  RecordOutcome record_prehashed(const K& prev, std::uint64_t prev_hash, const K& next) {
    if (prev == next || is_too_long(prev) || is_too_long(next)) return RecordOutcome::kSkipped;
    Row& row = row_of(prev_hash);
    if (!row.lock.try_lock()) return RecordOutcome::kBusy;
    const RecordOutcome outcome = row.record_locked(prev, next, params_);
    row.lock.unlock();
    return outcome;
  }

  // Writes the keys likely to be read after `key` into out[0..n), strongest first, and returns n
  // (at most min(out.size(), kMaxPredictions); 0 when the model knows nothing confident, or lost
  // a race with writers of the row). Never allocates for one-word keys; for strings, assigning
  // into out[i].key reuses the capacity a previous call left there. Thread-safe; never waits.
  std::size_t predict(const K& key, std::span<Prediction<K>> out) const {
    return predict_prehashed(key, hash_(key), out);
  }
  std::size_t predict_prehashed(const K& key, std::uint64_t hash,
                                std::span<Prediction<K>> out) const {
    if (out.empty() || is_too_long(key)) return 0;
    Row& row = row_of(hash);
    if constexpr (kOptimisticReads) {
      return row.predict_optimistic(key, out, params_, kReadTries);
    } else {
      if (!row.lock.try_lock_spinning(kReadTries)) return 0;
      const std::size_t n = row.predict_locked(key, out, params_);
      row.lock.unlock();
      return n;
    }
  }

  // Rows in the table (options.rows rounded up to a power of two), fixed at construction.
  std::size_t row_count() const noexcept { return options_.rows; }
  static constexpr std::size_t row_bytes() noexcept { return sizeof(Row); }
  // The table's bytes plus what its keys own on the heap (HeapBytes). O(rows): locks each row.
  std::size_t memory_bytes() const {
    std::size_t bytes = sizeof(*this) + row_count() * sizeof(Row);
    if constexpr (!kOptimisticReads) {
      for (std::size_t r = 0; r < row_count(); ++r) bytes += heap_bytes_of(rows_[r]);
    }
    return bytes;
  }
  const SuccessorModelOptions& options() const noexcept { return options_; }

 private:
  // Seqlock attempts (one-word keys) or lock attempts (others) before predict gives up: a write
  // section is a few stores, so a reader that meets several in a row is on a hot row, where a
  // missed prefetch is cheaper than a wait.
  static constexpr int kReadTries = 4;

  Row& row_of(std::uint64_t hash) const noexcept {
    // Fibonacci hashing: the multiply carries every bit of the hash into the top bits, so a
    // slice of the hash that is constant for a caller (a ShardedCache's shard bits) still spreads.
    return rows_[(hash * 0x9e3779b97f4a7c15ULL) >> shift_];
  }

  bool is_too_long(const K& key) const noexcept {
    if constexpr (requires { key.size(); }) {
      return options_.max_key_bytes != 0 && key.size() > options_.max_key_bytes;
    } else {
      return false;
    }
  }

  static std::size_t heap_bytes_of(Row& row) {
    row.lock.lock();
    std::size_t bytes = HeapBytes<K>::of(row.owner.load());
    for (const auto& cell : row.successor) bytes += HeapBytes<K>::of(cell.load());
    row.lock.unlock();
    return bytes;
  }

  SuccessorModelOptions options_;
  Hash hash_;
  detail::RowParams params_;
  int shift_ = 64;
  std::unique_ptr<Row[]> rows_;
};

}  // namespace chronocache
