// The segment's layout: how SegmentedTable (segmented_table.h) lays out a segment's groups in
// memory, from the slot up. Pure layout: where each byte of a segment is and how to reach it,
// nothing about probing, growth or the directory.
//
//   segment: header │ control bytes: 16 a group, G groups [│ pad] │ body 0 │ ... │ body G-1
//            [│ meta column: 16 G policy words]
//   (pad: up to the next cache line, where a body is whole lines, as int -> int's 192 bytes)
//   body:    16 slots { key, value, deadline, policy meta (unless in column) }
//   (G = any count from 1 to 256, or the 256 and the rest of its last page; the column only
//   for MetaColumn tables, while switched on). Group g is control bytes g and body g (Group).
//
// Keys stored as quotients (a QuotientHash such as CompactIntHash, base/compact_int_hash.h): a
// body holds 16 quotients │ 16 slots { value, deadline, meta }, and the key is whatever its
// quotient, its tag and its segment's hash prefix give back (SegmentedTable::key_of).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "chronocache/base/assert.h"
#include "chronocache/base/compact_int_hash.h"
#include "chronocache/expiry/deadline.h"
#include "chronocache/table/control_group.h"

namespace chronocache::detail {

// A table whose Meta is MetaColumn<W> keeps each slot's policy word of type W out of the slot, in
// a column after the segment's groups, and only while the owner has it switched on
// (set_meta_column): a host that chooses its policy at run time pays for the word only while the
// chosen policy has one (the server's default, no eviction, has none: 4 bytes a key saved).
template <class W>
struct MetaColumn {
  using Word = W;
};
template <class Meta>
struct MetaLayout {
  static constexpr bool kColumn = false;
  using Word = Meta;    // what the owner reads and writes for an entry
  using InSlot = Meta;  // what the slot itself holds
};
template <class W>
struct MetaLayout<MetaColumn<W>> {
  static constexpr bool kColumn = true;
  using Word = W;
  struct InSlot {};
};

template <class K, class V, class Meta>
struct Slot {
  K key;
  [[no_unique_address]] V value;  // an empty V (a set, or records that carry their value) costs 0
  StoredDeadline deadline;
  [[no_unique_address]] typename MetaLayout<Meta>::InSlot meta;
};
// A table whose hash stores quotients (QuotientHash) keeps them in the group's key column.
template <class V, class Meta>
struct KeylessSlot {
  [[no_unique_address]] V value;
  StoredDeadline deadline;
  [[no_unique_address]] typename MetaLayout<Meta>::InSlot meta;
};

struct NoKeyColumn {};
// A group's stored quotients, lane by lane, before its slots: a probe whose tag matched compares
// them without reading a slot (int -> int: 32 bytes and 16 slots of 8).
template <class Q>
struct KeyColumn {
  Q quotient[kGroupWidth];
};

// Slot n's byte offset in an array of slots, as a 32-bit multiple of the largest power of two
// (up to 8) dividing the slot size, times that power: the multiply's 32-bit result needs no
// widening, and the power becomes the x86 address's scale (n * 3, then [base + 4 * that] for a
// 12-byte slot). Written as n * sizeof, GCC spent one more instruction per probe (callgrind:
// getHit 52 -> 51).
template <class SlotT>
CC_ALWAYS_INLINE std::size_t slot_offset(std::size_t n) noexcept {
  constexpr std::uint32_t kScale = sizeof(SlotT) % 8 == 0   ? 8
                                   : sizeof(SlotT) % 4 == 0 ? 4
                                   : sizeof(SlotT) % 2 == 0 ? 2
                                                            : 1;
  const std::uint32_t units =
      static_cast<std::uint32_t>(n) * static_cast<std::uint32_t>(sizeof(SlotT) / kScale);
  return std::size_t{units} * kScale;
}

// What a group holds besides its control bytes: the key column (quotient keys) and 16 slots.
template <class SlotT, class Keys = NoKeyColumn>
struct alignas(16) GroupBody {
  [[no_unique_address]] Keys keys;
  alignas(SlotT) unsigned char storage[kGroupWidth * sizeof(SlotT)];

