// Slots as redis-server 7.0.15's CLUSTER KEYSLOT answers them (checked against it), and the
// CRC's standard check value.
#include "server/base/hash_slot.h"

#include <gtest/gtest.h>

#include <string>

namespace chronocached {
namespace {

TEST(HashSlot, TheCrcIsXmodemsCheckValue) { EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3); }

// The sliced CRC against the definition, a bit at a time, at every length across two slices.
TEST(HashSlot, TheSlicedCrcIsTheBitwiseOne) {
  const auto bitwise = [](std::string_view bytes) {
    std::uint16_t crc = 0;
    for (const char c : bytes) {
      crc = static_cast<std::uint16_t>(crc ^ (static_cast<unsigned char>(c) << 8));
      for (int bit = 0; bit < 8; ++bit)
        crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
  };
  std::string text;
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(crc16_xmodem(text), bitwise(text)) << text.size();
    text.push_back(static_cast<char>(i * 37 + 11));
  }
}

TEST(HashSlot, KeysMapToRedissSlots) {
  EXPECT_EQ(key_hash_slot("foo"), 12182u);
  EXPECT_EQ(key_hash_slot(""), 0u);
  EXPECT_EQ(key_hash_slot("{user1000}.following"), 3443u);
  EXPECT_EQ(key_hash_slot("{user1000}.followers"), 3443u);
}

TEST(HashSlot, OnlyANonEmptyFirstTagIsHashed) {
  EXPECT_EQ(hash_tag("{user1000}.following"), "user1000");
  EXPECT_EQ(hash_tag("foo{bar}{zap}"), "bar");      // the first tag
  EXPECT_EQ(hash_tag("foo{}{bar}"), "foo{}{bar}");  // an empty first tag: the whole key
  EXPECT_EQ(hash_tag("foo{{bar}}zap"), "{bar");     // from the first '{' to the first '}'
  EXPECT_EQ(hash_tag("foo{bar"), "foo{bar");        // no closing brace
  EXPECT_EQ(hash_tag("a{}b"), "a{}b");
  EXPECT_EQ(key_hash_slot("a{}b"), 13694u);
  EXPECT_EQ(key_hash_slot("foo{{bar}}zap"), 4015u);
  EXPECT_EQ(key_hash_slot("foo{bar"), 15278u);
  EXPECT_EQ(key_hash_slot("foo{}{bar}"), 8363u);
}

}  // namespace
}  // namespace chronocached
