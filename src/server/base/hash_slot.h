// Redis Cluster's map from a key to one of 16 384 hash slots: CRC16 of the key's hash tag (or of
// the whole key), modulo 16 384. Clients compute the same function to pick a node, so it must
// be Redis's bit for bit: CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace chronocached {

inline constexpr std::uint32_t kClusterSlots = 16384;

// What is hashed: the bytes between the first '{' and the first '}' after it when there are
// some ("{user1000}.following" -> "user1000"), else the whole key ("a{}b", "a{b" hash whole).
// Most keys have no '{': that answer comes without a call (memchr measured 18 instructions for a
// 16-byte key), sixteen or eight bytes at a time.
namespace hash_tag_detail {

// Nonzero when one of the word's bytes is '{': then the word XORed with '{' in every byte has a
// zero byte, which the classic test finds exactly (any false mark lies above a true one).
constexpr std::uint64_t brace_marks(std::uint64_t word) noexcept {
  constexpr std::uint64_t kOnes = 0x0101010101010101;
  word ^= kOnes * '{';
  return (word - kOnes) & ~word & (kOnes * 0x80);
}

inline std::uint64_t load(const char* p) noexcept {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

}  // namespace hash_tag_detail

inline bool has_open_brace(std::string_view key) noexcept {
  using hash_tag_detail::brace_marks;
  using hash_tag_detail::load;
  const char* p = key.data();
  const std::size_t n = key.size();
  if (n < 8) {  // a loop, not memchr: no call, so callers keep no registers across one
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] == '{') return true;
    return false;
  }
  if (n < 16) return (brace_marks(load(p)) | brace_marks(load(p + n - 8))) != 0;  // overlapping
#if defined(__x86_64__)  // SSE2: sixteen bytes a compare
  const auto marks = [brace = _mm_set1_epi8('{')](const char* at) {
    return _mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)), brace));
  };
  if (n <= 32) return (marks(p) | marks(p + n - 16)) != 0;  // overlapping
  for (std::size_t i = 0; i + 16 <= n; i += 16)
    if (marks(p + i) != 0) return true;
  return n % 16 != 0 && marks(p + n - 16) != 0;  // overlapping the last block
#else
  for (std::size_t i = 0; i + 8 <= n; i += 8)
    if (brace_marks(load(p + i)) != 0) return true;
  return n % 8 != 0 && brace_marks(load(p + n - 8)) != 0;  // overlapping the last word
#endif
}

// hash_tag() of a key with a '{' in it; out of line, so that the registers its searches need are
// not saved on every slot's path.
[[gnu::noinline]] inline std::string_view braced_hash_tag(std::string_view key) noexcept {
  const std::size_t open = key.find('{');
  const std::size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

inline std::string_view hash_tag(std::string_view key) noexcept {
  if (has_open_brace(key)) [[unlikely]]
    return braced_hash_tag(key);
  return key;
}

// CRC-16/XMODEM. A cluster-mode command hashes its key to a slot once before it runs; a byte at
// a time, a 16-byte key cost 151 instructions a request (callgrind), about 14 % of a GET at
// pipeline 16. Two ways that take less:
//   * eight bytes a step with a carry-less multiply (PCLMULQDQ), where the CPU has one (every
//     x86-64 since 2010; not part of the x86-64-v2 baseline we compile for, so it is asked once
//     at start): about 12 instructions per 8 bytes;
//   * otherwise eight table lookups per 8 bytes ("slicing-by-8": eight 256-entry tables computed
//     at compile time, 4 KiB), about 30.
namespace crc16_detail {

constexpr std::uint32_t kPolynomial = 0x1021;  // x^16 + x^12 + x^5 + 1, the x^16 implied
constexpr std::size_t kSlices = 8;

// kTables[k][b]: the CRC of byte b followed by k zero bytes, so that eight bytes fold into the
// CRC with one lookup each.
constexpr std::array<std::array<std::uint16_t, 256>, kSlices> make_tables() {
  std::array<std::array<std::uint16_t, 256>, kSlices> tables{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    auto crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit)
      crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ kPolynomial : crc << 1);
    tables[0][byte] = crc;
  }
  for (std::size_t k = 1; k < kSlices; ++k) {
    for (unsigned byte = 0; byte < 256; ++byte) {
      const std::uint16_t previous = tables[k - 1][byte];
      tables[k][byte] = static_cast<std::uint16_t>((previous << 8) ^ tables[0][previous >> 8]);
    }
  }
  return tables;
}

inline constexpr auto kTables = make_tables();

[[gnu::noinline]] inline std::uint16_t sliced(std::string_view bytes) noexcept {
  const auto& t = kTables;
  std::uint16_t crc = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  for (; n >= kSlices; n -= kSlices, p += kSlices) {
    crc = static_cast<std::uint16_t>(t[7][p[0] ^ (crc >> 8)] ^ t[6][p[1] ^ (crc & 0xFF)] ^
                                     t[5][p[2]] ^ t[4][p[3]] ^ t[3][p[4]] ^ t[2][p[5]] ^
                                     t[1][p[6]] ^ t[0][p[7]]);
  }
  for (; n > 0; --n, ++p) crc = static_cast<std::uint16_t>((crc << 8) ^ t[0][(crc >> 8) ^ *p]);
  return crc;
}

