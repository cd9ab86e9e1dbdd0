// Blob: the server's stored entry, one pointer wide: a key and its value in one heap block.
//
// A table slot holds one Blob (8 bytes) beside the engine's 32-bit deadline: 16 bytes a slot.
// The block, allocated with exactly its bytes (malloc rounds it up to its size class):
//
//   [ value size:u31 grown:1 | key size: varint | key bytes | value bytes | (growth room) ]
//
// With the key beside the value, a key costs one allocation, not two: a 16-byte key with a
// 16-byte value is 37 bytes, glibc's 48-byte chunk (docs/design/server.md has the arithmetic).
// A value's spare room is whatever malloc_usable_size reports past it, so there is no capacity
// field; APPEND and SETRANGE grow it geometrically and mark it "grown", which OBJECT ENCODING
// reports as Redis's "raw". Overwriting a value with one that fits reuses the block.
//
// A Blob made from bytes alone (Blob(value)) has an empty key: a plain byte string. The empty
// Blob owns no block. Sizes are bounded by proto-max-bulk-len (Redis's 512 MiB), below 2^31.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "chronocache/base/hash.h"
#include "chronocache/memory/heap_bytes.h"

namespace chronocached {

class Blob {
 public:
  // The longest key or value a Blob holds (its 31-bit size field). The server refuses longer
  // request arguments however high proto-max-bulk-len is set: a Blob past it stops the process.
  static constexpr std::size_t kMaxBytes = 0x7FFFFFFF;

  Blob() noexcept = default;
  explicit Blob(std::string_view value) : Blob(std::string_view(), value) {}
  // The stored form of a key and its value.
  static Blob record(std::string_view key, std::string_view value) { return Blob(key, value); }

  Blob(Blob&& other) noexcept {
    set_block(other.block());
    other.set_block(nullptr);
  }
  Blob& operator=(Blob&& other) noexcept;
  // Copies are deep. The engine copies a key only to remember a deadline beyond its 32-bit window.
  Blob(const Blob& other) : Blob(other.key(), other.view()) {}
  Blob& operator=(const Blob& other) {
    if (this != &other) *this = Blob(other.key(), other.view());
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
  std::size_t size() const noexcept { return block() == nullptr ? 0 : header() & kSizeMask; }
  bool grown() const noexcept { return block() != nullptr && (header() & kGrownBit) != 0; }
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
  // Replaces the value, keeping the key; reuses the block when the new value fits.
  Resize assign(std::string_view value);
  // Appends bytes to the value, growing the block geometrically.
  Resize append(std::string_view more);
  // Writes `bytes` at `offset` of the value, zero-filling any gap past its end (SETRANGE).
  Resize write_at(std::size_t offset, std::string_view bytes);
  // Marks the value grown without changing it (COPY of a grown value stays "raw", as in Redis).
  void mark_grown() noexcept {
    if (block() != nullptr) set_header(static_cast<std::uint32_t>(size()), true);
  }
  // Starts loading the block's first bytes (header and key) into the cache.
  void prefetch() const noexcept { __builtin_prefetch(block()); }
  // Heap bytes this Blob holds: what the allocator hands out for its block (malloc_usable_size)
  // plus glibc's 8-byte chunk header, i.e. the bytes the block takes from the heap. Changes only
  // when the block is reallocated (assign past the capacity, append, write_at).
  std::size_t heap_bytes() const noexcept;
  // glibc's per-chunk bookkeeping: a chunk of usable size U occupies U + 8 bytes of heap.
  static constexpr std::size_t kMallocChunkHeader = 8;

 private:
  static constexpr std::uint32_t kGrownBit = 0x80000000u;
  static constexpr std::uint32_t kSizeMask = ~kGrownBit;
  static_assert(kSizeMask == kMaxBytes);

  struct Layout {
    char* key;
    std::size_t key_size;
    char* value;
    std::size_t value_size;
  };

  Blob(std::string_view key, std::string_view value);
  std::uint32_t header() const noexcept;
  void set_header(std::uint32_t value_size, bool grown) noexcept;
  Layout layout() const noexcept;
  std::size_t value_capacity() const noexcept;
  // Makes room for a value of `needed` bytes (keeping key and current value); `grown` doubles.
  Resize reserve_value(std::size_t needed, bool grown);

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
struct BlobHash {
  using is_transparent = void;
  std::uint64_t seed = 0;
  std::uint64_t operator()(std::string_view s) const noexcept {
    return chronocache::hash_bytes(s.data(), s.size(), seed);
  }
  std::uint64_t operator()(const Blob& b) const noexcept { return (*this)(b.key()); }
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
