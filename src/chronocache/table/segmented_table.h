// SegmentedTable: the engine's hash table. Open addressing with SIMD-probed control bytes inside
// small segments, and extendible hashing across segments, so the table grows one segment at a
// time and never holds two copies of itself.
//
//   directory (2^depth pointers, depth >= 1, indexed by the hash's top `depth` bits)
//   ┌────┬────┬────┬────┐
//   │ s0 │ s0 │ s1 │ s2 │      s0 has local depth 1: it owns every index starting with bit 0
//   └─┬──┴─┬──┴─┬──┴─┬──┘
//     └────┘    │    │
//   segment: header │ control bytes of G groups │ their bodies of 16 slots   (segment_layout.h)
//
// Keys stored as quotients (a QuotientHash such as CompactIntHash, base/compact_int_hash.h): each
// body keeps its 16 quotients beside its slots, and key_of rebuilds a key from its quotient, its
// tag and its segment's hash prefix. Such a table starts at the depth the prefix needs (512
// segments), and is sized for memory: segments of up to 1024 groups grow by a tenth at 15/16 full
// (a page is then at most 1/44 of a segment, and the load stays above ~0.84 where a fifth let it
// fall to 0.78), at 10 moves an insert instead of 4.
//
// Lookup: hash once; the top bits pick the segment, bits 0..31 (as a fraction of G) the home
// group, bits 0..7 the tag (0..6 for quotient keys). A probe compares the tag against the group's
// 16 control bytes in one SSE2 instruction, checks the keys of the matching lanes, and moves to the
// next group (linearly, wrapping inside the segment) only while the group has no empty slot. A
// probe that matches no tag (a miss, a new key) reads the control bytes alone, and those of a large
// table fit the last-level cache (1/13 of its bytes for int -> int).
//
// Growth, per segment, when an insert needs an empty slot and the segment is at its load limit
// (31/32 full; 15/16 for quotient keys):
//   * many tombstones (no more entries than its fitted size holds): a clean rebuild at that size;
//   * smaller than kMaxGroups: rebuild with a quarter more groups (small tables start with one);
//   * otherwise split: its entries go to two fresh segments by the next hash bit, each fitted to
//     its share, and the directory doubles if the segment's local depth had reached the
//     directory's.
// A fitted segment is 0.775 full, so the load stays between 0.775 and 0.97 and averages 0.87
// over a growing fill (doubling at 7/8 left it between 0.44 and 0.875); 0.85 to 0.94 for
// quotient keys, which grow by a tenth (Sizing, below). Peak memory during growth is the table plus
// two segments
// (~105 KiB for int -> int; ~350 KiB with quotient keys' larger segments), not two tables.
// Each rebuild and split moves entries; the caller's on_move(slot, new_id) hears of every move
// so eviction policies can follow their entries.
//
// Memory: a segment of 16 KiB or more lives in a reservation of the table's own ReservationPool
// (memory/reservation_pool.h), in whole pages, every group its pages hold in use; smaller ones
// come from operator new. A growing table frees a segment for each it takes, at sizes no other
// segment needs yet; in the heap those freed blocks piled up (19 % of RSS at 10 M entries), in
// the pool any reservation serves any size. A pooled segment of relocatable slots is rebuilt,
// and keeps a split's lower half, in its own reservation (staged, then copied back), so growth
// maps only the pages it adds. memory_bytes() counts the pooled segments' pages.
//
// Erase marks a slot empty when its group still has an empty slot (no probe ever passed through
// it) and a tombstone otherwise, so lookups for keys displaced past that group still find them.
// A segment left below half full is rebuilt at its fitted size when its owner asks (shrink), and
// one left loose by a mass delete 0.86 full.
//
// Invariants: every segment keeps floor(capacity/32) slots empty, at least one (capacity/16 with
// quotient keys), so every probe terminates;
// segments_[i]->index == i; the directory range of a segment with local depth L is the
// 2^(depth-L) consecutive entries that share its L-bit prefix.
//
// Invalidation: insert_absent and reserve may move any entry of the segment they grow (Refs and
// slot pointers into it die); erase_at invalidates only the erased Ref. Nothing else moves entries.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "chronocache/base/assert.h"
#include "chronocache/base/compact_int_hash.h"
#include "chronocache/base/hash.h"
#include "chronocache/base/slot_id.h"
#include "chronocache/base/trivially_relocatable.h"
#include "chronocache/expiry/deadline.h"
#include "chronocache/memory/reservation_pool.h"
#include "chronocache/memory/scratch_buffers.h"
#include "chronocache/table/control_group.h"
#include "chronocache/table/segment_layout.h"

namespace chronocache::detail {

struct SweepProgress {
  std::size_t examined = 0;  // slots looked at
  bool wrapped = false;      // the cursor passed the end: every entry has been visited once
};

template <class K, class V, class Meta, class Hash, class Eq>
class SegmentedTable {
 public:
  // Keys stored as their hash's quotient (CompactIntHash), in a column of each group, or whole
  // in the slot.
  static constexpr bool kQuotientKeys = QuotientHash<Hash>;
  using SlotType = std::conditional_t<kQuotientKeys, KeylessSlot<V, Meta>, Slot<K, V, Meta>>;
  using KeysType = typename KeyStorage<Hash>::Column;
  using SegmentType = Segment<SlotType, KeysType>;
  using GroupType = Group<SlotType, KeysType>;
  using BodyType = GroupBody<SlotType, KeysType>;
  // An entry's policy word: in its slot, or in its segment's meta column (MetaColumn<W>).
  using MetaWord = typename MetaLayout<Meta>::Word;
  static constexpr bool kMetaColumn = MetaLayout<Meta>::kColumn;

  // 256 groups = 4096 slots: an int -> int segment is 52 KiB, so a split works inside L2.
  // Quotient keys: 1024 groups (176 KiB for int -> int), so that a page is 1/44 of a full
  // segment and growth rounded to whole pages stays near a tenth (with 256, a segment of 7 or 8
  // pages could only grow by an eighth: 10 M entries took 130 MiB instead of 122).
  static constexpr std::uint32_t kMaxGroups = kQuotientKeys ? 1024 : 256;
  static constexpr std::size_t kMaxSegments = std::size_t{1} << (32 - kSlotIdSlotBits);
  // 65 536 segments need 16 bits of directory under a uniform hash; 4 more absorb skew. Bounds
  // the directory at 2^20 entries (16 MiB) whatever keys arrive.
  static constexpr unsigned kMaxDepth = 20;
  static constexpr unsigned kMinDepth = KeyStorage<Hash>::kMinDepth;
  // A segment that cannot split may grow to every slot a SlotId can name.
  static constexpr std::uint32_t kMaxOversizeGroups = (1u << kSlotIdSlotBits) / kGroupWidth;
  static_assert(kMaxGroups * kGroupWidth <= (1u << kSlotIdSlotBits), "slot index must fit SlotId");
  static constexpr std::uint32_t kNoFreeSlot = ~std::uint32_t{0};  // no slot index is this
  // The entries a segment of `capacity` slots holds at its load limit (Sizing, below), which
  // keeps at least one slot empty so that every probe ends.
  static constexpr std::uint32_t max_growth(std::uint32_t capacity) noexcept {
    return capacity - std::max(1u, capacity / kSpareDivisor);
  }
  static_assert(SegmentType::kHeaderBytes >= sizeof(SegmentType) &&
                    SegmentType::kHeaderBytes % alignof(typename SegmentType::BodyT) == 0 &&
                    alignof(typename SegmentType::BodyT) == kGroupWidth,
                "control bytes start right after the segment header, and bodies after them, "
                "aligned");

  // A found or inserted entry. Valid until the next insert_absent/reserve/clear or its erase.
  struct Ref {
    SlotType* slot = nullptr;
    // The segment's control bytes, its header just before them (null in a Ref{}, which names
    // no slot): the directory entry's pointer as a probe has it, so a hit computes no header
    // address for a rare path to use (callgrind, putSingle 1 instruction).
    Ctrl* ctrl = nullptr;
    std::uint32_t index = 0;  // group * 16 + lane

    explicit operator bool() const noexcept { return slot != nullptr; }
    SegmentType* segment() const noexcept { return SegmentType::of_ctrl(ctrl); }
    SlotId id() const noexcept { return make_slot_id(segment()->index, index); }
  };

  explicit SegmentedTable(const Hash& hash = Hash(), const Eq& eq = Eq()) : hash_(hash), eq_(eq) {
    reset();
  }
  ~SegmentedTable() { destroy_all(); }
  SegmentedTable(const SegmentedTable&) = delete;
  SegmentedTable& operator=(const SegmentedTable&) = delete;

