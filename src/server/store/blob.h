// Blob: the server's byte string, one pointer wide. Keys and values of chronocached are Blobs.
//
// A table slot holds two of them (16 bytes) beside the engine's 32-bit deadline. The bytes live
// in one heap block with an 8-byte header:
//
//   [ size:u32 | capacity:u31 grown:1 | bytes... ]
//
// A Blob made from bytes is sized exactly (capacity == size); APPEND and SETRANGE grow it
// geometrically and mark it "grown", which OBJECT ENCODING reports as Redis's "raw". The empty
// Blob owns no block. Sizes are bounded by proto-max-bulk-len and Redis's 512 MiB string limit,
// far below 2^31.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chronocache/base/hash.h"

namespace chronocached {

class Blob {
 public:
  Blob() noexcept = default;
  explicit Blob(std::string_view bytes);
  Blob(Blob&& other) noexcept : block_(other.block_) { other.block_ = nullptr; }
  Blob& operator=(Blob&& other) noexcept;
  // Copies are deep. The engine copies a key only to remember a deadline beyond its 32-bit window.
  Blob(const Blob& other) : Blob(other.view()) {}
  Blob& operator=(const Blob& other) {
    if (this != &other) *this = Blob(other.view());
    return *this;
  }
  ~Blob();

  std::string_view view() const noexcept {
    return block_ == nullptr ? std::string_view() : std::string_view(bytes(), block_->size);
  }
  operator std::string_view() const noexcept { return view(); }  // NOLINT: a Blob is bytes
  std::size_t size() const noexcept { return block_ == nullptr ? 0 : block_->size; }
  bool grown() const noexcept { return block_ != nullptr && (block_->capacity & kGrownBit) != 0; }

  // Appends bytes, growing the block geometrically.
  void append(std::string_view more);
  // Writes `bytes` at `offset`, zero-filling any gap past the end (SETRANGE).
  void write_at(std::size_t offset, std::string_view bytes);
  // Heap bytes this Blob holds (what the allocator hands out for its block).
  std::size_t heap_bytes() const noexcept;

 private:
  struct Header {
    std::uint32_t size;
    std::uint32_t capacity;  // low 31 bits; the top bit marks a grown blob
  };
  static constexpr std::uint32_t kGrownBit = 0x80000000u;

  char* bytes() const noexcept { return reinterpret_cast<char*>(block_ + 1); }
  std::size_t capacity() const noexcept {
    return block_ == nullptr ? 0 : block_->capacity & ~kGrownBit;
  }
  void reserve_grown(std::size_t needed);

  Header* block_ = nullptr;
};

// Transparent hashing and equality, so a Blob table is probed with a std::string_view and
// builds no Blob to look up. The seed is drawn per process (hash flooding: a client that could
// predict the hash could aim every key at one segment).
struct BlobHash {
  using is_transparent = void;
  std::uint64_t seed = 0;
  std::uint64_t operator()(std::string_view s) const noexcept {
    return chronocache::hash_bytes(s.data(), s.size(), seed);
  }
  std::uint64_t operator()(const Blob& b) const noexcept { return (*this)(b.view()); }
};

struct BlobEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};

}  // namespace chronocached
