// Redis Cluster's map from a key to one of 16 384 hash slots: CRC16 of the key's hash tag (or of
// the whole key), modulo 16 384. Clients compute the same function to pick a node, so it must
// be Redis's bit for bit: CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace chronocached {

inline constexpr std::uint32_t kClusterSlots = 16384;

// CRC-16/XMODEM, eight bytes a step ("slicing-by-8": eight 256-entry tables computed at compile
// time, 4 KiB), then a byte at a time. A cluster-mode command hashes its key once before it runs:
// bytewise, a 16-byte key cost 151 instructions a request (callgrind), about 14 % of a GET at
// pipeline 16; eight at a time, a third of that.
namespace crc16_detail {

constexpr std::uint16_t kPolynomial = 0x1021;
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

}  // namespace crc16_detail

inline std::uint16_t crc16_xmodem(std::string_view bytes) noexcept {
  using crc16_detail::kSlices;
  const auto& t = crc16_detail::kTables;
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

// What is hashed: the bytes between the first '{' and the first '}' after it when there are
// some ("{user1000}.following" -> "user1000"), else the whole key ("a{}b", "a{b" hash whole).
inline std::string_view hash_tag(std::string_view key) noexcept {
  const std::size_t open = key.find('{');
  if (open == std::string_view::npos) [[likely]]
    return key;
  const std::size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

inline std::uint32_t key_hash_slot(std::string_view key) noexcept {
  return crc16_xmodem(hash_tag(key)) & (kClusterSlots - 1);
}

}  // namespace chronocached
