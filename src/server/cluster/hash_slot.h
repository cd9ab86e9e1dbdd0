// Redis Cluster's map from a key to one of 16 384 hash slots: CRC16 of the key's hash tag (or of
// the whole key), modulo 16 384. Clients compute the same function to pick a node, so it must
// be Redis's bit for bit: CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection).
#pragma once

#include <cstdint>
#include <string_view>

namespace chronocached {

inline constexpr std::uint32_t kClusterSlots = 16384;

std::uint16_t crc16_xmodem(std::string_view bytes) noexcept;

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
