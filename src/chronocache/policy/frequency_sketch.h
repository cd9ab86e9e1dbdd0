// FrequencySketch: how often a key was seen recently, in ~9 bytes per cached entry, for WTinyLfu's
// admission contest (TinyLFU: G. Einziger, R. Friedman, B. Manes, "TinyLFU: A Highly Efficient
// Cache Admission Policy", ACM ToS 2017).
//
// Three parts, all sized from the capacity the policy reports (ensure_capacity):
//
//   * a count-min sketch of 4-bit counters (saturating at kMaxCount = 15), 16 per 64-bit word,
//     one word per entry of capacity. A key's four counters all lie in one 64-byte block of eight
//     words (Caffeine's layout): one cache line per increment or estimate, not four.
//
//        block (8 words, 64 B) chosen by the hash's low bits
//        | w0 w1 | w2 w3 | w4 w5 | w6 w7 |     counter i lives in word 2i or 2i+1,
//        |  c0   |  c1   |  c2   |  c3   |     nibble chosen by 4 bits of a re-mixed hash
//
//   * a doorkeeper: a Bloom filter (one bit array, 2 bits per key in one word) that absorbs each
//     key's first sighting, so the many keys seen once never reach the counters (the paper's
//     section 3.4.2). estimate() adds 1 for a key the doorkeeper holds.
//
//   * aging: after every sample_size() recorded sightings (set_aging_period; TinyLFU's 10 x the
//     capacity) every counter is halved and the doorkeeper cleared, so the sketch follows a
//     changing popularity (the paper's "reset"). Halving all counters is O(table); over the 10 x
//     capacity sightings that triggered it that is O(1) amortised per sighting.
//
// Keys are given as 64-bit hashes (already mixed: the table's hash); collisions only ever raise an
// estimate. Nothing allocates except ensure_capacity when the capacity grows.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace chronocache::detail {

class FrequencySketch {
 public:
  static constexpr unsigned kMaxCount = 15;  // 4-bit counters

  // Sizes the table for `capacity` entries (at least kMinCapacity): one 16-counter word and 8
  // doorkeeper bits per entry, rounded up to a power of two. The table only grows, by doubling
  // blocks and doorkeeper words in place: a key's block index gains one high bit, and both halves
  // start as copies, so every estimate survives a resize unchanged.
  void ensure_capacity(std::size_t capacity) {
    const std::size_t words = std::bit_ceil(std::max(capacity, kMinCapacity));
    if (words <= counters_.size()) return;
    if (counters_.empty()) {
      counters_.assign(words, 0);
      door_.assign(words * kDoorBitsPerEntry / 64, 0);
    } else {
      while (counters_.size() < words) {
        const std::size_t old_counters = counters_.size();
        counters_.resize(2 * old_counters);
        std::copy_n(counters_.begin(), old_counters, counters_.begin() + old_counters);
        const std::size_t old_door = door_.size();
        door_.resize(2 * old_door);
        std::copy_n(door_.begin(), old_door, door_.begin() + old_door);
      }
    }
    block_mask_ = words / kBlockWords - 1;
    door_mask_ = door_.size() - 1;
  }

  // Ages (age()) after every `sightings` recorded sightings; TinyLFU's choice is 10 x the cache's
  // capacity (kSamplesPerEntry). Until set, the sketch never ages.
  void set_aging_period(std::size_t sightings) noexcept {
    sample_size_ = std::max<std::size_t>(sightings, 1);
  }
  static constexpr std::size_t aging_period_for(std::size_t capacity) noexcept {
    return kSamplesPerEntry * capacity;
  }

  // Records `times` sightings of the key (a policy may batch the hits it saw since it last
  // looked; times <= kMaxCount + 1 matters, more saturates).
  void increment(std::uint64_t hash, unsigned times = 1) noexcept {
    if (counters_.empty() || times == 0) return;
    if (!door_test_and_set(hash)) {
      count_samples(1);
      if (--times == 0) return;
    }
    const std::uint64_t spread = remix(hash);
    std::uint64_t* block = &counters_[(hash & block_mask_) * kBlockWords];
    unsigned added = 0;
    for (unsigned i = 0; i < kHashes; ++i) {
      const unsigned h = static_cast<unsigned>(spread >> (i * 8));
      std::uint64_t& word = block[2 * i + (h & 1)];
      const unsigned shift = ((h >> 1) & 15) * 4;
      const unsigned count = static_cast<unsigned>((word >> shift) & 0xF);
      const unsigned room = std::min(times, kMaxCount - count);
      word += std::uint64_t{room} << shift;
      added = std::max(added, room);
    }
    count_samples(added);
  }

