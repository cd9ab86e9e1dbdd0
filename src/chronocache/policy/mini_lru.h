// MiniLru: an exact LRU cache of 32-bit fingerprints, small and allocation-free once sized, run as
// a shadow ("mini-simulation", C. Waldspurger et al., "Cache Modeling and Optimization using
// Miniature Simulations", USENIX ATC'17) over a hash-sampled subset of a real cache's keys.
//
// WTinyLfu feeds it every request for a sampled key and compares its hits with the real cache's
// hits on the same keys: when plain LRU would have served the sample clearly better, the
// frequency filter is hurting (a recency-skewed or zigzag workload) and the policy turns into an
// LRU-like one (see w_tinylfu.h). Sampling keeps the shadow small: for a capacity C and a shadow
// of M entries, keys are sampled at rate M / C and the shadow holds M of them, which models an
// LRU of C entries (SHARDS: spatial sampling preserves hit ratios, C. Waldspurger et al., FAST'15).
//
// Layout: entries in arrays indexed 1..capacity (0 is the list sentinel / null), a doubly linked
// recency list through prev/next, and a chained hash index (power-of-two heads, chain through
// hnext). One request is one hash lookup plus a few index writes; nothing is allocated after
// set_capacity.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace chronocache::detail {

class MiniLru {
 public:
  // Forgets everything and holds at most `capacity` fingerprints (>= 1).
  void set_capacity(std::size_t capacity) {
    capacity_ = static_cast<std::uint32_t>(capacity < 1 ? 1 : capacity);
    entries_.assign(capacity_ + 1, Entry{});
    heads_.assign(std::bit_ceil(std::size_t{2} * capacity_), 0);
    mask_ = static_cast<std::uint32_t>(heads_.size() - 1);
    size_ = 0;
  }

  // One request for `fingerprint`: true on a hit. The key becomes the most recent either way; a
  // miss on a full shadow evicts the least recent.
  bool access(std::uint32_t fingerprint) noexcept {
    if (entries_.empty()) return false;
    std::uint32_t& head = heads_[bucket(fingerprint)];
    for (std::uint32_t i = head; i != 0; i = entries_[i].hnext) {
      if (entries_[i].fingerprint == fingerprint) {
        unlink(i);
        push_front(i);
        return true;
      }
    }
    std::uint32_t slot;
    if (size_ < capacity_) {
      slot = ++size_;
    } else {
      slot = entries_[0].prev;  // the least recent
      unlink(slot);
      unindex(slot);
    }
    entries_[slot].fingerprint = fingerprint;
    entries_[slot].hnext = head;
    head = slot;
    push_front(slot);
    return false;
  }

  void clear() {
    if (!entries_.empty()) set_capacity(capacity_);
  }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t memory_bytes() const noexcept {
    return entries_.capacity() * sizeof(Entry) + heads_.capacity() * sizeof(std::uint32_t);
  }

 private:
  struct Entry {
    std::uint32_t fingerprint = 0;
    std::uint32_t prev = 0;  // towards the least recent; entries_[0] is the sentinel
    std::uint32_t next = 0;
    std::uint32_t hnext = 0;  // hash chain
  };

  std::uint32_t bucket(std::uint32_t fingerprint) const noexcept {
    return (fingerprint * 0x9E37'79B9u >> 8) & mask_;
  }
  void unlink(std::uint32_t i) noexcept {
    entries_[entries_[i].prev].next = entries_[i].next;
    entries_[entries_[i].next].prev = entries_[i].prev;
  }
  void push_front(std::uint32_t i) noexcept {
    entries_[i].prev = 0;
    entries_[i].next = entries_[0].next;
    entries_[entries_[0].next].prev = i;
    entries_[0].next = i;
  }
  void unindex(std::uint32_t i) noexcept {
    std::uint32_t* link = &heads_[bucket(entries_[i].fingerprint)];
    while (*link != i) link = &entries_[*link].hnext;
    *link = entries_[i].hnext;
  }

  std::vector<Entry> entries_;
  std::vector<std::uint32_t> heads_;
  std::uint32_t mask_ = 0;
  std::uint32_t capacity_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace chronocache::detail
