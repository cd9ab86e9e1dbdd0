// Blob: the server's stored entry, one pointer wide: a key and its value in one block.
//
// A table slot holds one Blob (8 bytes) beside the engine's 32-bit deadline. The block:
//
//   [ key size << 2 | packed | grown : varint | value size : varint | key | value | (room) ]
//
// With the key beside the value, a key costs one allocation, not two. Both sizes are varints
// (one byte each below 32 and 128 bytes): a 14-byte key with a 16-byte value is a 32-byte record.
// A stored record (Blob::record with the keyspace's RecordArena) is packed in the arena's
// 32-byte class, against 37 bytes in glibc's 48-byte chunk before (docs/design/memory.md);
// records past the arena's largest class, records made without an arena and plain byte strings
// live on the heap. `packed` says which, so the Blob frees and measures its block from the
// address alone (RecordArena::deallocate_packed), without an arena at hand. A value's spare
// room is whatever its block holds past it (the arena class's size, or malloc_usable_size),
// so there is no capacity field; APPEND and SETRANGE grow it geometrically and mark it
// "grown", which OBJECT ENCODING reports as Redis's "raw". Overwriting a value with one that
// fits reuses the block unless the block would then be over twice the record; otherwise the
// value gets a new block of the same kind (a packed record stays in its arena while it fits a
// class).
//
// A Blob made from bytes alone (Blob(value)) has an empty key: a plain byte string. The empty
// Blob owns no block. Sizes are bounded by proto-max-bulk-len (Redis's 512 MiB), below 2^31.
// Thread safety: a packed record is allocated, resized and freed only under whatever serialises
// its arena (the server's state lock); reading it needs no more than reading any Blob.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "chronocache/base/assert.h"
#include "chronocache/base/hash.h"
#include "chronocache/memory/heap_bytes.h"
#include "chronocache/memory/record_arena.h"
#include "server/base/hash_slot.h"

namespace chronocached {

class Blob {
 public:
  // A Blob is its block's address and nothing points at it, so the table may move a segment of
  // Blobs by copying their bytes (chronocache/base/trivially_relocatable.h).
  using trivially_relocatable = std::true_type;

  // The longest key or value a Blob holds. The server refuses longer request arguments however
  // high proto-max-bulk-len is set: a Blob past it stops the process.
  static constexpr std::size_t kMaxBytes = 0x7FFFFFFF;

  Blob() noexcept = default;
  explicit Blob(std::string_view value) : Blob(std::string_view(), value, nullptr) {}
  // The stored form of a key and its value: packed in `arena` when it fits a class (the
  // keyspace's; the caller holds what serialises it), else on the heap.
  static Blob record(std::string_view key, std::string_view value,
                     chronocache::RecordArena* arena = nullptr) {
    return Blob(key, value, arena);
  }

  Blob(Blob&& other) noexcept {
    set_block(other.block());
    other.set_block(nullptr);
  }
  Blob& operator=(Blob&& other) noexcept;
  // Copies are deep, and on the heap. The engine copies a key only to remember a deadline
  // beyond its 32-bit window.
  Blob(const Blob& other) : Blob(other.key(), other.view(), nullptr) {}
  Blob& operator=(const Blob& other) {
    if (this != &other) *this = Blob(other.key(), other.view(), nullptr);
    return *this;
  }
  ~Blob();

  // The value bytes.
  std::string_view view() const noexcept {
    if (block() == nullptr) return {};
    const Layout l = layout();
    return {l.value, l.value_size};
  }
  operator std::string_view() const noexcept { return view(); }  // NOLINT: a Blob is bytes
  std::size_t size() const noexcept { return block() == nullptr ? 0 : layout().value_size; }
  bool grown() const noexcept { return block() != nullptr && (block()[0] & kGrownBit) != 0; }
  // Whether the block is packed in a RecordArena (else it is on the heap).
  bool packed() const noexcept { return block() != nullptr && (block()[0] & kPackedBit) != 0; }
  // The key bytes (empty for a plain byte string).
  std::string_view key() const noexcept {
    if (block() == nullptr) return {};
    const Layout l = layout();
    return {l.key, l.key_size};
  }

  // What a change did to the block: heap_bytes() before and after when it was (re)allocated,
  // both 0 when it stayed (the common case, known without asking malloc again). The engine's
  // byte count must hear of every change a stored record goes through (Db::edit, Db::put).
  struct Resize {
    std::size_t old_bytes = 0;
    std::size_t new_bytes = 0;
  };
  // Replaces the value, keeping the key; reuses the block when the new value fits it snugly.
  Resize assign(std::string_view value);
  // Appends bytes to the value, growing the block geometrically; marks it grown, even when
  // `more` is empty.
  Resize append(std::string_view more);
  // Writes `bytes` at `offset` of the value, zero-filling any gap past its end (SETRANGE).
  Resize write_at(std::size_t offset, std::string_view bytes);
  // Marks the value grown without changing it (COPY of a grown value stays "raw", as in Redis).
  void mark_grown() noexcept {
    if (block() != nullptr) block()[0] |= kGrownBit;
  }
  // Whether the record sits on a page `arena` is evacuating (RecordArena::plan_compaction).
  // Decided from the block's address: the record itself is not read.
  bool on_evacuating_page(const chronocache::RecordArena& arena) const noexcept {
    return arena.holds_evacuating(block());
  }
  // Moves a record on a page `arena` is evacuating (precondition: on_evacuating_page) to a page
  // the arena keeps; false when there was no memory to move into and it stays. The same class, so
  // heap_bytes() does not change; views of the old block die. Under the arena's serialisation, as
  // any change of the record.
  bool compact(chronocache::RecordArena& arena);
  // Starts loading the block's first bytes (header and key) into the cache.
  void prefetch() const noexcept { __builtin_prefetch(block()); }
  // Bytes this Blob's block takes: its arena class's size when packed; on the heap, what malloc
  // hands out (malloc_usable_size) plus glibc's 8-byte chunk header. Changes only when the block
  // is reallocated (assign past the capacity, append, write_at).
  std::size_t heap_bytes() const noexcept;
  // glibc's per-chunk bookkeeping: a chunk of usable size U occupies U + 8 bytes of heap.
  static constexpr std::size_t kMallocChunkHeader = 8;

