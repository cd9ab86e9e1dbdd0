// CompactIntHash<K>: a hash for 32-bit integer keys that lets the table keep 2 bytes of each key
// instead of 4. Pass it as a Cache's Hash (`Cache<int, int, TtlOnly, CoarseClock,
// CompactIntHash<int>>`): an int -> int slot then takes 10 bytes and its control byte one more,
// not 12 and 1, in exchange for a table that starts with 512 segments (110 KB empty), a hash
// of ~6 more instructions a lookup and a fill 40-77 % slower (the table grows by a tenth to keep
// its load high). docs/design/memory.md has the measurements.
//
// The hash is a bijection of the key, laid out so that every part of the key is either stored
// or implied by where the entry lives:
//
//   u = mix(key), a bijection of 32 bits          h = u << 32 | rotr(u, 16) * kSpread
//   u: bits 23..31  the top 9 bits of the hash: the directory prefix of its segment (a table of
//                   these keys never has a segment shallower than kPrefixBits)
//      bits 16..22  recovered from the tag: h's low 7 bits are those of rotr(u, 16) * kSpread,
//                   an odd multiplier, so they are a bijection of rotr(u, 16)'s low 7 bits
//      bits  0..15  the stored quotient
//
// A match is then exact with no key compare (same segment, tag and quotient = same key). The
// tag's bits are not ShardedCache's shard bits (32..43, u's low 12), so keys of one shard still
// spread over all 128 tags; the home group (the low 32 bits as a fraction) depends on all of u.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace chronocache {

namespace detail {
// The inverse of an odd `a` modulo 2^32 (Newton's iteration: each step doubles the bits).
constexpr std::uint32_t inverse_mod_2_32(std::uint32_t a) noexcept {
  std::uint32_t x = a;  // right to 3 bits for any odd a
  for (int i = 0; i < 4; ++i) x *= 2 - a * x;
  return x;
}
}  // namespace detail

template <class K>
requires(std::is_integral_v<K> && sizeof(K) == 4) struct CompactIntHash {
  // What the table looks for: keys stored as quotient(h), recovered by rehash() and key_of().
  static constexpr bool kQuotientKeys = true;
  static constexpr unsigned kPrefixBits = 9;
  using Quotient = std::uint16_t;

  [[gnu::always_inline]] std::uint64_t operator()(K key) const noexcept {
    return compose(mix(static_cast<std::uint32_t>(key)));
  }

  static Quotient quotient(std::uint64_t h) noexcept { return static_cast<Quotient>(h >> 32); }

  // The hash of the key stored as quotient `q` under `tag` in a segment whose keys' hashes
  // start with the kPrefixBits bits `prefix`.
  static std::uint64_t rehash(std::uint32_t prefix, Quotient q, std::uint8_t tag) noexcept {
    const std::uint32_t middle = (std::uint32_t{tag} * kSpreadInverse) & 0x7F;
    return compose(prefix << (32 - kPrefixBits) | middle << 16 | q);
  }

  static K key_of(std::uint64_t h) noexcept {
    return static_cast<K>(unmix(static_cast<std::uint32_t>(h >> 32)));
  }

 private:
  // Odd multipliers (invertible modulo 2^32): the golden ratio's and MurmurHash3's.
  static constexpr std::uint32_t kMix = 0x9E3779B1u;
  static constexpr std::uint32_t kMixInverse = detail::inverse_mod_2_32(kMix);
  static constexpr std::uint32_t kSpread = 0x85EBCA6Bu;
  static constexpr std::uint32_t kSpreadInverse = detail::inverse_mod_2_32(kSpread);
  static_assert(kMix * kMixInverse == 1 && kSpread * kSpreadInverse == 1);

  // The multiply carries low bits up; the xorshift (its own inverse at 16 of 32 bits) brings the
  // high ones down, so keys that differ only in high bits (multiples of 4096) still spread over
  // shards and tags.
  static std::uint32_t mix(std::uint32_t x) noexcept {
    x *= kMix;
    return x ^ (x >> 16);
  }
  static std::uint32_t unmix(std::uint32_t u) noexcept { return (u ^ (u >> 16)) * kMixInverse; }

  static std::uint64_t compose(std::uint32_t u) noexcept {
    return std::uint64_t{u} << 32 | std::rotr(u, 16) * kSpread;
  }
};

// A hash whose table stores each key as quotient(h) and recovers it (CompactIntHash).
template <class Hash>
concept QuotientHash = requires {
  requires Hash::kQuotientKeys;
};

}  // namespace chronocache
