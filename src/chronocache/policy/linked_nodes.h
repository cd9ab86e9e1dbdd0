// LinkedNodes: doubly linked lists of entries, addressed by 32-bit handles (Lru and Lfu share it).
//
// Handles 0..list_count-1 are the lists' sentinels; entries get handles after them, recycled
// through a free list. Nodes live in 4096-node chunks, so a large pool grows without copying and
// a handle stays valid until released. The first chunk starts small (the sentinels and a few
// nodes) and doubles, moving its nodes, until it is whole: an empty policy took a whole 64 KiB
// chunk, which cost each of the server's 16 databases that much under any ordered eviction
// policy, keys or not. A handle is what stays valid: a Node& does not outlive an allocate().
// A node records its entry's SlotId (kept current by the policy's on_move) and one spare word
// the policy may use.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "chronocache/base/assert.h"
#include "chronocache/base/slot_id.h"

namespace chronocache::detail {

class LinkedNodes {
 public:
  using Handle = std::uint32_t;
  struct Node {
    Handle prev;
    Handle next;
    SlotId slot;
    std::uint32_t aux;  // policy-defined (Lfu: the access count)
  };

  explicit LinkedNodes(std::uint32_t list_count) : list_count_(list_count) { clear(); }

  Node& operator[](Handle h) noexcept { return chunks_[h >> kChunkBits][h & kChunkMask]; }
  const Node& operator[](Handle h) const noexcept {
    return chunks_[h >> kChunkBits][h & kChunkMask];
  }

  Handle allocate(SlotId slot, std::uint32_t aux = 0) {
    Handle h;
    if (free_head_ != kNone) {
      h = free_head_;
      free_head_ = (*this)[h].next;
    } else {
      CC_CHECK(used_ < kNone, "more than 2^32 - 1 policy nodes");
      h = used_++;
      if (h == capacity_) grow();
    }
    (*this)[h] = Node{h, h, slot, aux};
    return h;
  }

  // Precondition: the node is unlinked.
  void release(Handle h) noexcept {
    (*this)[h].next = free_head_;
    free_head_ = h;
  }

  void push_front(std::uint32_t list, Handle h) noexcept {
    Node& head = (*this)[list];
    Node& node = (*this)[h];
    node.prev = list;
    node.next = head.next;
    (*this)[head.next].prev = h;
    head.next = h;
  }

  // Moves a linked node to the front of `list` (which may be the list it is in).
  void move_to_front(std::uint32_t list, Handle h) noexcept {
    unlink(h);
    push_front(list, h);
  }

  void unlink(Handle h) noexcept {
    Node& node = (*this)[h];
    (*this)[node.prev].next = node.next;
    (*this)[node.next].prev = node.prev;
  }

  bool empty(std::uint32_t list) const noexcept { return (*this)[list].next == list; }
  // Precondition: !empty(list). The least recently pushed node.
  Handle back(std::uint32_t list) const noexcept { return (*this)[list].prev; }
  // Precondition: !empty(list). The most recently pushed node.
  Handle front(std::uint32_t list) const noexcept { return (*this)[list].next; }
  // Whether `h` names one of the lists' sentinels (a walk along prev/next reached a list's end).
  bool is_sentinel(Handle h) const noexcept { return h < list_count_; }

  void clear() {
    CC_CHECK(list_count_ <= kChunkSize, "sentinels must fit the first chunk");
    chunks_.clear();
    capacity_ = first_chunk_size(list_count_);
    chunks_.push_back(std::make_unique<Node[]>(capacity_));
    for (Handle list = 0; list < list_count_; ++list) (*this)[list] = Node{list, list, 0, 0};
    used_ = list_count_;
    free_head_ = kNone;
  }

  std::size_t memory_bytes() const noexcept {
    return capacity_ * sizeof(Node) + chunks_.capacity() * sizeof(void*);
  }
  // What memory_bytes() gains at the next allocate(): when no node is free, the first chunk's
  // doubling or a new chunk, and the chunk list's growth when it is at capacity (std::vector at
  // least doubles).
  std::size_t growth_bytes_if_allocated() const noexcept {
    if (free_head_ != kNone || used_ < capacity_) return 0;
    if (capacity_ < kChunkSize) return capacity_ * sizeof(Node);
    return kChunkSize * sizeof(Node) +
           (chunks_.size() == chunks_.capacity() ? chunks_.capacity() * sizeof(void*) : 0);
  }

 private:
  static constexpr std::uint32_t kFirstChunkAtLeast = 16;
  static std::uint32_t first_chunk_size(std::uint32_t sentinels) noexcept {
    std::uint32_t size = kFirstChunkAtLeast;
    while (size < sentinels + kFirstChunkAtLeast && size < kChunkSize) size *= 2;
    return size;
  }
  // Room for node capacity_: the first chunk doubles until whole, then whole chunks follow.
  [[gnu::noinline]] void grow() {
    if (capacity_ < kChunkSize) {
      const std::size_t doubled = capacity_ * 2;
      auto moved = std::make_unique<Node[]>(doubled);
      std::copy_n(chunks_[0].get(), capacity_, moved.get());
      chunks_[0] = std::move(moved);
      capacity_ = doubled;
    } else {
      chunks_.push_back(std::make_unique<Node[]>(kChunkSize));
      capacity_ += kChunkSize;
    }
  }

  static constexpr unsigned kChunkBits = 12;
  static constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr std::uint32_t kChunkMask = kChunkSize - 1;
  static constexpr Handle kNone = 0xFFFFFFFFu;

  std::vector<std::unique_ptr<Node[]>> chunks_;
  std::uint32_t list_count_;
  Handle used_ = 0;
  std::size_t capacity_ = 0;  // nodes the chunks hold
  Handle free_head_ = kNone;
};

}  // namespace chronocache::detail