#if defined(__x86_64__)
// The carry-less way. The CRC of a message M is M(x) * x^16 mod P(x), its first byte the highest
// coefficients. With the CRC so far s, eight more bytes D (read big-endian) leave
// (s * x^64 + D) * x^16 mod P: a 64-bit polynomial D' = D ^ (s << 48), times x^16, reduced
// (Barrett): q = floor(D' * x^16 / P) = D' ^ high64(D' * mu), mu = floor(x^80 / P) without its
// x^64 term; the remainder is the low 16 bits of q * P, that is of q * (x^12 + x^5 + 1). Leading
// zero bytes leave a CRC with initial value 0 unchanged, so a length that is no multiple of 8
// starts with its first (length mod 8) bytes as one zero-padded step.
inline const bool kHasCarryLessMultiply = [] {
  __builtin_cpu_init();  // may run before the constructors that would otherwise do it
  return __builtin_cpu_supports("pclmul") != 0;
}();

constexpr std::uint64_t barrett_mu() {  // long division, the dividend's bits shifted in
  std::uint32_t remainder = 0;
  std::uint64_t quotient = 0;  // its x^64 term, always there, dropped
  for (int degree = 80; degree >= 0; --degree) {
    remainder = (remainder << 1) | (degree == 80 ? 1u : 0u);
    if ((remainder & 0x10000) == 0) continue;
    remainder ^= 0x10000 | kPolynomial;
    if (degree < 64) quotient |= std::uint64_t{1} << degree;
  }
  return quotient;
}
inline constexpr std::uint64_t kMu = barrett_mu();

[[gnu::target("pclmul,sse4.1")]] inline std::uint16_t reduce(std::uint64_t d) noexcept {
  const __m128i product =
      _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(d)),
                           _mm_cvtsi64_si128(static_cast<long long>(kMu)), 0x00);
  const std::uint64_t q = d ^ static_cast<std::uint64_t>(_mm_extract_epi64(product, 1));
  return static_cast<std::uint16_t>(q ^ (q << 5) ^ (q << 12));
}

inline std::uint64_t load_big_endian(const unsigned char* p) noexcept {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  return __builtin_bswap64(word);
}

// The first n (< 8) bytes at p as a big-endian number, reading only those bytes.
inline std::uint64_t load_short_big_endian(const unsigned char* p, std::size_t n) noexcept {
  if (n >= 4) {
    std::uint32_t first;
    std::uint32_t last;
    std::memcpy(&first, p, 4);
    std::memcpy(&last, p + n - 4, 4);  // overlapping: the same bytes land in the same places
    return (std::uint64_t{__builtin_bswap32(first)} << (8 * (n - 4))) | __builtin_bswap32(last);
  }
  if (n == 0) return 0;
  return (std::uint64_t{p[0]} << (8 * (n - 1))) |
         (std::uint64_t{p[n / 2]} << (8 * (n - 1 - n / 2))) | p[n - 1];
}

[[gnu::target("pclmul,sse4.1")]] [[gnu::always_inline]] inline std::uint16_t carry_less_steps(
    std::string_view bytes) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  const std::size_t head = n % 8;
  std::uint16_t crc = 0;
  if (head != 0)
    crc = reduce(n >= 8 ? load_big_endian(p) >> (8 * (8 - head)) : load_short_big_endian(p, head));
  for (std::size_t i = head; i < n; i += 8)
    crc = reduce(load_big_endian(p + i) ^ (std::uint64_t{crc} << 48));
  return crc;
}

[[gnu::target("pclmul,sse4.1")]] [[gnu::noinline]] inline std::uint16_t carry_less(
    std::string_view bytes) noexcept {
  return carry_less_steps(bytes);
}

// The slot of a key with a '{' in it, the slow way: out of line, so that the fast way saves no
// registers for it.
[[gnu::noinline]] inline std::uint32_t braced_key_slot(std::string_view key) noexcept {
  return (kHasCarryLessMultiply ? carry_less(braced_hash_tag(key)) : sliced(braced_hash_tag(key))) &
         (kClusterSlots - 1);
}

// key_hash_slot() where the CPU has the carry-less multiply. (BlobHash inlines the same steps
// into its slot-prefixed hash: blob.h.)
[[gnu::target("pclmul,sse4.1")]] [[gnu::noinline]] inline std::uint32_t slot_carry_less(
    std::string_view key) noexcept {
  if (has_open_brace(key)) [[unlikely]]
    return braced_key_slot(key);
  return carry_less_steps(key) & (kClusterSlots - 1);
}

#endif

}  // namespace crc16_detail

inline std::uint16_t crc16_xmodem(std::string_view bytes) noexcept {
#if defined(__x86_64__)
  if (crc16_detail::kHasCarryLessMultiply) [[likely]]
    return crc16_detail::carry_less(bytes);
#endif
  return crc16_detail::sliced(bytes);
}

inline std::uint32_t key_hash_slot(std::string_view key) noexcept {
#if defined(__x86_64__)
  if (crc16_detail::kHasCarryLessMultiply) [[likely]]
    return crc16_detail::slot_carry_less(key);
#endif
  return crc16_xmodem(hash_tag(key)) & (kClusterSlots - 1);
}

}  // namespace chronocached
