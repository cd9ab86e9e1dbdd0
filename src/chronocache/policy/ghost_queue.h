// GhostQueue: the keys recently evicted, remembered as 32-bit fingerprints only (S3Fifo's ghost
// queue G: Yang et al., "FIFO queues are all you need for cache eviction", SOSP'23).
//
// A FIFO of at most capacity() fingerprints with membership tests, approximated by a
// set-associative table: a fingerprint lives in one 8-way bucket, stamped with its insertion
// number; it counts as present while fewer than capacity() insertions followed it. A full bucket
// drops its oldest stamp, so the queue is FIFO per bucket and, with a quarter more ways than
// capacity, close to FIFO overall.
//
//   bucket (64 B) = 8 x { fingerprint:32, stamp:32 }      buckets = 1.25 x capacity / 8
//
// 10 bytes a ghost (small queues: 16 to 32, buckets_for). The table is allocated when the cache
// first evicts, and under a byte budget that is memory the records had filled: a server at
// `maxmemory 256mb` with 100-byte values evicted 32 MiB of records at once for a table twice its
// capacity and rounded up to a power of two, and RSS peaked 16 % over the budget
// (docs/design/memory.md). Any bucket count works: the index is a fraction of it.
//
// No per-operation allocation: set_capacity reallocates only when the capacity grows past the
// table (by at least a quarter), forgetting the ghosts (harmless: they are hints).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace chronocache::detail {

class GhostQueue {
 public:
  // How many fingerprints the FIFO holds. O(1) unless the table must grow.
  void set_capacity(std::size_t capacity) {
    capacity_ = static_cast<std::uint32_t>(std::max<std::size_t>(capacity, 1));
    const std::size_t needed = buckets_for(capacity_);
    if (needed > buckets_.size()) {
      // Grown by a quarter at least, so a capacity creeping up reallocates O(log) times.
      const std::size_t buckets = std::max(needed, buckets_.size() + buckets_.size() / 4);
      buckets_.assign(buckets, Bucket{});
      buckets_.shrink_to_fit();  // assign keeps a larger capacity; memory_bytes() counts it
      now_ = kFirstStamp;
    }
  }

  void insert(std::uint32_t fingerprint) noexcept {
    if (buckets_.empty()) return;
    Bucket& bucket = buckets_[index(fingerprint)];
    unsigned oldest = 0;
    for (unsigned i = 0; i < kWays; ++i) {
      if (bucket.fingerprint[i] == fingerprint || bucket.stamp[i] == kEmpty) {
        oldest = i;
        break;
      }
      if (bucket.stamp[i] < bucket.stamp[oldest]) oldest = i;
    }
    bucket.fingerprint[oldest] = fingerprint;
    bucket.stamp[oldest] = now_;
    if (++now_ == kEmpty) now_ = kFirstStamp;
  }

  // Whether the fingerprint is among the last capacity() inserted; removes it if so (a key comes
  // back from the ghost queue once).
  bool take(std::uint32_t fingerprint) noexcept {
    if (buckets_.empty()) return false;
    Bucket& bucket = buckets_[index(fingerprint)];
    for (unsigned i = 0; i < kWays; ++i) {
      if (bucket.fingerprint[i] == fingerprint && bucket.stamp[i] != kEmpty) {
        const bool recent = now_ - bucket.stamp[i] <= capacity_;
        bucket.stamp[i] = kEmpty;
        return recent;
      }
    }
    return false;
  }

  void clear() {
    std::fill(buckets_.begin(), buckets_.end(), Bucket{});
    now_ = kFirstStamp;
  }

  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t memory_bytes() const noexcept { return buckets_.capacity() * sizeof(Bucket); }

 private:
  static constexpr unsigned kWays = 8;
  static constexpr std::uint32_t kEmpty = 0;
  static constexpr std::uint32_t kFirstStamp = 1;

  struct Bucket {
    std::uint32_t fingerprint[kWays] = {};
    std::uint32_t stamp[kWays] = {};
  };
  static_assert(sizeof(Bucket) == 64, "one cache line per lookup");

  // A quarter of slack for large queues; small ones (a table under 1 MiB either way) keep twice
  // their capacity, rounded up to a power of two, as before: at a quarter, full buckets cut them
  // short (S3-FIFO on lirs_gli at 632 entries lost 1.5 points of hit ratio).
  static constexpr std::size_t kSmallCapacity = std::size_t{64} * 1024;
  static std::size_t buckets_for(std::size_t capacity) noexcept {
    if (capacity < kSmallCapacity)
      return std::bit_ceil(std::max<std::size_t>(2 * capacity / kWays, 1));
    return (capacity + capacity / 4 + kWays - 1) / kWays;
  }
  // The mixed fingerprint as a fraction of the bucket count (multiply-shift range reduction).
  std::size_t index(std::uint32_t fingerprint) const noexcept {
    const std::uint64_t mixed = fingerprint * 0x9E3779B9u;
    return static_cast<std::size_t>((mixed * buckets_.size()) >> 32);
  }

  std::vector<Bucket> buckets_;
  std::uint32_t capacity_ = 1;
  // Insertion counter. It wraps after 2^32 insertions; a stale stamp then reads as old or, rarely,
  // as recent: one wrong hint per wrap, which only moves one key to the other queue.
  std::uint32_t now_ = kFirstStamp;
};

}  // namespace chronocache::detail