  // The key's estimated recent frequency, 0..kMaxCount + 1 (the doorkeeper's bit counts as one).
  unsigned estimate(std::uint64_t hash) const noexcept {
    if (counters_.empty()) return 0;
    const std::uint64_t spread = remix(hash);
    const std::uint64_t* block = &counters_[(hash & block_mask_) * kBlockWords];
    unsigned count = kMaxCount;
    for (unsigned i = 0; i < kHashes; ++i) {
      const unsigned h = static_cast<unsigned>(spread >> (i * 8));
      const std::uint64_t word = block[2 * i + (h & 1)];
      count = std::min(count, static_cast<unsigned>((word >> (((h >> 1) & 15) * 4)) & 0xF));
    }
    return count + (door_contains(hash) ? 1 : 0);
  }

  // Halves every counter and clears the doorkeeper (called by increment every sample_size()).
  void age() noexcept {
    for (std::uint64_t& word : counters_) word = (word >> 1) & 0x7777'7777'7777'7777ull;
    std::fill(door_.begin(), door_.end(), 0);
    samples_ = 0;
  }

  void clear() {
    std::fill(counters_.begin(), counters_.end(), 0);
    std::fill(door_.begin(), door_.end(), 0);
    samples_ = 0;
  }

  // Entries the table is sized for.
  std::size_t capacity() const noexcept { return counters_.size(); }
  std::size_t sample_size() const noexcept { return sample_size_; }
  std::size_t memory_bytes() const noexcept {
    return (counters_.capacity() + door_.capacity()) * sizeof(std::uint64_t);
  }

 private:
  static constexpr std::size_t kMinCapacity = 64;
  static constexpr unsigned kBlockWords = 8;  // 64 bytes: one cache line per key
  static constexpr unsigned kHashes = 4;
  // Doorkeeper bits per entry of capacity. 8 measured best on the traces of
  // sample traces (make bench-hitratio) (16, 32 and 64 lost 0.3 points of average hit ratio: a
  // sparser doorkeeper lets more keys seen once into the contest with a frequency of one).
  static constexpr std::size_t kDoorBitsPerEntry = 8;
  // Sightings between two halvings, per entry of capacity: the TinyLFU paper's W/C = 10, which
  // lets a counter of 15 mean "seen about once per capacity-worth of requests" before aging.
  static constexpr std::size_t kSamplesPerEntry = 10;

  static std::uint64_t remix(std::uint64_t hash) noexcept {
    hash ^= hash >> 29;
    hash *= 0xBF58476D1CE4E5B9ull;
    return hash ^ (hash >> 32);
  }

  // Two bits of one doorkeeper word, from the hash's high half (the block used the low bits).
  std::uint64_t door_bits(std::uint64_t hash) const noexcept {
    return (std::uint64_t{1} << ((hash >> 32) & 63)) | (std::uint64_t{1} << ((hash >> 38) & 63));
  }
  std::size_t door_word(std::uint64_t hash) const noexcept { return (hash >> 44) & door_mask_; }
  bool door_contains(std::uint64_t hash) const noexcept {
    const std::uint64_t bits = door_bits(hash);
    return (door_[door_word(hash)] & bits) == bits;
  }
  // True when the key was already in the doorkeeper; sets its bits either way.
  bool door_test_and_set(std::uint64_t hash) noexcept {
    const std::uint64_t bits = door_bits(hash);
    std::uint64_t& word = door_[door_word(hash)];
    const bool present = (word & bits) == bits;
    word |= bits;
    return present;
  }

  void count_samples(std::size_t n) noexcept {
    samples_ += n;
    if (samples_ >= sample_size_) age();
  }

  std::vector<std::uint64_t> counters_;
  std::vector<std::uint64_t> door_;
  std::size_t block_mask_ = 0;
  std::size_t door_mask_ = 0;
  std::size_t sample_size_ = std::numeric_limits<std::size_t>::max();
  std::size_t samples_ = 0;
};

}  // namespace chronocache::detail