  void* raw_slot(std::size_t lane) noexcept { return storage + slot_offset<SlotT>(lane); }
};

// A group of 16 slots: its 16 control bytes, which lie with every other group's at the front
// of the segment, and its body, in the segment's back part. Kept apart, a
// large table's control bytes take 1/13 of its memory (int -> int), so a probe that reads only
// them (a miss, a new key) finds them in the last-level cache (10 M entries: 12 MiB of them);
// inside each group, every such probe was a miss to memory. The body's address is computed
// when a slot is asked for, so a probe that ends at the control bytes does not spend it.
template <class SlotT, class Keys = NoKeyColumn>
struct Group {
  using Body = GroupBody<SlotT, Keys>;
  Ctrl* ctrl;
  Body* bodies;       // the segment's
  std::size_t first;  // the segment's slot index of lane 0: g * 16, a control byte a slot

  std::size_t g() const noexcept { return first / kGroupWidth; }
  // Lane `lane`'s slot index in the segment (g * 16 + lane), from `first` as the slot's address
  // is: GCC then computes it once (g * 16 + lane beside it cost putSingle 2 instructions).
  CC_ALWAYS_INLINE std::uint32_t index_of(std::size_t lane) const noexcept {
    return static_cast<std::uint32_t>(first + lane);
  }
  // From `first`, as the control bytes' address is (a body's size is a multiple of 16).
  CC_ALWAYS_INLINE Body* body() const noexcept {
    return reinterpret_cast<Body*>(reinterpret_cast<unsigned char*>(bodies) +
                                   first * (sizeof(Body) / kGroupWidth));
  }
  SlotT* slot(std::size_t lane) const noexcept {
    return std::launder(static_cast<SlotT*>(raw_slot(lane)));
  }
  // Without a key column the bodies are one array of slots, and the slot's address is the
  // segment's slot index (g * 16 + lane, which the caller has at hand) scaled: 3 instructions a
  // lookup fewer than the body's address and then the lane's (callgrind, getHit 46 -> 43).
  CC_ALWAYS_INLINE void* raw_slot(std::size_t lane) const noexcept {
    if constexpr (std::is_empty_v<Keys>) {
      static_assert(sizeof(Body) == kGroupWidth * sizeof(SlotT), "bodies are an array of slots");
      return reinterpret_cast<unsigned char*>(bodies) + slot_offset<SlotT>(first + lane);
    } else {
      return body()->raw_slot(lane);
    }
  }
  // slot(lane), for a lookup that also hands out the lane's index (index_of(lane)): an array of
  // slots is addressed from that index, so GCC computes g * 16 + lane once (callgrind: getHit
  // 43 -> 42, putSingle 54 -> 52); bodies with a key column from the lane. Growth's moves keep
  // slot(lane): this form cost their loops 5-8 % more instructions.
  CC_ALWAYS_INLINE SlotT* slot_at(std::uint32_t index, std::size_t lane) const noexcept {
    if constexpr (std::is_empty_v<Keys>)
      return std::launder(static_cast<SlotT*>(static_cast<void*>(
          reinterpret_cast<unsigned char*>(bodies) + slot_offset<SlotT>(index))));
    else
      return slot(lane);
  }
  Keys& keys() const noexcept { return body()->keys; }

