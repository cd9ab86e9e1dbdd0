// CRC-16/XMODEM by a 256-entry table computed at compile time: one lookup per byte.
#include "server/cluster/hash_slot.h"

#include <array>

namespace chronocached {
namespace {

constexpr std::uint16_t kPolynomial = 0x1021;

constexpr std::array<std::uint16_t, 256> make_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    auto crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit)
      crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ kPolynomial : crc << 1);
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<std::uint16_t, 256> kTable = make_table();

}  // namespace

std::uint16_t crc16_xmodem(std::string_view bytes) noexcept {
  std::uint16_t crc = 0;
  for (const char c : bytes)
    crc = static_cast<std::uint16_t>((crc << 8) ^
                                     kTable[((crc >> 8) ^ static_cast<unsigned char>(c)) & 0xFF]);
  return crc;
}

std::string_view hash_tag(std::string_view key) noexcept {
  const std::size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const std::size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

}  // namespace chronocached
