// The snapshot file format, version 1 (docs/design/snapshot-format.md has the rationale).
//
//   header    magic "\x89CCSNAP\n" (8) | version u32 | header size u32 | created unix ms i64 |
//             engine version length u8, bytes | XXH3-64 of everything before it (8)
//   block*    'B' | codec u8 | entries u32 | raw size u32 | stored size u32 |
//             XXH3-64 of (these 14 bytes, stored bytes) (8) | stored bytes
//   trailer   'E' | entries u64 | blocks u64 | XXH3-64 of the block checksums in order (8) |
//             end magic "\x89CCEND\n\0" (8)                                   (fixed 33 bytes)
//
// Integers are little-endian. A block's stored bytes are its raw bytes compressed by `codec`
// (kNone: stored as they are). Raw bytes are entries back to back:
//
//   entry     flags u8 (bits 0-3 type, bit 4 has expiry, bit 5 has db) | [db varint] |
//             key length varint | key | value length varint | value |
//             [expiry: zigzag varint of (expire unix ms - header's created unix ms)]
//
// Why this shape: the magic's high byte and CR-free newline catch 7-bit and text-mode mangling
// (PNG's trick); every length is checked against the limits and the bytes that remain before
// anything is allocated or read; a block's checksum covers its header, so a flipped length is
// caught before decompression; the trailer is mandatory, so a file cut at any byte is an error;
// its checksum chains the block checksums, so dropped, repeated or reordered blocks are errors.
// Expiry is a delta from the creation time: a TTL of hours fits in 4 bytes instead of 8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace chronocache::persistence {

enum class Codec : std::uint8_t { kNone = 0, kLz4 = 1, kZstd = 2 };
inline constexpr std::int64_t kNoExpiryMs = 0;  // an entry without a deadline

inline constexpr char kMagic[8] = {'\x89', 'C', 'C', 'S', 'N', 'A', 'P', '\n'};
inline constexpr char kEndMagic[8] = {'\x89', 'C', 'C', 'E', 'N', 'D', '\n', '\0'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kHeaderFixedBytes = 8 + 4 + 4 + 8 + 1;  // before the version bytes
inline constexpr std::size_t kBlockHeaderBytes = 1 + 1 + 4 + 4 + 4 + 8;
inline constexpr std::size_t kTrailerBytes = 1 + 8 + 8 + 8 + 8;
// A block's raw size is a u32, so no block, and no entry, is larger than this.
inline constexpr std::uint64_t kMaxBlockBytes = 0xFFFF'FFFF;
inline constexpr char kBlockTag = 'B';
inline constexpr char kTrailerTag = 'E';

inline constexpr std::uint8_t kTypeMask = 0x0F;
inline constexpr std::uint8_t kHasExpiry = 0x10;
inline constexpr std::uint8_t kHasDb = 0x20;
inline constexpr std::uint8_t kTypeString = 0;  // the only type today

// The most raw bytes a block of `stored` bytes can hold under `codec`: the codecs' own ceilings
// (an LZ4 sequence yields at most 255 bytes per byte it takes; a zstd block at most 128 KiB per
// 4 bytes, as RLE). A block that claims more is corrupt, so a loader's buffers never exceed
// these multiples of the file's size, however large the sizes a hostile file writes.
inline constexpr std::uint64_t max_raw_bytes(Codec codec, std::uint64_t stored) {
  switch (codec) {
    case Codec::kNone:
      return stored;
    case Codec::kLz4:
      return 255 * stored;
    case Codec::kZstd:
      return 32768 * stored;
  }
  return 0;
}

// Little-endian fixed-width integers and LEB128 varints.
inline void put_u32(char* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (8 * i));
}
inline void put_u64(char* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
}
inline std::uint32_t get_u32(const char* in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return v;
}
inline std::uint64_t get_u64(const char* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return v;
}

// Appends v as a varint to out (at most 10 bytes).
inline char* put_varint(char* out, std::uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}
// Reads a varint from [p, end); nullptr when it is cut short or longer than 64 bits.
inline const char* get_varint(const char* p, const char* end, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
    const auto byte = static_cast<unsigned char>(*p++);
    v |= std::uint64_t{byte & 0x7Fu} << shift;
    if ((byte & 0x80) == 0) return (shift == 63 && byte > 1) ? nullptr : p;
  }
  return nullptr;
}
inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

struct SnapshotEntry {  // one key; the views are valid only during the call that hands it out
  std::uint32_t db = 0;
  std::string_view key;
  std::string_view value;
  std::int64_t expire_unix_ms = kNoExpiryMs;  // absolute, kNoExpiryMs: never
  std::uint8_t type = kTypeString;
};

// What went wrong, for a message like Redis's: the file, where, and why.
struct SnapshotError {
  std::string file;
  std::uint64_t offset = 0;
  std::string reason;
  std::string message() const {
    return file + ": " + reason + " at offset " + std::to_string(offset);
  }
};

}  // namespace chronocache::persistence
