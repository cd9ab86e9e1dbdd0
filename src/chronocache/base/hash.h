// Hashing for the table: a 64-bit hash whose every bit is well mixed.
//
// The table takes three independent slices of one hash (see docs/design/engine.md):
//   bits 63..(64-depth)  directory index (which segment)
//   bits 32..43          ShardedCache's shard
//   bits  0..31          home group inside the segment, as a fraction of its group count
//   bits  0..7           the control byte's tag (the fraction's least bits; 0..6 for quotient keys)
// std::hash<int> is the identity, which would put every small key in segment 0 and group 0, so
// integers go through a multiply-fold mixer; byte strings through a loop of bijective steps over
// 8-byte words. Both are seeded with fixed constants: hashing is deterministic across runs,
// which keeps benchmarks and differential tests reproducible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace chronocache {

namespace detail {

// Odd 64-bit constants with balanced bits (digits of pi and e in hex).
inline constexpr std::uint64_t kMix0 = 0x243f6a8885a308d3ULL;
inline constexpr std::uint64_t kMix1 = 0x13198a2e03707345ULL;
inline constexpr std::uint64_t kMix2 = 0xa4093822299f31d1ULL;
inline constexpr std::uint64_t kMix3 = 0xb7e151628aed2a6bULL;

// Full 64x64->128 multiply, folded: every output bit depends on every input bit of a and b.
inline std::uint64_t mul_fold(std::uint64_t a, std::uint64_t b) noexcept {
  __extension__ using U128 =
      unsigned __int128;  // GCC/Clang builtin; __extension__ keeps -Wpedantic quiet
  const U128 product = static_cast<U128>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

inline std::uint64_t load_u64(const unsigned char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Reads 1..8 bytes without touching memory outside [p, p+n).
inline std::uint64_t load_tail(const unsigned char* p, std::size_t n) noexcept {
  if (n >= 4) {
    std::uint32_t lo;
    std::uint32_t hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    return (static_cast<std::uint64_t>(hi) << 32) | lo;
  }
  return (static_cast<std::uint64_t>(p[0]) << 16) | (static_cast<std::uint64_t>(p[n >> 1]) << 8) |
         p[n - 1];
}

}  // namespace detail

inline std::uint64_t hash_integer(std::uint64_t x) noexcept {
  return detail::mul_fold(x ^ detail::kMix0, detail::kMix1);
}

// Each 8-byte word enters the state through bijective steps (xor, multiply by an odd constant,
// xorshift), so no input word can erase what came before: two keys of one length that differ in
// any byte differ in the state, and collide only by the final fold's chance (a wyhash-style
// multiply of two inputs could be zeroed by a chosen word, giving unlimited collisions).
// A host facing untrusted keys passes a secret `seed` drawn per process: the seed enters the state
// before the first multiply, so which keys collide depends on it.
inline std::uint64_t hash_bytes(const void* data, std::size_t n, std::uint64_t seed = 0) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t state = (detail::kMix0 ^ seed) ^ (n * detail::kMix3);
  std::size_t left = n;
  while (left >= 8) {
    state = (state ^ detail::load_u64(p)) * detail::kMix1;
    state ^= state >> 29;
    p += 8;
    left -= 8;
  }
  if (left > 0) {
    state = (state ^ detail::load_tail(p, left)) * detail::kMix2;
    state ^= state >> 32;
  }
  return detail::mul_fold(state, detail::kMix3);
}

// DefaultHash<K>: integers and enums are mixed, strings hashed by bytes (transparently, so a
// Cache<std::string, V> can be probed with a std::string_view or const char* without building a
// std::string). Anything else falls back to std::hash, re-mixed so identity hashes are safe.
template <class K, class = void>
struct DefaultHash {
  std::uint64_t operator()(const K& key) const noexcept {
    return hash_integer(static_cast<std::uint64_t>(std::hash<K>{}(key)));
  }
};

template <class K>
struct DefaultHash<K, std::enable_if_t<std::is_integral_v<K> || std::is_enum_v<K>>> {
  std::uint64_t operator()(K key) const noexcept {
    return hash_integer(static_cast<std::uint64_t>(key));
  }
};

struct StringHash {
  using is_transparent = void;
  std::uint64_t operator()(std::string_view s) const noexcept {
    return hash_bytes(s.data(), s.size());
  }
};

template <>
struct DefaultHash<std::string> : StringHash {};
template <>
struct DefaultHash<std::string_view> : StringHash {};

}  // namespace chronocache