 private:
  // Flags in the low bits of the first varint (the key size's): its width does not depend on them.
  static constexpr unsigned char kGrownBit = 1;
  static constexpr unsigned char kPackedBit = 2;
  static constexpr unsigned kFlagBits = 2;
  // Values up to this size keep their block on any overwrite that fits (resize_value).
  static constexpr std::size_t kSnugAbove = 64;

  struct Layout {
    char* key;
    std::size_t key_size;
    char* value;
    std::size_t value_size;
  };

  Blob(std::string_view key, std::string_view value, chronocache::RecordArena* arena);
  Layout layout() const noexcept;
  // Bytes the block may use: its arena class, or what malloc made usable.
  std::size_t block_capacity() const noexcept;
  // Makes the block hold a value of `needed` bytes, keeping the key and the value's first `keep`
  // bytes (moved to where the new size's encoding puts them), and records the new size; `grown`
  // grows geometrically and marks the value grown. The bytes from `keep` on are the caller's.
  Resize resize_value(std::size_t needed, std::size_t keep, bool grown);
  static void free_block(unsigned char* block) noexcept;

  // The block's address, stored as bytes: a Blob has alignment 1, so a table slot of a Blob and
  // a 32-bit deadline is 12 bytes, not 16 (13 with its control byte instead of 17: 24 % less
  // table per key). x86-64 loads an unaligned pointer at full speed.
  unsigned char* block() const noexcept {
    unsigned char* p;
    std::memcpy(&p, stored_, sizeof(p));
    return p;
  }
  void set_block(unsigned char* p) noexcept { std::memcpy(stored_, &p, sizeof(p)); }

  unsigned char stored_[sizeof(unsigned char*)] = {};
};

// Transparent hashing and equality on the key, so the table is probed with a std::string_view
// and builds no Blob to look up. The seed is drawn per process (hash flooding: a client that
// could predict the hash could aim every key at one segment).
//
// In cluster mode the hash also indexes keys by their cluster hash slot, at no cost in memory: the
// slot takes the hash's top 14 bits, the bits the table picks a segment by, so the keys of one
// slot sit in the segments of one hash prefix and are walked without the rest of the keyspace
// (Db::for_each_in_slot). The other 50 bits are the seeded hash's, for the probes.
struct BlobHash {
  using is_transparent = void;
  static constexpr unsigned kSlotBits = 14;
  static_assert(kClusterSlots == 1u << kSlotBits);
  BlobHash() = default;
  explicit BlobHash(std::uint64_t hash_seed, bool cluster_slots = false) noexcept
      : seed(hash_seed), slot_prefixed(cluster_slots) {}

  std::uint64_t seed = 0;
  bool slot_prefixed = false;  // cluster mode
  // Inlined where the table hashes (the probe, a rebuild's moves), as it was before cluster mode
  // gave it a branch: measured, the call it became otherwise cost ~8 instructions a request.
  CC_ALWAYS_INLINE std::uint64_t operator()(std::string_view s) const noexcept {
    const std::uint64_t h = chronocache::hash_bytes(s.data(), s.size(), seed);
    if (slot_prefixed) [[unlikely]] {
#if defined(__x86_64__)
      if (crc16_detail::kHasCarryLessMultiply) [[likely]]
        return with_slot_carry_less(s, h);
#endif
      return with_slot(s, h);
    }
    return h;
  }
  // Out of line, so that the CRC does not weigh on the inlined hash of cluster mode off.
  [[gnu::noinline]] static std::uint64_t with_slot(std::string_view key, std::uint64_t h) noexcept {
    return (std::uint64_t{key_hash_slot(key)} << (64 - kSlotBits)) | (h >> kSlotBits);
  }
#if defined(__x86_64__)
  // The same with the CRC inline, where the CPU has the carry-less multiply (hash_slot.h), and
  // no register saved on the way: 64 instructions for a 16-byte key, against 115 with memchr and
  // the table's CRC behind two calls (callgrind, make bench-cluster).
  [[gnu::target("pclmul,sse4.1")]] [[gnu::noinline]] static std::uint64_t with_slot_carry_less(
      std::string_view key, std::uint64_t h) noexcept {
    if (has_open_brace(key)) [[unlikely]]
      return with_slot(key, h);  // a tail call: the fast path saves no registers for it
    return (std::uint64_t{crc16_detail::carry_less_steps(key)} << (64 - kSlotBits)) |
           (h >> kSlotBits);
  }
#endif
  CC_ALWAYS_INLINE std::uint64_t operator()(const Blob& b) const noexcept {
    return (*this)(b.key());
  }
};

struct BlobEq {
  using is_transparent = void;
  static std::string_view key_of(std::string_view s) noexcept { return s; }
  static std::string_view key_of(const Blob& b) noexcept { return b.key(); }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const noexcept {
    return key_of(a) == key_of(b);
  }
};

}  // namespace chronocached

// The engine's byte accounting (Cache::memory_used, the server's maxmemory) charges each record
// its block as the heap holds it. Exact only while every change of a stored record's block is
// reported to the engine (Db::edit and Db::put do it).
template <>
struct chronocache::HeapBytes<chronocached::Blob> {
  static std::size_t of(const chronocached::Blob& b) noexcept { return b.heap_bytes(); }
};