  // Always inline: GCC left CompactIntHash's call out of line (getHit 57 -> 60 without it).
  CC_ALWAYS_INLINE std::uint64_t hash(const auto& key) const noexcept { return hash_(key); }
  const Hash& hash_function() const noexcept { return hash_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t segment_count() const noexcept { return segments_.size(); }
  // Slots in all segments, full or not: what one sweep cycle examines. O(1), derived from the
  // segment bytes (every segment is kFixedBytes plus whole groups), so no counter needs upkeep.
  std::size_t capacity() const noexcept {
    return (segment_bytes_ - SegmentType::kFixedBytes * segments_.size()) /
           (SegmentType::kGroupBytes + kGroupWidth * column_word_bytes()) * kGroupWidth;
  }
  unsigned depth() const noexcept { return depth_; }

  // Bytes this table holds: segments (whole pages for those in its own reservations), directory
  // and segment list (not what keys own on the heap, nor its allocators' spare memory).
  std::size_t memory_bytes() const noexcept {
    return segment_bytes_ - pooled_segment_bytes_ + pool_.block_page_bytes() +
           directory_.capacity() * sizeof(DirectoryEntry) +
           segments_.capacity() * sizeof(SegmentType*);
  }
  // The pooled segments' pages (part of memory_bytes(), outside the heap), now and at the peak;
  // and what the pool adds to RSS: those and the slack it keeps for reuse (as a heap keeps
  // freed blocks).
  std::size_t mapped_bytes() const noexcept { return pool_.block_page_bytes(); }
  std::size_t peak_mapped_bytes() const noexcept { return pool_.peak_block_page_bytes(); }
  std::size_t mapped_resident_bytes() const noexcept { return pool_.resident_bytes(); }

  // The policy word of a found or inserted entry. With a meta column switched off, a scratch word
  // the owner may read and write but that means nothing (its policy keeps no word).
  CC_ALWAYS_INLINE MetaWord& meta(const Ref& ref) const noexcept {
    return word_at(ref.segment(), ref.index, *ref.slot);
  }

  // ---- The meta column (tables whose Meta is MetaColumn<W>) -----------------------------------
  bool meta_column() const noexcept { return kMetaColumn && column_on_; }
  // Gives every segment a meta column, its words value-initialised, or takes it away. Every entry
  // keeps its SlotId (each segment is copied with the same groups, lane for lane), so policies,
  // scan cursors, the sweep and a running capture all stay valid. O(n); Refs die. Peak memory is
  // the table plus one segment. noexcept: out of memory halfway, segments of both layouts would
  // remain, so the process stops (std::terminate) rather than go on with a broken table.
  void set_meta_column(bool on) noexcept requires kMetaColumn {
    if (on == column_on_) return;
    const std::size_t old_word = column_word_bytes();
    column_on_ = on;
    for (std::size_t first = 0; first < directory_.size();) {
      SegmentType* seg = directory_[first].segment();
      const std::size_t count = std::size_t{1} << (depth_ - seg->local_depth);
      SegmentType* fresh = allocate(seg->group_count(), seg->size, seg->index, seg->local_depth,
                                    seg->prefix, seg->generation, Fit::kExact);
      fresh->size = seg->size;
      fresh->growth_left = seg->growth_left;
      for (std::uint32_t g = 0; g < seg->group_count(); ++g) {
        const GroupType from = seg->group(g);
        const GroupType to = fresh->group(g);
        std::memcpy(to.ctrl, from.ctrl, kGroupWidth);
        to.keys() = from.keys();
        for (std::size_t lane : GroupCtrl(from.ctrl).match_full()) {
          ::new (to.raw_slot(lane)) SlotType(std::move(*from.slot(lane)));
          std::destroy_at(from.slot(lane));
        }
      }
      if (on)
        std::uninitialized_value_construct_n(fresh->template column<MetaWord>(), fresh->capacity());
      release(seg, old_word);
      segments_[fresh->index] = fresh;
      point_directory(first, count, fresh);
      first += count;
    }
  }

  // Where insert_absent would put a key of hash `h` now: slot `index` (group * 16 + lane) of
  // a segment, or `grows` when that segment must grow first (then its entries move).
  struct InsertTarget {
    Ctrl* ctrl;  // the segment's control bytes, as in Ref
    std::uint32_t index;
    bool grows;

    SegmentType* segment() const noexcept { return SegmentType::of_ctrl(ctrl); }
  };

  template <class Q>
  CC_ALWAYS_INLINE Ref find(const Q& key, std::uint64_t h) const noexcept {
    // The directory entry carries the segment's addresses and group count, so the probe's first
    // load does not wait for the segment header: directory -> control bytes -> key is the whole
    // dependent chain, and in a table of one segment, control bytes -> key (entry_for).
    // [[likely]] lays the one-segment path straight through: a larger table's lookup waits on
    // memory and does not notice the jump (engine_bench: GetMiss 1.44 -> 1.23 ns, getHit and
    // getRandomKeys within 4 %, getRandomKeys_10M unchanged).
    DirectoryEntry entry = sole_;
    // The group handle alone, not g beside it: its `first` is g * 16, which a found slot's index
    // starts from, and the rare probe past the home group takes g back from it (callgrind,
    // GetMiss 36 -> 35 instructions: g no longer held in a register).
    GroupType group;
    if (one_segment()) [[likely]] {
      group = entry.group(home_group(h, entry.groups));
    } else {
      // Only a table larger than one segment (53 KiB for int -> int) may miss the cache: it
      // asks for the body's lines while the control bytes load (prefetch_slot_lines says why),
      // instructions that a table of one segment does not spend. Each branch computes its
      // group: tested twice instead, GCC kept both tests (getHit 43 -> 44 instructions).
      // The prefetch waits on a tag match, which the CPU predicts before the control bytes
      // arrive: where lookups hit, it runs ahead as if unconditional; where they miss, no body
      // line is asked for, and a miss reads the control bytes alone (as boost's find does with
      // its element array). Unconditional, the body's three or four lines made a 10 M-entry
      // table's miss 32 ns instead of 20 (bm_GetMiss_10M).
      entry = directory_[directory_index(h)];
      group = entry.group(home_group(h, entry.groups));
      if (tag_matches(GroupCtrl(group.ctrl), h)) prefetch_slot_lines(group);
    }
    for (;;) {
      const GroupCtrl ctrl(group.ctrl);
      for (std::size_t lane : tag_matches(ctrl, h)) {
        const std::uint32_t index = group.index_of(lane);
        SlotType* slot = group.slot_at(index, lane);
        if (holds(group, lane, *slot, key, h)) [[likely]] {
          // A quotient match reads no slot, so GCC could not tell the Ref from a miss without
          // testing it again: 2 instructions a hit (callgrind, getHit with CompactIntHash, 59
          // -> 57). A compared key proves it by the read.
          if (slot == nullptr) __builtin_unreachable();
          return Ref{slot, entry.ctrl, index};
        }
      }
      if (ctrl.match_empty()) [[likely]]
        return Ref{};
      group = entry.group(next_group(group.g(), entry.groups));
    }
  }

  // find, and on a miss also where insert_absent would put the key: the first free slot the
  // probe passed, which it reads anyway, as a Ref without a slot (its segment and index name the
  // free slot; false, as any miss). A put of a new key then probes once, not twice (insert_at).
  template <class Q>
  CC_ALWAYS_INLINE Ref find_for_insert(const Q& key, std::uint64_t h) noexcept {
    const DirectoryEntry entry = entry_for(h);
    // The home group first, where nearly every probe ends: what a longer probe keeps track of
    // (the first free slot it passed) then costs the others nothing (putSingle: 81 -> 78
    // instructions; a lambda for the key match below cost 38 more, callgrind).
    GroupType group = entry.group(home_group(h, entry.groups));
    GroupCtrl ctrl(group.ctrl);
    for (std::size_t lane : tag_matches(ctrl, h)) {
      const std::uint32_t index = group.index_of(lane);
      SlotType* slot = group.slot_at(index, lane);
      if (holds(group, lane, *slot, key, h)) [[likely]]
        return Ref{slot, entry.ctrl, index};
    }
    // A miss that ends in its home group, as nearly all do, names that group's first free slot
    // without the longer probe's bookkeeping (bm_putStress 3-5 % faster, alternating rounds).
    if (ctrl.match_empty()) [[likely]]
      return Ref{nullptr, entry.ctrl, group.index_of(ctrl.match_empty_or_deleted().lowest())};
    std::uint32_t free_index = kNoFreeSlot;
    for (;;) {
      if (free_index == kNoFreeSlot) {
        const LaneMask free = ctrl.match_empty_or_deleted();
        if (free) free_index = group.index_of(free.lowest());
      }
      if (ctrl.match_empty()) return Ref{nullptr, entry.ctrl, free_index};
      group = entry.group(next_group(group.g(), entry.groups));
      ctrl = GroupCtrl(group.ctrl);
      for (std::size_t lane : tag_matches(ctrl, h)) {
        SlotType* slot = group.slot(lane);
        if (holds(group, lane, *slot, key, h)) return Ref{slot, entry.ctrl, group.index_of(lane)};
      }
    }
  }

  // Starts loading the home group of hash `h` (control bytes and slots) into the cache, so that
  // a caller who knows several upcoming keys overlaps their cache misses. Changes nothing.
  void prefetch(std::uint64_t h) const noexcept {
    const DirectoryEntry entry = entry_for(h);
    const GroupType group = entry.group(home_group(h, entry.groups));
    __builtin_prefetch(group.ctrl);
    prefetch_slot_lines(group);
  }

  // Calls fn(const Ref&) for each entry of the home group whose tag matches `h`: the
  // candidates a lookup will compare, for a caller that prefetches what their keys point to.
  template <class Fn>
  void for_each_candidate(std::uint64_t h, Fn&& fn) const {
    const DirectoryEntry entry = entry_for(h);
    const std::size_t g = home_group(h, entry.groups);
    const GroupType group = entry.group(g);
    for (std::size_t lane : tag_matches(GroupCtrl(group.ctrl), h)) fn(ref_of(group, lane));
  }

  // An entry's key: the stored one, or (quotient keys) the one its quotient, tag and segment
  // give back, by value.
  decltype(auto) key_of(const Ref& ref) const noexcept {
    if constexpr (kQuotientKeys)
      return Hash::key_of(entry_hash(ref));
    else
      return std::as_const(ref.slot->key);
  }
  // hash(key_of(ref)), which quotient keys give without hashing anything.
  std::uint64_t entry_hash(const Ref& ref) const noexcept {
    return entry_hash(ref.segment(), ref.index / kGroupWidth, ref.index % kGroupWidth);
  }

  // The group count comes from the directory entry, as in find: the segment's header (a line of
  // its own, seldom in the cache in a large table) is then read only for growth_left, which no
  // address waits for.
  InsertTarget insert_target(std::uint64_t h) const noexcept {
    const DirectoryEntry entry = entry_for(h);
    SegmentType* seg = entry.segment();
    const std::uint32_t groups = entry.groups;
    std::size_t g = home_group(h, groups);
    for (;;) {
      const LaneMask free = GroupCtrl(entry.group(g).ctrl).match_empty_or_deleted();
      if (free) return target_at(seg, slot_index(g, free.lowest()));
      g = next_group(g, groups);
    }
  }

  // Inserts a key the caller knows is absent; may grow the key's segment first. Its policy word
  // starts value-initialised. on_move(SlotType&, MetaWord&, SlotId) is called for every entry
  // that growth relocates.
  template <class Q, class VArg, class OnMove>
  Ref insert_absent(Q&& key, VArg&& value, std::uint64_t h, StoredDeadline deadline,
                    OnMove&& on_move) {
    for (;;) {
      const InsertTarget target = insert_target(h);
      if (target.grows) {  // at the load limit: grow first
        grow(target.segment(), h, on_move);
        continue;
      }
      return place_new(target, std::forward<Q>(key), std::forward<VArg>(value), h, deadline);
    }
  }

  // insert_absent at the free slot a miss of find_for_insert named, when nothing has been
  // inserted or erased since (an erase may shrink the segment). Without one (a Ref{}), or when
  // the segment must grow first, target_after_growth finds the slot, growing as insert_absent
  // does. on_move is copied into that call: a closure keeps what it records behind references.
  template <class Q, class VArg, class OnMove>
  CC_ALWAYS_INLINE Ref insert_at(const Ref& miss, Q&& key, VArg&& value, std::uint64_t h,
                                 StoredDeadline deadline, OnMove&& on_move) {
    CC_ASSERT(!miss);
    const InsertTarget target = miss.ctrl != nullptr && miss.segment()->growth_left != 0
                                    ? InsertTarget{miss.ctrl, miss.index, false}
                                    : target_after_growth(miss.ctrl, miss.index, h, on_move);
    return place_new(target, std::forward<Q>(key), std::forward<VArg>(value), h, deadline);
  }

  // Whether a key of hash `h` can be inserted: false only when its segment is full and can
  // grow no more (keys sharing kMaxDepth leading hash bits fill every slot a SlotId can name;
  // insert_absent would stop the process). Only a host that puts meaning in its hash's top bits
  // can meet it (the server's cluster mode, where they are the hash slot a client chooses by
  // hash tag); prefix_skewed() says when it is worth asking.
  bool has_room_for(std::uint64_t h) const noexcept {
    const SegmentType* seg = segment_for(h);
    if (seg->growth_left > 0 || is_mostly_tombstones(seg) || seg->group_count() < kMaxGroups)
      return true;
    // A split may leave every entry on one side, fitted: at most fitted_groups(size) groups.
    if (seg->local_depth < kMaxDepth) return fitted_groups(seg->size) <= kMaxOversizeGroups;
    return seg->group_count() < kMaxOversizeGroups;
  }
  // Some segment has grown past kMaxGroups because its keys share leading hash bits (sticky).
  bool prefix_skewed() const noexcept { return prefix_skewed_; }

  // Bytes memory_bytes() would gain if a key of hash `h` were inserted now: 0 while its segment
  // has room, else what the growth step adds (a quarter more groups, or a split's second segment
  // and perhaps a doubled directory). An upper bound: the insert may find a tombstone and not grow.
  std::size_t growth_bytes_if_inserted(std::uint64_t h) const noexcept {
    const SegmentType* seg = segment_for(h);
    if (seg->growth_left > 0) return 0;
    if (is_mostly_tombstones(seg)) return 0;  // rebuilt at its fitted size: no larger
    const std::size_t now = footprint(seg->group_count(), seg->size);
    if (seg->group_count() < kMaxGroups)
      return footprint(grown_groups(seg->group_count()), seg->size) - now;
    // A split: two segments fitted to their shares, together at most one group more than a
    // segment fitted to all the entries (and a page more when they are pooled).
    std::size_t bytes = footprint(fitted_groups(seg->size) + 1, seg->size) +
                        ReservationPool::kPageBytes + SegmentType::kFixedBytes - now +
                        sizeof(SegmentType*);
    if (seg->local_depth == depth_) bytes += directory_.size() * sizeof(DirectoryEntry);
    return bytes;
  }

  // Removes the entry; other entries stay where they are.
  void erase_at(Ref ref) noexcept {
    const GroupType group = ref.segment()->group(ref.index / kGroupWidth);
    const unsigned lane = ref.index % kGroupWidth;
    const bool group_never_full = static_cast<bool>(GroupCtrl(group.ctrl).match_empty());
    std::destroy_at(ref.slot);
    group.ctrl[lane] = group_never_full ? kEmpty : kDeleted;
    ref.segment()->growth_left += group_never_full ? 1 : 0;
    --ref.segment()->size;
    --size_;
  }

  // The entry at a SlotId a policy handed back. Precondition: the slot is full.
  Ref at(SlotId id) const noexcept {
    SegmentType* seg = segments_[slot_id_segment(id)];
    const std::uint32_t index = slot_id_slot(id);
    const GroupType group = seg->group(index / kGroupWidth);
    CC_ASSERT(is_full(group.ctrl[index % kGroupWidth]));
    return ref_of(group, index % kGroupWidth);
  }

  // Visits up to `budget` slots from where the last sweep stopped, calling fn(Ref) on each full
  // one; fn may erase_at that Ref. Stops early when the cursor wraps (progress.wrapped). Every
  // entry present for a whole cycle is visited at least once in it: a rebuilt segment at the
  // cursor is rescanned, and split-off entries land in a segment appended after the cursor.
  template <class Fn>
  SweepProgress sweep(std::size_t budget, Fn&& fn) {
    return sweep_groups(budget, [&](SegmentType* seg, std::uint32_t g, std::uint32_t lanes) {
      const GroupType group = seg->group(g);
      for (std::size_t lane : LaneMask(GroupCtrl(group.ctrl).match_full().bits() & lanes))
        fn(ref_of(group, lane));
    });
  }

  // sweep() specialised for expiry, the one walk that runs all the time (the server spends a
  // full cycle every ~0.5 s): reads only each full slot's deadline, calls on_expired(Ref) for
  // those at or before `relative_now` (it may erase_at them, then or after the walk: a sweep
  // moves nothing), and lowers `min_live` to the earliest deadline among the rest. Both are
  // computed per group without a data-dependent branch: with persistent and volatile keys
  // mixed at random, the generic sweep's "has a deadline?" test mispredicted on about half the
  // slots (2 M entries, half with a TTL, none due: 5.1 -> 2.9 ns per slot; expiry_pacer.h).
  template <class OnExpired>
  SweepProgress sweep_expired(std::size_t budget, StoredDeadline relative_now,
                              StoredDeadline& min_live, OnExpired&& on_expired) {
    StoredDeadline low = min_live;
    const SweepProgress progress =
        sweep_groups(budget, [&](SegmentType* seg, std::uint32_t g, std::uint32_t lanes) {
          const GroupType group = seg->group(g);
          std::uint32_t expired = 0;
          for (std::size_t lane : LaneMask(GroupCtrl(group.ctrl).match_full().bits() & lanes)) {
            const StoredDeadline d = group.slot(lane)->deadline;
            const bool due = d <= relative_now;
            expired |= std::uint32_t{due} << lane;
            low = std::min(low, due ? kNoDeadlineInWindow : d);
          }
          for (std::size_t lane : LaneMask(expired)) on_expired(ref_of(group, lane));
        });
    min_live = low;
    return progress;
  }

  // Calls fn(const Ref&) for every entry; fn must not modify the table.
  template <class Fn>
  void for_each(Fn&& fn) const {
    visit_full(fn);
  }

  // Calls fn(SlotType&) for every entry so it can rewrite deadlines or metadata (not keys).
  template <class Fn>
  void for_each_mutable(Fn&& fn) {
    visit_full([&fn](const Ref& ref) { fn(*ref.slot); });
  }

  // Calls fn(const Ref&, MetaWord&) for every entry, with its policy word to rewrite.
  template <class Fn>
  void for_each_with_meta(Fn&& fn) {
    visit_full([&](const Ref& ref) { fn(ref, word_at(ref.segment(), ref.index, *ref.slot)); });
  }

  // A stateless cursor walk for hosts (Redis's SCAN): visits up to `budget` slots from `cursor`
  // (0 starts), calls fn(const Ref&) on each full one, and returns the cursor to continue
  // from, 0 once the walk is complete. Every entry present for a whole walk is visited at least
  // once however the table grows in between: the walk goes through hash-prefix ranges in order,
  // and growth only refines ranges; a segment whose entries moved since the cursor was issued
  // (its generation differs) is walked again from its start, so entries may repeat, never hide.
  //   cursor bits: 0..15 slot in segment, 16..23 segment generation, 24..43 hash prefix
  // (Generations wrap at 256: a segment rebuilt exactly 256 times between two calls is missed.)
  template <class Fn>
  std::uint64_t scan(std::uint64_t cursor, std::size_t budget, Fn&& fn) const {
    constexpr std::uint64_t kPrefixEnd = std::uint64_t{1} << kMaxDepth;
    std::uint64_t prefix = (cursor >> 24) & (kPrefixEnd - 1);
    std::uint32_t slot = static_cast<std::uint32_t>(cursor & 0xFFFF);
    auto generation = static_cast<std::uint8_t>(cursor >> 16);
    std::size_t examined = 0;
    for (;;) {
      const SegmentType* seg = directory_[prefix >> (kMaxDepth - depth_)].segment();
      if (seg->generation != generation) slot = 0;
      while (slot < seg->capacity() && examined < budget) {
        SegmentType* walked = const_cast<SegmentType*>(seg);
        const GroupType group = walked->group(slot / kGroupWidth);
        if (is_full(group.ctrl[slot % kGroupWidth])) fn(ref_of(group, slot % kGroupWidth));
        ++slot;
        ++examined;
      }
      if (slot < seg->capacity())
        return (prefix << 24) | (std::uint64_t{seg->generation} << 16) | slot;
      const std::uint64_t range = std::uint64_t{1} << (kMaxDepth - seg->local_depth);
      prefix = (prefix & ~(range - 1)) + range;
      if (prefix >= kPrefixEnd) return 0;
      slot = 0;
      if (examined >= budget) return prefix << 24;
      generation = directory_[prefix >> (kMaxDepth - depth_)].segment()->generation;
    }
  }

  // Calls fn(const Ref&) for every entry whose hash starts with the `bits`-bit `prefix`
  // (bits <= kMaxDepth) until fn returns false; false if it did. Only the segments that own part
  // of that prefix's hash range are visited, so a host that puts meaning in its hash's top bits
  // (the server's cluster mode: the key's hash slot) walks one part of the keys without the
  // rest. A segment that owns more than the prefix has its keys rehashed to filter them.
  template <class Fn>
  bool visit_hash_prefix(std::uint64_t prefix, unsigned bits, Fn&& fn) const {
    CC_ASSERT(bits >= 1 && bits <= kMaxDepth && prefix < (std::uint64_t{1} << bits));
    const unsigned widen = kMaxDepth - bits;  // the walk counts in kMaxDepth-bit prefixes
    const std::uint64_t end = (prefix + 1) << widen;
    for (std::uint64_t at = prefix << widen; at < end;) {
      SegmentType* seg = directory_[at >> (kMaxDepth - depth_)].segment();
      const bool all_match = seg->local_depth >= bits;
      bool go_on = true;
      for (std::uint32_t g = 0; g < seg->group_count() && go_on; ++g) {
        const GroupType group = seg->group(g);
        for (std::size_t lane : GroupCtrl(group.ctrl).match_full()) {
          if (!all_match && (entry_hash(seg, g, lane) >> (64 - bits)) != prefix) continue;
          if (!fn(ref_of(group, lane))) {
            go_on = false;
            break;
          }
        }
      }
      if (!go_on) return false;
      const std::uint64_t range = std::uint64_t{1} << (kMaxDepth - seg->local_depth);
      at = (at & ~(range - 1)) + range;
    }
    return true;
  }

  // Some full slot, chosen from `random`: for RANDOMKEY and sampling. Random slots are tried
  // until one is full, the segment picked through the directory (so in proportion to its share of
  // the hash space, i.e. of the keys): every entry is about equally likely. (Taking the first full
  // slot after a random position would favour the heads of probe runs, the oldest entries.)
  // A nearly empty table falls back to that forward walk. Empty Ref when the table is empty.
  Ref sample(std::uint64_t random) const noexcept {
    if (size_ == 0) return Ref{};
    for (int attempt = 0; attempt < 64; ++attempt) {
      random = hash_integer(random + static_cast<std::uint64_t>(attempt));
      SegmentType* seg = directory_[directory_index(random)].segment();
      const auto index = static_cast<std::uint32_t>(random) % seg->capacity();
      const GroupType group = seg->group(index / kGroupWidth);
      if (is_full(group.ctrl[index % kGroupWidth])) return ref_of(group, index % kGroupWidth);
    }
    for (std::size_t n = 0; n < segments_.size(); ++n) {
      SegmentType* seg = segments_[(random + n) % segments_.size()];
      for (std::uint32_t i = 0; i < seg->capacity(); ++i) {
        const GroupType group = seg->group(i / kGroupWidth);
        if (is_full(group.ctrl[i % kGroupWidth])) return ref_of(group, i % kGroupWidth);
      }
    }
    return Ref{};
  }

  // ---- Shrinking -----------------------------------------------------------------------------
  // A segment is sparse below half full (and more than one group). Rebuilt at its fitted size it
  // is 0.775 full, so it grows again after its entries gain a quarter and shrinks again after
  // they lose a third more: each rebuild is paid for by that many inserts or erases. A table
  // that loses half its keys at random (from 0.775-0.97 to 0.39-0.48) gives back half its slots.
  // Erase never shrinks by itself (erase_at keeps other Refs valid); the owner asks, at moments
  // when it holds no Ref.
  bool is_sparse(std::size_t index) const noexcept {
    const SegmentType* seg = segments_[index];
    return seg->group_count() > 1 && std::size_t{seg->size} * 2 < std::size_t{seg->capacity()};
  }
  // Loose: below 3/4 full and fitting in fewer groups. A segment shrunk while its keys were
  // still leaving (a mass delete crosses half full with a tenth or more of its keys still to go)
  // ends between 1/2 and 0.775 full, above the sparse mark: the owner refits loose segments at
  // moments it chooses (Cache::shrink_loose_segments), once the keys have settled, to 0.86
  // (refit_groups). The mark was 7/10 while segments were fitted to 0.78: at 0.775, a table
  // that lost half its keys ended at 0.71 in many growth phases and kept that (200 k keys,
  // cache_test).
  bool is_loose(std::size_t index) const noexcept {
    const SegmentType* seg = segments_[index];
    return std::size_t{seg->size} * 4 < std::size_t{seg->capacity()} * 3 &&
           fit_to_pages(refit_groups(seg->size), seg->size) < seg->group_count();
  }
  // Slots of segment `index`, full or not.
  std::uint32_t segment_capacity(std::size_t index) const noexcept {
    return segments_[index]->capacity();
  }
  // The segment the sweep cursor is in.
  std::size_t sweep_segment() const noexcept { return cursor_segment_; }
  // Rebuilds a sparse segment at its fitted size, a loose one at its refitted size (entries
  // move: on_move hears; Refs into it die).
  template <class OnMove>
  void shrink(std::size_t index, OnMove&& on_move) {
    SegmentType* seg = segments_[index];
    CC_ASSERT(is_sparse(index) || is_loose(index));
    const std::uint32_t groups =
        is_sparse(index) ? fitted_groups(seg->size) : refit_groups(seg->size);
    rebuild(seg, any_hash_of(seg), groups, on_move);
  }

  // Grows until `entries` fit without further growth. Moves existing entries (on_move hears).
  template <class OnMove>
  void reserve(std::size_t entries, OnMove&& on_move) {
    // Segments share the entries binomially: a sixteenth more than the average share keeps all
    // but a few segments of a large table from growing.
    const std::size_t max_fill = max_growth(kMaxGroups * kGroupWidth);
    unsigned depth = 0;
    while (entries + entries / 16 > (max_fill << depth) && depth < 16) ++depth;
    const std::size_t share = (entries >> depth) + (entries >> depth) / 16;
    const auto groups = static_cast<std::uint32_t>(std::clamp<std::size_t>(
        (share + max_growth(kGroupWidth) - 1) / max_growth(kGroupWidth), 1, kMaxGroups));
    for (std::size_t i = 0; i < segments_.size(); ++i) {
      while (segments_[i]->local_depth < depth)
        split(segments_[i], any_hash_of(segments_[i]), on_move);
      if (segments_[i]->group_count() < groups)
        rebuild(segments_[i], any_hash_of(segments_[i]), groups, on_move);
    }
  }

  // Destroys every entry and returns to a single one-group segment.
  void clear() noexcept {
    end_capture();
    destroy_all();
    reset();
  }

  // ---- Point-in-time capture (chronocache/capture.h): which chunks are still pending ---------
  // A capture hands a segment over in chunks of one group (16 slots; a 256th of an oversized
  // segment), so a write waits for at most 16 entries to be handed over, not a whole segment's
  // ~4 000: a pipelined batch of writes meeting a pending unit per write stalled the server for
  // milliseconds with whole segments (docs/design/server.md has the measurements). A chunk's bounds
  // depend only on its segment's size, which changes only by growth, and growth needs every chunk
  // of the segment handed over first.
  static constexpr unsigned kCaptureChunks = 256;
  static constexpr unsigned kNoChunk = ~0u;
  struct Chunk {
    std::size_t segment;
    unsigned chunk;
  };
  static constexpr std::size_t kNoSegment = ~std::size_t{0};

  // Marks every chunk of every segment pending. Segments made later (a split's new half, at an
  // index past the marks) are never pending: they only receive entries of handed-over segments
  // or new ones. A rebuild or a split's lower half keeps its index and its (handed-over) marks.
  void begin_capture() {
    capture_pending_.assign(segments_.size() * kMaskWords, 0);
    capture_left_ = 0;
    for (std::size_t i = 0; i < segments_.size(); ++i) {
      const unsigned chunks = chunk_count(segments_[i]);
      CC_ASSERT(chunks <= kCaptureChunks);
      for (unsigned w = 0; w * 64 < chunks; ++w) {
        const unsigned bits = std::min(64u, chunks - w * 64);
        capture_pending_[i * kMaskWords + w] =
            bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
      }
      capture_left_ += chunks;
    }
    capture_next_ = 0;
  }
  void end_capture() noexcept {
    capture_pending_.clear();
    capture_left_ = 0;
  }
  bool capturing() const noexcept { return capture_left_ != 0; }

  // The chunk a write to slot `index` of `seg` changes (a found entry: Ref::segment, Ref::index).
  static Chunk chunk_of(const SegmentType* seg, std::uint32_t index) noexcept {
    return {seg->index, (index / kGroupWidth) / chunk_groups(seg)};
  }
  bool capture_pending(Chunk c) const noexcept {
    const std::size_t word = c.segment * kMaskWords + c.chunk / 64;
    return word < capture_pending_.size() && (capture_pending_[word] >> (c.chunk % 64) & 1) != 0;
  }
  // The first pending chunk of segment `index`, or kNoChunk (growth hands them all over first).
  unsigned first_pending_chunk(std::size_t index) const noexcept {
    for (unsigned w = 0; w < kMaskWords; ++w) {
      const std::size_t word = index * kMaskWords + w;
      if (word >= capture_pending_.size()) return kNoChunk;
      if (capture_pending_[word] != 0)
        return w * 64 + static_cast<unsigned>(std::countr_zero(capture_pending_[word]));
    }
    return kNoChunk;
  }
  // The first pending chunk in segment order, or {kNoSegment, 0} when none is left.
  Chunk next_pending_chunk() noexcept {
    for (; capture_next_ * kMaskWords < capture_pending_.size(); ++capture_next_) {
      const unsigned chunk = first_pending_chunk(capture_next_);
      if (chunk != kNoChunk) return {capture_next_, chunk};
    }
    return {kNoSegment, 0};
  }
  // Calls fn(const Ref&) for every entry of pending chunk `c` and marks it handed over (the
  // capture ends with the last one); before that, prefetch(const Ref&) for each, so a host
  // whose keys point elsewhere (the server's records) overlaps those cache misses. Returns the
  // slots examined.
  template <class Prefetch, class Fn>
  std::size_t hand_over(Chunk c, Prefetch&& prefetch, Fn&& fn) {
    CC_ASSERT(capture_pending(c));
    capture_pending_[c.segment * kMaskWords + c.chunk / 64] &=
        ~(std::uint64_t{1} << (c.chunk % 64));
    SegmentType* seg = segments_[c.segment];
    const std::uint32_t first = c.chunk * chunk_groups(seg);
    const std::uint32_t last = std::min(first + chunk_groups(seg), seg->group_count());
    for (std::uint32_t g = first; g < last; ++g) {
      const GroupType group = seg->group(g);
      for (std::size_t lane : GroupCtrl(group.ctrl).match_full()) prefetch(ref_of(group, lane));
    }
    for (std::uint32_t g = first; g < last; ++g) {
      const GroupType group = seg->group(g);
      for (std::size_t lane : GroupCtrl(group.ctrl).match_full()) fn(ref_of(group, lane));
    }
    if (--capture_left_ == 0) end_capture();
    return std::size_t{last - first} * kGroupWidth;
  }

 private:
  // What a probe needs of a segment, read without touching the segment's header: where its
  // control bytes and bodies start (the header lies just before the control bytes) and its
  // group count.
  struct DirectoryEntry {
    Ctrl* ctrl;  // the segment's control bytes, its header just before them, its bodies after
    std::uint32_t groups;
    std::uint32_t bodies_at;  // bytes from ctrl to the bodies (Segment::bodies_offset)

    static DirectoryEntry of(SegmentType* seg) noexcept {
      return {seg->ctrl_bytes(), seg->group_total,
              static_cast<std::uint32_t>(SegmentType::bodies_offset(seg->group_total))};
    }
    SegmentType* segment() const noexcept { return SegmentType::of_ctrl(ctrl); }
    // 16 bytes, so GCC keeps a copy in two registers (with a third word, entry_for's copy went
    // through the stack: putSingle 71 -> 79 instructions).
    CC_ALWAYS_INLINE GroupType group(std::size_t g) const noexcept {
      return GroupType::at(ctrl, reinterpret_cast<BodyType*>(ctrl + bodies_at), g);
    }
    // Slot `index` (group * 16 + lane) and its control byte. Where the bodies are one array of
    // slots (no key column), from the index itself: split into group and lane, GCC computed
    // g * 16 + lane again (callgrind, putReserved 5 instructions more).
    CC_ALWAYS_INLINE void* raw_slot(std::uint32_t index) const noexcept {
      if constexpr (kQuotientKeys)
        return group(index / kGroupWidth).raw_slot(index % kGroupWidth);
      else
        return ctrl + bodies_at + slot_offset<SlotType>(index);
    }
    Ctrl& ctrl_at(std::uint32_t index) const noexcept { return ctrl[index]; }
  };
  static std::uint32_t chunk_groups(const SegmentType* seg) noexcept {
    return (seg->group_count() + kCaptureChunks - 1) / kCaptureChunks;
  }
  static unsigned chunk_count(const SegmentType* seg) noexcept {
    return (seg->group_count() + chunk_groups(seg) - 1) / chunk_groups(seg);
  }

  // ---- Sizing ----------------------------------------------------------------------------------
  // A segment grows by a quarter of its groups (at least one) when it reaches its load limit L =
  // 31/32, and a rebuilt or split-off segment is fitted to L / 1.25 = 0.775 full. Over a growing
  // fill the load then averages L (1 - 1/g) / ln g = 0.969 * (1/5) / ln 1.25 = 0.87 (doubling at
  // 7/8 averaged 0.63), at the price of 1 / (g - 1) = 4 moves per insert instead of about one.
  // The moves are what a fill pays for density, so the limit is high and the step large:
  // 15/16 and a fifth (0.86, 5 moves) filled 12.8 M keys 10 % slower, in more memory; the price
  // is longer probes for absent keys near the limit (a miss reads control bytes until a group
  // with an empty slot: ~4.6 groups on average over a segment's life, against ~2.7, by
  // bench/engine/probe_length_model.py; measured, misses cost the same on average, but more at
  // some sizes: docs/design/engine.md, "Why a quarter at 31/32").
  // A table of quotient keys, chosen for memory, grows by a tenth at 15/16: fitted to 0.85, it
  // never falls below that after a growth step (10 M int -> int in 122 MiB where a fifth's 0.78
  // right after a round of growth would need 134), at 10 moves an insert. Its limit stays at
  // 15/16: at 31/32 its 10 M fill took 1.62 s against 1.33, in no less memory.
  static constexpr std::uint32_t kSpareDivisor = kQuotientKeys ? 16 : 32;  // L = 1 - 1 / this
  static constexpr std::uint32_t kGrowthDivisor = kQuotientKeys ? 10 : 4;  // g = 1 + 1 / this
  static std::uint32_t grown_groups(std::uint32_t groups) noexcept {
    return std::min(kMaxGroups, groups + std::max(1u, groups / kGrowthDivisor));
  }
  // The fewest groups that hold `entries` at L / g: ceil(entries * g / (16 L)).
  static std::uint32_t fitted_groups(std::size_t entries) noexcept {
    constexpr std::size_t kDivisor =
        std::size_t{kGrowthDivisor} * kGroupWidth * (kSpareDivisor - 1);
    return static_cast<std::uint32_t>(std::max<std::size_t>(
        1, (entries * (kGrowthDivisor + 1) * kSpareDivisor + kDivisor - 1) / kDivisor));
  }
  // The fewest groups that hold `entries` under the load limit with a claim to spare. The closed
  // form (16 L claims a group) starts at most two short; max_growth's own rounding (a segment
  // keeps floor(capacity / kSpareDivisor) slots empty, at least one) settles the rest.
  static std::size_t groups_under_limit(std::size_t entries) noexcept {
    std::size_t groups = std::max<std::size_t>(
        1, entries * kSpareDivisor / (std::size_t{kGroupWidth} * (kSpareDivisor - 1)));
    while (max_growth(static_cast<std::uint32_t>(groups * kGroupWidth)) <= entries) ++groups;
    return groups;
  }
  // A loose segment (its keys settled after a mass delete) is refitted to 0.86 full, about the
  // average load of a table that grows, so a table that lost keys holds them in about the memory
  // it would take to load them afresh (at 0.78, 1 M survivors of 2 M took 16.0 MiB of table,
  // 14.0 loaded alone, where the fresh table happened to stand at 0.885). It grows again after
  // an eighth more (a tenth for quotient keys).
  static std::uint32_t refit_groups(std::size_t entries) noexcept {
    return static_cast<std::uint32_t>(std::max<std::size_t>(1, (entries * 100 + 1375) / 1376));
  }
  // Full and deleted slots have reached the load limit with few enough full ones that a clean
  // rebuild at the fitted size is no larger (0.775 full before page rounding; 0.85 for quotient
  // keys, whose same-size rebuild then leaves room for about a tenth more, as their growth
  // step would).
  static bool is_mostly_tombstones(const SegmentType* seg) noexcept {
    return fitted_groups(seg->size) <= seg->group_count();
  }

  std::size_t column_word_bytes() const noexcept { return meta_column() ? sizeof(MetaWord) : 0; }
  std::size_t bytes_for(std::uint32_t groups) const noexcept {
    return SegmentType::bytes_for(groups, column_word_bytes());
  }
  CC_ALWAYS_INLINE MetaWord& word_at(SegmentType* seg, std::uint32_t index,
                                     SlotType& slot) const noexcept {
    if constexpr (kMetaColumn) {
      if (!column_on_) return scratch_word_;
      return seg->template column<MetaWord>()[index];
    } else {
      static_cast<void>(seg);
      static_cast<void>(index);
      return slot.meta;
    }
  }

  SegmentType* segment_for(std::uint64_t h) const noexcept { return entry_for(h).segment(); }
  // The directory entry of hash `h`. A table of one segment (every table until its first split,
  // up to 4 263 entries for int -> int) keeps that segment's entry beside the directory, so a
  // probe's first address does not wait for a load indexed by the hash. Returned by value, so
  // that GCC branches on it: a selected address would put the load back on the chain.
  CC_ALWAYS_INLINE DirectoryEntry entry_for(std::uint64_t h) const noexcept {
    if (one_segment()) [[likely]]
      return sole_;
    return directory_[directory_index(h)];
  }
  // Quotient-key tables start with many segments (reset), so they never test sole_.
  CC_ALWAYS_INLINE bool one_segment() const noexcept {
    return !kQuotientKeys && sole_.ctrl != nullptr;
  }
  // The directory always has at least 2 entries (depth >= 1), so the shift is never 64.
  std::size_t directory_index(std::uint64_t h) const noexcept {
    return static_cast<std::size_t>(h >> directory_shift_);
  }
  static std::uint32_t slot_index(std::size_t group, std::size_t lane) noexcept {
    return static_cast<std::uint32_t>(group * kGroupWidth + lane);
  }
  // The Ref of lane `lane` of `group` (its segment's control bytes lie `first` bytes before the
  // group's own).
  static Ref ref_of(const GroupType& group, std::size_t lane) noexcept {
    return Ref{group.slot(lane), group.ctrl - group.first, group.index_of(lane)};
  }
  // Whether `slot`, lane `lane` of `group`, whose tag matched `h`'s, holds `key`: the stored key
  // compared, or (quotient keys) the stored quotient, which with the tag and the segment is the
  // whole key.
  template <class Q>
  CC_ALWAYS_INLINE bool holds(const GroupType& group, std::size_t lane, const SlotType& slot,
                              const Q& key, std::uint64_t h) const noexcept {
    if constexpr (kQuotientKeys) {
      static_cast<void>(slot), static_cast<void>(key);
      return group.keys().quotient[lane] == Hash::quotient(h);
    } else {
      static_cast<void>(group), static_cast<void>(lane), static_cast<void>(h);
      return eq_(slot.key, key);
    }
  }
  // The hash of the entry in lane `lane` of group `g`: its key's, or (quotient keys) rebuilt
  // from the quotient, the tag and the segment's prefix.
  std::uint64_t entry_hash(SegmentType* seg, std::uint32_t g, std::size_t lane) const noexcept {
    return entry_hash(seg, seg->group(g), lane);
  }
  std::uint64_t entry_hash(const SegmentType* seg, const GroupType& group,
                           std::size_t lane) const noexcept {
    if constexpr (kQuotientKeys)
      return Hash::rehash(seg->prefix, group.keys().quotient[lane],
                          static_cast<std::uint8_t>(group.ctrl[lane]));
    else
      return hash_(group.slot(lane)->key);
  }
  // Stores what identifies an entry of hash `h` in slot `index` besides the slot itself: the
  // quotient in its group's key column (quotient keys; others keep the key in the slot). Then
  // the tag.
  static void label(const DirectoryEntry& place, std::uint32_t index, std::uint64_t h) noexcept {
    if constexpr (kQuotientKeys)
      place.group(index / kGroupWidth).keys().quotient[index % kGroupWidth] = Hash::quotient(h);
    place.ctrl_at(index) = tag_of_hash(h);
  }
  // An entry's tag (control_group.h): that of the hash's low byte, or (quotient keys) the hash's
  // low 7 bits, which the key is rebuilt from (each is its own tag, so no mapping is spent).
  CC_ALWAYS_INLINE static Ctrl tag_of_hash(std::uint64_t h) noexcept {
    if constexpr (kQuotientKeys)
      return static_cast<Ctrl>(h & 0x7F);
    else
      return tag_of(static_cast<std::uint8_t>(h));
  }
  // The lanes of `ctrl` whose tag is tag_of_hash(h): a probe's candidates.
  CC_ALWAYS_INLINE static LaneMask tag_matches(const GroupCtrl& ctrl, std::uint64_t h) noexcept {
    if constexpr (kQuotientKeys)
      return ctrl.match(tag_of_hash(h));
    else
      return ctrl.match_tag_of(static_cast<std::uint8_t>(h));
  }

  // The hash's low 32 bits as a fraction of the group count (Lemire's multiply-shift range
  // reduction): any count works, so a segment grows by a quarter, not by doubling. The fraction's
  // top bits pick the group; its low 8 bits, the tag, move it by less than a group's width
  // (kMaxOversizeGroups << 8 < 2^32), and the directory takes at most the top 20 bits of 64.
  // Returned as 64 bits, which the probe's address arithmetic takes without widening it first:
  // 2 instructions a lookup (callgrind: getHit 51 -> 49, GetMiss 47 -> 45).
  CC_ALWAYS_INLINE static std::size_t home_group(std::uint64_t h, std::uint32_t groups) noexcept {
    return static_cast<std::size_t>((h & 0xFFFF'FFFFu) * groups >> 32);
  }
  template <class G>
  CC_ALWAYS_INLINE static G next_group(G g, std::uint32_t groups) noexcept {
    return g + 1 == groups ? 0 : g + 1;
  }

  // Asks for the lines of a group's body: its slots, up to four lines (int -> int: 192 bytes
  // from any 16-byte boundary). Which of them holds a key is known only once the control bytes
  // have arrived, so in a table larger than the cache the slot's line is a second miss that
  // starts after the first; asked for with the control bytes, the two overlap
  // (docs/design/engine.md, "Hot-path notes", has the figures).
  static constexpr std::size_t kCacheLine = SegmentType::kCacheLine;
  // Lines the body spans: whole lines where bodies start on one, else from the worst 16-byte
  // start in a line.
  static constexpr std::size_t kBodyLines =
      SegmentType::kLineBodies
          ? sizeof(BodyType) / kCacheLine
          : (kCacheLine - alignof(BodyType) + sizeof(BodyType) - 1) / kCacheLine + 1;
  CC_ALWAYS_INLINE static void prefetch_slot_lines(const GroupType& group) noexcept {
    // bytes + 64 i lies in the body's line i whatever its start, and the last byte in its last.
    const auto* bytes = reinterpret_cast<const char*>(group.body());
    for (std::size_t line = 0; line + 1 < kBodyLines; ++line)
      __builtin_prefetch(bytes + line * kCacheLine);
    __builtin_prefetch(bytes + sizeof(BodyType) - 1);
  }

  // A hash that routes to `seg`, for directory bookkeeping when no key is at hand.
  std::uint64_t any_hash_of(const SegmentType* seg) const noexcept {
    const auto it = std::find_if(directory_.begin(), directory_.end(),
                                 [seg](const DirectoryEntry& e) { return e.segment() == seg; });
    const auto index = static_cast<std::uint64_t>(it - directory_.begin());
    return index << directory_shift_;
  }

  // ---- Segment memory ---------------------------------------------------------------------------
  // A segment of kPooledMinBytes or more lives in a reservation of the table's own pool (up to
  // kMaxGroups groups with the widest meta column), which any later segment can reuse whatever
  // its size (memory/reservation_pool.h says why); smaller ones, and oversized ones, on the heap.
  // A pooled segment takes every group its last page holds: the page is resident either way.
  static constexpr std::size_t kPooledMinBytes = 16 * 1024;
  static constexpr std::size_t kReservationBytes =
      ReservationPool::pages_for(
          SegmentType::bytes_for(kMaxGroups, kMetaColumn ? sizeof(MetaWord) : 0)) *
      ReservationPool::kPageBytes;
  static constexpr bool kPoolable = kReservationBytes <= ReservationPool::kChunkBytes / 4;

  bool pooled_size(std::size_t bytes) const noexcept {
    return kPoolable && bytes >= kPooledMinBytes && bytes <= kReservationBytes;
  }
  // The groups that fill the whole pages nearest to `groups`' bytes, for a pooled size. Nearest,
  // not the next page up: rounding every growth step and every fitted segment up would make the
  // table grow by more than a step each time, and lower its average load (0.83 instead of 0.86
  // over a fill to 300 k int -> int entries with a fifth's step, measured in bytes). Never below
  // half a step less than `groups` (7/8: a segment fitted to a load of 0.775 then stands at 0.89;
  // 19/20 for quotient keys, fitted to 0.85, which then stand at 0.9), nor below what leaves
  // `entries` (what the segment will hold) a claim under the load limit: a loose segment is
  // refitted to 0.86, and 7/8 of that would be past the limit, with no empty slot left to end a
  // probe (a server under maxmemory hung so, at 15/16 and 9/10). Nor for a full-size segment: that
  // one takes the rest of its last page (275 groups for int -> int, where the 14th page would hold
  // 4 KiB of nothing) and splits at its next growth, as one of kMaxGroups does.
  std::uint32_t fit_to_pages(std::uint32_t groups, std::size_t entries) const noexcept {
    const std::size_t bytes = bytes_for(groups);
    if (!pooled_size(bytes) || groups > kMaxGroups) return groups;
    constexpr std::size_t kPage = ReservationPool::kPageBytes;
    const std::size_t per_group = bytes_for(2) - bytes_for(1);
    const auto in_pages = [per_group](std::size_t pages) {
      return static_cast<std::uint32_t>((pages * kPage - SegmentType::kFixedBytes) / per_group);
    };
    const std::uint32_t nearest = in_pages(std::max<std::size_t>(1, (bytes + kPage / 2) / kPage));
    const std::size_t fewest =
        std::max<std::size_t>(groups - groups / (2 * kGrowthDivisor), groups_under_limit(entries));
    if (groups < kMaxGroups && nearest >= fewest) return nearest;
    return in_pages(ReservationPool::pages_for(bytes));
  }

  // What a segment of `groups` (fitted to pages for `entries`) adds to memory_bytes().
  std::size_t footprint(std::uint32_t groups, std::size_t entries) const noexcept {
    const std::size_t bytes = bytes_for(fit_to_pages(groups, entries));
    return pooled_size(bytes) ? ReservationPool::pages_for(bytes) * ReservationPool::kPageBytes
                              : bytes;
  }

  enum class Fit { kPages, kExact };
  // A segment of `groups` groups (fitted to pages unless kExact) for `entries`, what it will
  // hold: every caller says, so the fitting never leaves them past the load limit.
  // `prefix`: the segment's SegmentType::prefix (quotient keys; 0 otherwise).
  SegmentType* allocate(std::uint32_t groups, std::size_t entries, std::size_t index,
                        std::uint8_t local_depth, std::uint16_t prefix, std::uint8_t generation = 0,
                        Fit fit = Fit::kPages) {
    if (fit == Fit::kPages) groups = fit_to_pages(groups, entries);
    const std::size_t bytes = bytes_for(groups);
    void* memory = pooled_size(bytes) ? pool_.allocate(bytes) : nullptr;
    if (memory != nullptr) {
      pooled_segment_bytes_ += bytes;
    } else {  // on a line, as the bodies' padding assumes (pool blocks are on a page)
      memory = ::operator new (bytes, std::align_val_t{SegmentType::kCacheLine});
    }
    segment_bytes_ += bytes;
    return init_segment(memory, groups, index, local_depth, prefix, generation);
  }
  static SegmentType* init_segment(void* memory, std::uint32_t groups, std::size_t index,
                                   std::uint8_t local_depth, std::uint16_t prefix,
                                   std::uint8_t generation) noexcept {
    auto* seg = ::new (memory) SegmentType{static_cast<std::uint16_t>(groups),
                                           prefix,
                                           0,
                                           max_growth(groups * kGroupWidth),
                                           static_cast<std::uint16_t>(index),
                                           local_depth,
                                           generation};
    std::memset(seg->ctrl_bytes(), static_cast<unsigned char>(kEmpty),
                std::size_t{groups} * kGroupWidth);
    return seg;
  }

  // ---- Rebuilding a pooled segment in its own reservation -------------------------------------
  // Its entries are laid out afresh in a staging segment, which is then copied over the old one,
  // now resized in place: the reservation gains only the pages the new size adds, and no spare
  // reservation is taken or freed. Taking the last freed spare instead (as the heap would) left
  // the spare's extra pages resident in a smaller segment, and the slack bound then gave pages
  // back that the next growth step mapped again: 366 MiB each way over a 10 M-entry fill whose
  // table ends at 160. Only for slots that a byte copy relocates: the entries are moved into
  // the staging segment as anywhere else, and the copy back leaves the staged ones behind.
  static constexpr bool kRelocatableSlots =
      is_trivially_relocatable_v<K> && is_trivially_relocatable_v<V> &&
      std::is_trivially_copyable_v<StoredDeadline> &&
      std::is_trivially_copyable_v<typename MetaLayout<Meta>::InSlot> &&
      (!kMetaColumn || std::is_trivially_copyable_v<MetaWord>);
  bool rebuilds_in_place(const SegmentType* seg, std::uint32_t fitted_groups) const noexcept {
    return kRelocatableSlots && pooled_size(bytes_for(fitted_groups)) && pool_.owns(seg);
  }
  // Staging segments are lent by one process-wide set per slot type (memory/scratch_buffers.h),
  // not kept per table (a ShardedCache has many) nor per thread: 56 KiB each for int -> int.
  // Never destroyed: a table may still grow while the program exits.
  static ScratchBuffers& staging_buffers() {
    static ScratchBuffers* const buffers = new ScratchBuffers(kReservationBytes);
    return *buffers;
  }
  // Copies the staged segment over `seg`, resized in place to the staged size.
  void unstage(SegmentType* seg, const SegmentType* staged) noexcept {
    const std::size_t old_bytes = bytes_for(seg->group_count());
    const std::size_t new_bytes = bytes_for(staged->group_count());
    pool_.resize(seg, old_bytes, new_bytes);
    std::memcpy(static_cast<void*>(seg), staged, new_bytes);
    segment_bytes_ = segment_bytes_ - old_bytes + new_bytes;
    pooled_segment_bytes_ = pooled_segment_bytes_ - old_bytes + new_bytes;
  }

  // `column_word`: the width of the meta column `seg` was laid out with, when that is not the
  // current one (set_meta_column releases segments of the layout it is leaving).
  void release(SegmentType* seg) noexcept { release(seg, column_word_bytes()); }
  void release(SegmentType* seg, std::size_t column_word) noexcept {
    const std::size_t bytes = SegmentType::bytes_for(seg->group_count(), column_word);
    segment_bytes_ -= bytes;
    if (pool_.owns(seg)) {
      pooled_segment_bytes_ -= bytes;
      pool_.deallocate(seg, bytes);
    } else {
      ::operator delete (seg, std::align_val_t{SegmentType::kCacheLine});
    }
  }

  // An empty table: one one-group segment, or (quotient keys) one for each kPrefixBits-bit
  // prefix, since an entry's segment must give back the top bits its quotient does not hold.
  void reset() {
    const unsigned depth = kMinDepth;
    depth_ = depth;
    directory_shift_ = 64 - depth;
    segments_.clear();
    directory_.clear();
    for (std::size_t prefix = 0; prefix < (std::size_t{1} << depth); ++prefix) {
      if (kQuotientKeys || prefix == 0)
        segments_.push_back(allocate(1, 0, prefix, kQuotientKeys ? depth : 0,
                                     kQuotientKeys ? static_cast<std::uint16_t>(prefix) : 0));
      directory_.push_back(DirectoryEntry::of(segments_.back()));
    }
    refresh_sole_entry();
    size_ = 0;
    cursor_segment_ = 0;
    cursor_slot_ = 0;
  }

  // The sweep cursor's walk: calls visit(segment, group, lane_bits) for the lanes
  // [first, first + count) of each group in turn (whole groups while the budget allows, so the
  // budget is exact in slots), up to `budget` slots or the end of the table.
  template <class Visit>
  SweepProgress sweep_groups(std::size_t budget, Visit&& visit) {
    SweepProgress progress;
    while (progress.examined < budget) {
      if (cursor_segment_ >= segments_.size()) {
        cursor_segment_ = 0;
        cursor_slot_ = 0;
        progress.wrapped = true;
        break;
      }
      SegmentType* seg = segments_[cursor_segment_];
      if (cursor_slot_ >= seg->capacity()) {
        ++cursor_segment_;
        cursor_slot_ = 0;
        continue;
      }
      const std::uint32_t first = cursor_slot_ % kGroupWidth;
      const auto count = static_cast<std::uint32_t>(
          std::min<std::size_t>(kGroupWidth - first, budget - progress.examined));
      visit(seg, cursor_slot_ / kGroupWidth, ((1u << count) - 1) << first);
      cursor_slot_ += count;
      progress.examined += count;
      if (cursor_slot_ >= seg->capacity() && cursor_segment_ + 1 >= segments_.size()) {
        // The last slot: the cycle is complete now, not at the next call, so the host learns
        // at once (Cache refreshes its earliest-deadline bound and may stop sweeping).
        cursor_segment_ = 0;
        cursor_slot_ = 0;
        progress.wrapped = true;
        break;
      }
    }
    return progress;
  }

  // Every full slot of every segment, in segment order, as a Ref.
  template <class Fn>
  void visit_full(Fn&& fn) const {
    for (SegmentType* seg : segments_) {
      for (std::uint32_t g = 0; g < seg->group_count(); ++g) {
        const GroupType group = seg->group(g);
        for (std::size_t lane : GroupCtrl(group.ctrl).match_full()) fn(ref_of(group, lane));
      }
    }
  }

  // visit_full for walks that read what each key points to (a rehash of the server's Blob,
  // whose text lives in its record; a destroy that frees it), calling fn(slot, group, lane). For
  // key types with a prefetch() member, the next group's keys start loading while this group's
  // are visited, so the walk overlaps ~14 of those cache misses instead of taking them one by
  // one. Other key types get the plain walk.
  template <class Fn>
  static void visit_full_prefetching(SegmentType* seg, Fn&& fn) {
    constexpr bool kPrefetch = requires(const K& key) { key.prefetch(); };
    const std::uint32_t groups = seg->group_count();
    const DirectoryEntry walked = DirectoryEntry::of(seg);
    const auto prefetch_group = [&walked](std::uint32_t g) {
      if constexpr (kPrefetch) {
        const GroupType group = walked.group(g);
        for (std::size_t lane : GroupCtrl(group.ctrl).match_full())
          group.slot(lane)->key.prefetch();
      } else {
        (void)walked, (void)g;  // (Clang warns of a capture used in one branch only)
      }
    };
    prefetch_group(0);
    for (std::uint32_t g = 0; g < groups; ++g) {
      if (kPrefetch && g + 1 < groups) prefetch_group(g + 1);
      const GroupType group = walked.group(g);
      for (std::size_t lane : GroupCtrl(group.ctrl).match_full())
        fn(*group.slot(lane), group, lane);
    }
  }

  void destroy_all() noexcept {
    if constexpr (!std::is_trivially_destructible_v<SlotType>)
      for (SegmentType* seg : segments_)
        visit_full_prefetching(
            seg, [](SlotType& slot, const GroupType&, std::size_t) { std::destroy_at(&slot); });
    // The pooled segments go back with their chunks, whole (a release each would give most of
    // their pages back one madvise at a time, past the pool's slack).
    for (SegmentType* seg : segments_)
      if (!pool_.owns(seg)) release(seg);
    pool_.release_all();
    segment_bytes_ -= pooled_segment_bytes_;
    pooled_segment_bytes_ = 0;
    segments_.clear();
    directory_.clear();
    refresh_sole_entry();
  }

  template <class OnMove>
  void grow(SegmentType* seg, std::uint64_t h, OnMove& on_move) {
    if (is_mostly_tombstones(seg)) {
      rebuild(seg, h, fitted_groups(seg->size), on_move);
    } else if (seg->group_count() < kMaxGroups) {
      rebuild(seg, h, grown_groups(seg->group_count()), on_move);
    } else if (seg->local_depth < kMaxDepth) {
      split(seg, h, on_move);
    } else {
      // Keys that share kMaxDepth leading hash bits beyond a segment's worth: a broken or attacked
      // hash. Splitting again would double the directory without separating them, so the segment
      // grows in place instead, up to what a SlotId can address, and then the process stops
      // with a message rather than exhausting memory.
      CC_CHECK(seg->group_count() < kMaxOversizeGroups,
               "too many keys share a hash prefix: the hash function is broken or attacked");
      prefix_skewed_ = true;
      rebuild(seg, h, std::min(seg->group_count() * 2, kMaxOversizeGroups), on_move);
    }
  }

  // The insert target at free slot `index` of `seg`: it grows first when the slot is empty (not
  // a tombstone) and the segment's budget of empty slots is spent. The budget first: it is rarely
  // spent, so a new key reads its control byte once, in place_new (2 instructions fewer).
  static InsertTarget target_at(SegmentType* seg, std::uint32_t index) noexcept {
    if (seg->growth_left != 0) [[likely]]
      return {seg->ctrl_bytes(), index, false};
    const bool claims_empty = seg->group(index / kGroupWidth).ctrl[index % kGroupWidth] == kEmpty;
    return {seg->ctrl_bytes(), index, claims_empty};
  }

  // Stores a new entry in the free slot `target` names (growth not needed).
  template <class Q, class VArg>
  CC_ALWAYS_INLINE Ref place_new(const InsertTarget& target, Q&& key, VArg&& value, std::uint64_t h,
                                 StoredDeadline deadline) {
    SegmentType* seg = target.segment();
    const DirectoryEntry place = DirectoryEntry::of(seg);
    Ctrl& ctrl = place.ctrl_at(target.index);
    const bool claims_empty = ctrl == kEmpty;
    SlotType* slot;
    if constexpr (kQuotientKeys) {
      static_cast<void>(key);
      slot = ::new (place.raw_slot(target.index))
          SlotType{V(std::forward<VArg>(value)), deadline, typename MetaLayout<Meta>::InSlot{}};
    } else {
      slot = ::new (place.raw_slot(target.index))
          SlotType{K(std::forward<Q>(key)), V(std::forward<VArg>(value)), deadline,
                   typename MetaLayout<Meta>::InSlot{}};
    }
    if constexpr (kMetaColumn) {
      if (column_on_) seg->template column<MetaWord>()[target.index] = MetaWord{};
    }
    label(place, target.index, h);
    // A branch: written as `-= claims_empty`, GCC paired this with the size's increment in SSE
    // registers, 8 instructions a new key more (make bench-instructions, putStress: 481.7 ->
    // 489.7).
    if (claims_empty) --seg->growth_left;
    ++seg->size;
    ++size_;
    return Ref{slot, target.ctrl, target.index};
  }

  // A fresh segment that growth moves entries into, and how many lanes of each of its groups the
  // moves have filled. With no tombstones and nothing else stored meanwhile, a group fills from
  // lane 0 up, so its count is its first empty lane: a move reads one byte it wrote itself, not
  // the group's control bytes. Reading those back loaded 16 bytes over 1-byte stores still in
  // flight, which the CPU cannot forward, and entries leave in group order but within a group in
  // no order, so their targets alternate between neighbouring groups and defeat a cache of the
  // last one (perf, a 12.8 M fill: that load was a third of rebuild's samples).
  struct MoveTarget {
    explicit MoveTarget(SegmentType* fresh) noexcept
        : segment(fresh), place(DirectoryEntry::of(fresh)) {
      CC_ASSERT(fresh->group_count() <= kMaxOversizeGroups);
      std::memset(filled, 0, fresh->group_count());
    }
    SegmentType* segment;
    DirectoryEntry place;                     // its addresses, read once, not per move
    std::uint8_t filled[kMaxOversizeGroups];  // the first group_count() are in use
  };

  // Places a moved entry and its policy word in a fresh segment (no tombstones, room guaranteed
  // by the caller, who has also counted the entry in the segment's size and growth_left).
  template <class OnMove>
  void place_moved(MoveTarget& target, std::uint64_t h, SlotType& from, MetaWord& from_word,
                   OnMove& on_move) {
    SegmentType* seg = target.segment;
    // 32 bits here, unlike a lookup's probe: a 64-bit group index cost ~2 instructions a move
    // (callgrind, putStress 452 -> 463 instructions an insert).
    auto g = static_cast<std::uint32_t>(home_group(h, target.place.groups));
    while (target.filled[g] == kGroupWidth) g = next_group(g, target.place.groups);
    const std::uint32_t index = slot_index(g, target.filled[g]++);
    SlotType* slot = ::new (target.place.raw_slot(index)) SlotType(std::move(from));
    MetaWord& word = word_at(seg, index, *slot);
    if constexpr (kMetaColumn) word = from_word;
    label(target.place, index, h);
    on_move(*slot, word, make_slot_id(seg->index, index));
  }

  // Counts `entries` in a fresh segment's size and growth_left before they are moved in: once per
  // segment, not per entry (a counter kept in memory per move cost ~4 instructions a move).
  static void will_hold(SegmentType* target, std::size_t entries) noexcept {
    CC_ASSERT(target->size == 0);
    // Checked in every build: a segment filled past the load limit has no empty slot to end a
    // probe, and a lookup would spin forever.
    CC_CHECK(entries <= target->growth_left, "a rebuilt segment is too small for its entries");
    target->size = static_cast<decltype(target->size)>(entries);
    target->growth_left -= static_cast<decltype(target->growth_left)>(entries);
  }

  // Moves every entry of `seg` into pick(hash), a MoveTarget, then frees `seg`. The targets'
  // segments were told how many they receive (will_hold).
  template <class Pick, class OnMove>
  void move_all(SegmentType* seg, Pick pick, OnMove& on_move) {
    move_entries(seg, pick, on_move);
    release(seg);
  }
  template <class Pick, class OnMove>
  void move_entries(SegmentType* seg, Pick pick, OnMove& on_move) {
    visit_full_prefetching(seg, [&](SlotType& slot, const GroupType& group, std::size_t lane) {
      const std::uint64_t h = entry_hash(seg, group, lane);
      place_moved(pick(h), h, slot, word_at(seg, slot_index(group.g(), lane), slot), on_move);
      std::destroy_at(&slot);
    });
  }

  // insert_at's target when the free slot its miss named (at `index` of `seg`, or none) is not
  // one to fill now: the segment grows first, out of line. It takes no key or value, and
  // on_move by value (a closure of references), so nothing of the caller's has to sit in memory
  // for it: the stores that did so ran on every new key (callgrind, putReserved 108.7 -> 103.7).
  template <class OnMove>
  [[gnu::noinline]] InsertTarget target_after_growth(Ctrl* ctrl, std::uint32_t index,
                                                     std::uint64_t h, OnMove on_move) {
    static_assert(std::is_trivially_copyable_v<OnMove> && sizeof(OnMove) <= 2 * sizeof(void*),
                  "on_move is passed by value: a closure of a pointer or two (references)");
    if (ctrl != nullptr) {
      const InsertTarget target = target_at(SegmentType::of_ctrl(ctrl), index);
      if (!target.grows) return target;  // a tombstone: claimed without growth
    }
    for (;;) {
      const InsertTarget target = insert_target(h);
      if (!target.grows) return target;
      grow(target.segment(), h, on_move);
    }
  }

  // Directory entries owned by the segment that `h` routes to: [first, first + count).
  std::pair<std::size_t, std::size_t> directory_range(std::uint64_t h,
                                                      std::uint8_t local_depth) const noexcept {
    const unsigned free_bits = depth_ - local_depth;
    const std::size_t first = (directory_index(h) >> free_bits) << free_bits;
    return {first, std::size_t{1} << free_bits};
  }

  void point_directory(std::size_t first, std::size_t count, SegmentType* seg) noexcept {
    std::fill_n(directory_.begin() + static_cast<std::ptrdiff_t>(first), count,
                DirectoryEntry::of(seg));
    refresh_sole_entry();
  }
  // Sets sole_ from segments_ (the one segment's entry, or none): after every change to the
  // directory, so it never names a segment that has gone.
  void refresh_sole_entry() noexcept {
    sole_ =
        segments_.size() == 1 ? DirectoryEntry::of(segments_[0]) : DirectoryEntry{nullptr, 0, 0};
  }

  static std::uint8_t next_generation(const SegmentType* seg) noexcept {
    return static_cast<std::uint8_t>(seg->generation + 1);
  }

  void segment_rebuilt(std::size_t index) noexcept {
    if (cursor_segment_ == index) cursor_slot_ = 0;  // its entries moved: rescan it
  }

  template <class OnMove>
  void rebuild(SegmentType* seg, std::uint64_t h, std::uint32_t groups, OnMove& on_move) {
    const auto [first, count] = directory_range(h, seg->local_depth);
    const std::size_t index = seg->index;
    if (const std::uint32_t fitted = fit_to_pages(groups, seg->size);
        rebuilds_in_place(seg, fitted)) {
      const ScratchBuffers::Lease staging(staging_buffers());
      SegmentType* staged = init_segment(staging.get(), fitted, index, seg->local_depth,
                                         seg->prefix, next_generation(seg));
      will_hold(staged, seg->size);
      MoveTarget target{staged};
      move_entries(
          seg, [&target](std::uint64_t) -> MoveTarget& { return target; }, on_move);
      unstage(seg, staged);
      point_directory(first, count, seg);
      segment_rebuilt(index);
      return;
    }
    SegmentType* fresh =
        allocate(groups, seg->size, index, seg->local_depth, seg->prefix, next_generation(seg));
    will_hold(fresh, seg->size);
    MoveTarget target{fresh};
    move_all(
        seg, [&target](std::uint64_t) -> MoveTarget& { return target; }, on_move);
    segments_[index] = fresh;
    point_directory(first, count, fresh);
    segment_rebuilt(index);
  }

  template <class OnMove>
  void split(SegmentType* seg, std::uint64_t h, OnMove& on_move) {
    CC_CHECK(segments_.size() < kMaxSegments, "table full: 65536 segments; use ShardedCache");
    if (seg->local_depth == depth_) {
      std::vector<DirectoryEntry> doubled(directory_.size() * 2);
      for (std::size_t i = 0; i < doubled.size(); ++i) doubled[i] = directory_[i >> 1];
      directory_.swap(doubled);
      ++depth_;
      --directory_shift_;
    }
    const auto [first, count] = directory_range(h, seg->local_depth);
    const auto child_depth = static_cast<std::uint8_t>(seg->local_depth + 1);
    const std::uint64_t split_bit = std::uint64_t{1} << (63 - seg->local_depth);
    const std::size_t index = seg->index;
    segments_.reserve(segments_.size() + 1);  // no allocation may fail after entries moved
    // Each half is fitted to the entries it receives, so a split grows the table by a quarter,
    // as any other growth step does, however unevenly the hash divides the keys.
    std::size_t high_entries = 0;
    visit_full_prefetching(seg, [&](SlotType&, const GroupType& group, std::size_t lane) {
      high_entries += (entry_hash(seg, group, lane) & split_bit) != 0;
    });
    const std::uint32_t low_groups = fitted_groups(seg->size - high_entries);
    const std::uint32_t high_groups = fitted_groups(high_entries);
    // Keys that the next hash bit does not divide (they share it, and more): their half outgrows
    // a regular segment, and once it would outgrow what a SlotId can name, the process stops as
    // an oversize segment's growth does (has_room_for lets a host refuse the key before).
    CC_CHECK(std::max(low_groups, high_groups) <= kMaxOversizeGroups,
             "too many keys share a hash prefix: the hash function is broken or attacked");
    if (std::max(low_groups, high_groups) > kMaxGroups) prefix_skewed_ = true;
    // The lower half stays in the segment's reservation (staged, as a rebuild is), so a split
    // maps only the upper half's pages.
    const std::size_t low_entries = seg->size - high_entries;
    const std::uint32_t low_fitted = fit_to_pages(low_groups, low_entries);
    const bool low_in_place = rebuilds_in_place(seg, low_fitted);
    std::optional<ScratchBuffers::Lease> staging;
    if (low_in_place) staging.emplace(staging_buffers());
    // Both halves keep the prefix: a split divides by a bit below it.
    SegmentType* low = low_in_place ? init_segment(staging->get(), low_fitted, index, child_depth,
                                                   seg->prefix, next_generation(seg))
                                    : allocate(low_groups, low_entries, index, child_depth,
                                               seg->prefix, next_generation(seg));
    SegmentType* high = allocate(high_groups, high_entries, segments_.size(), child_depth,
                                 seg->prefix, next_generation(seg));
    will_hold(low, low_entries);
    will_hold(high, high_entries);
    MoveTarget low_target{low};
    MoveTarget high_target{high};
    const auto pick = [&](std::uint64_t key_hash) -> MoveTarget& {
      return (key_hash & split_bit) != 0 ? high_target : low_target;
    };
    if (low_in_place) {
      move_entries(seg, pick, on_move);
      unstage(seg, low);
      low = seg;
    } else {
      move_all(seg, pick, on_move);
    }
    segments_[index] = low;
    segments_.push_back(high);
    point_directory(first, count / 2, low);
    point_directory(first + count / 2, count / 2, high);
    segment_rebuilt(index);
  }

  std::vector<DirectoryEntry> directory_;  // 2^depth_ entries; several may share a segment
  DirectoryEntry sole_{nullptr, 0, 0};     // the one segment's entry, while there is one
  std::vector<SegmentType*> segments_;     // each segment once, owned; index = SlotId high half
  unsigned depth_ = 1;
  unsigned directory_shift_ = 63;  // 64 - depth_
  std::size_t size_ = 0;
  std::size_t segment_bytes_ = 0;
  std::size_t pooled_segment_bytes_ = 0;  // the part of segment_bytes_ in pool_
  ReservationPool pool_{kPoolable ? kReservationBytes : ReservationPool::kPageBytes};
  bool column_on_ = false;           // segments carry a meta column (kMetaColumn only)
  bool prefix_skewed_ = false;       // a segment outgrew kMaxGroups: its keys share a prefix
  mutable MetaWord scratch_word_{};  // meta(ref) while the column is off: means nothing
  std::size_t cursor_segment_ = 0;   // sweep position
  std::uint32_t cursor_slot_ = 0;
  // Per segment index, kMaskWords words: bit c of the segment's mask = chunk c pending.
  static constexpr unsigned kMaskWords = kCaptureChunks / 64;
  std::vector<std::uint64_t> capture_pending_;
  std::size_t capture_left_ = 0;  // pending chunks; 0 = no capture
  std::size_t capture_next_ = 0;  // no pending segment below this index
  [[no_unique_address]] Hash hash_;
  [[no_unique_address]] Eq eq_;
};

}  // namespace chronocache::detail