  // Group g of a segment whose control bytes and bodies start at `ctrl` and `bodies`.
  // Both addresses come from g * 16, which GCC then computes once.
  CC_ALWAYS_INLINE static Group at(Ctrl* ctrl, Body* bodies, std::size_t g) noexcept {
    const std::size_t first = g * kGroupWidth;
    return Group{ctrl + first, bodies, first};
  }
};

// The layout is drawn at the top of this file.
template <class SlotT, class Keys = NoKeyColumn>
struct Segment {
  using GroupT = Group<SlotT, Keys>;
  using BodyT = GroupBody<SlotT, Keys>;
  static constexpr std::size_t kHeaderBytes = 16;
  // What a group takes: its control bytes and its body (without a meta column).
  static constexpr std::size_t kGroupBytes = kGroupWidth + sizeof(BodyT);
  // Bodies whose size is a whole number of cache lines start on a line (the control bytes' area
  // padded to the next one; a segment starts on a line), so a lookup's prefetch of the home body
  // asks for sizeof(BodyT) / 64 lines, not one more (int -> int: 3 lines of 64, not 4).
  static constexpr std::size_t kCacheLine = 64;
  static constexpr bool kLineBodies = sizeof(BodyT) % kCacheLine == 0;
  // The bytes of a segment besides its groups: the header and room for the worst padding, so
  // that every segment of G groups takes kFixedBytes + G * kGroupBytes whatever G is.
  static constexpr std::size_t kFixedBytes =
      kHeaderBytes + (kLineBodies ? kCacheLine - kGroupWidth : 0);
  // From the control bytes to the bodies.
  static constexpr std::size_t bodies_offset(std::size_t groups) noexcept {
    const std::size_t ctrl = groups * kGroupWidth;
    if constexpr (!kLineBodies) return ctrl;
    return (kHeaderBytes + ctrl + kCacheLine - 1) / kCacheLine * kCacheLine - kHeaderBytes;
  }

  std::uint16_t group_total;  // any count from 1 (the home group is a fraction of the hash)
  std::uint16_t prefix;       // its keys' top QuotientHash::kPrefixBits hash bits (quotient keys)
  std::uint32_t size;         // full slots
  std::uint32_t growth_left;  // empty slots an insert may still claim before the load limit
  std::uint16_t index;        // position in the table's segment list: SlotId's high half
  std::uint8_t local_depth;   // hash bits shared by every key in this segment
  std::uint8_t generation;    // bumped (mod 256) whenever entries move: a scan cursor's check

  std::uint32_t group_count() const noexcept { return group_total; }
  std::uint32_t capacity() const noexcept { return group_count() * kGroupWidth; }
  // Every group's control bytes, group by group (16-byte aligned).
  Ctrl* ctrl_bytes() noexcept {
    return reinterpret_cast<Ctrl*>(reinterpret_cast<unsigned char*>(this) + kHeaderBytes);
  }
  // The segment whose control bytes start at `ctrl` (what a Ref and a directory entry hold).
  static Segment* of_ctrl(Ctrl* ctrl) noexcept {
    return reinterpret_cast<Segment*>(reinterpret_cast<unsigned char*>(ctrl) - kHeaderBytes);
  }
  BodyT* bodies() noexcept {
    return reinterpret_cast<BodyT*>(ctrl_bytes() + bodies_offset(group_total));
  }
  GroupT group(std::size_t g) noexcept { return GroupT::at(ctrl_bytes(), bodies(), g); }
  // `column_word` bytes per slot follow the bodies when the table keeps a meta column.
  static constexpr std::size_t bytes_for(std::uint32_t groups,
                                         std::size_t column_word = 0) noexcept {
    return kFixedBytes + std::size_t{groups} * (kGroupBytes + kGroupWidth * column_word);
  }
  // The meta column, right after the last body (16-byte aligned, as bodies are).
  template <class Word>
  Word* column() noexcept {
    return reinterpret_cast<Word*>(bodies() + group_total);
  }
};

// Where a table keeps its keys: whole in each slot, or (QuotientHash) as quotients in each
// group's key column, in segments at least kMinDepth deep, whose prefix gives back the hash bits
// the quotient leaves out.
template <class Hash>
struct KeyStorage {
  using Column = NoKeyColumn;
  static constexpr unsigned kMinDepth = 1;
};
template <QuotientHash Hash>
struct KeyStorage<Hash> {
  using Column = KeyColumn<typename Hash::Quotient>;
  static constexpr unsigned kMinDepth = Hash::kPrefixBits;
};

}  // namespace chronocache::detail
