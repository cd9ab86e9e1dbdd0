// GhostQueue: the keys recently evicted, remembered as 32-bit fingerprints only (S3Fifo's ghost
// queue G: Yang et al., "FIFO queues are all you need for cache eviction", SOSP'23).
//
// A FIFO of at most capacity() fingerprints with membership tests, approximated by a
// set-associative table: a fingerprint lives in one 8-way bucket, stamped with its insertion
// number; it counts as present while fewer than capacity() insertions followed it. A full bucket
// drops its oldest stamp, so the queue is FIFO per bucket and, with buckets kept at most half full
// on average, close to FIFO overall.
//
//   bucket (64 B) = 8 x { fingerprint:32, stamp:32 }      buckets = 2 x capacity / 8
//
// No per-operation allocation: set_capacity reallocates only when the capacity grows past the
// table (x2 steps), forgetting the ghosts (harmless: they are hints).
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
    const std::size_t buckets = std::bit_ceil(std::max<std::size_t>(2 * capacity_ / kWays, 1));
    if (buckets > buckets_.size()) {
      buckets_.assign(buckets, Bucket{});
      mask_ = buckets - 1;
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

  std::size_t index(std::uint32_t fingerprint) const noexcept {
    return (fingerprint * 0x9E3779B9u >> 7) & mask_;
  }

  std::vector<Bucket> buckets_;
  std::size_t mask_ = 0;
  std::uint32_t capacity_ = 1;
  // Insertion counter. It wraps after 2^32 insertions; a stale stamp then reads as old or, rarely,
  // as recent: one wrong hint per wrap, which only moves one key to the other queue.
  std::uint32_t now_ = kFirstStamp;
};

}  // namespace chronocache::detail
