// Slots as redis-server 7.0.15's CLUSTER KEYSLOT answers them (checked against it), and the
// CRC's standard check value.
#include "server/base/hash_slot.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace chronocached {
namespace {

TEST(HashSlot, TheCrcIsXmodemsCheckValue) { EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3); }

std::uint16_t bitwise_crc(std::string_view bytes) {
  std::uint16_t crc = 0;
  for (const char c : bytes) {
    crc = static_cast<std::uint16_t>(crc ^ (static_cast<unsigned char>(c) << 8));
    for (int bit = 0; bit < 8; ++bit)
      crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

// Both fast ways against the definition, a bit at a time, at every length across several 8-byte
// steps (each short-head case, and bytes with the high bit set), and again on random bytes.
TEST(HashSlot, EveryWayOfComputingTheCrcIsTheBitwiseOne) {
  std::mt19937_64 random(7);
  std::string text;
  for (int i = 0; i < 70; ++i) {
    std::string noise(text.size(), '\0');
    for (char& c : noise) c = static_cast<char>(random());
    for (const std::string& bytes : {text, noise}) {
      EXPECT_EQ(crc16_detail::sliced(bytes), bitwise_crc(bytes)) << bytes.size();
      EXPECT_EQ(crc16_xmodem(bytes), bitwise_crc(bytes)) << bytes.size();
#if defined(__x86_64__)
      if (crc16_detail::kHasCarryLessMultiply) {
        EXPECT_EQ(crc16_detail::carry_less(bytes), bitwise_crc(bytes)) << bytes.size();
      }
#endif
    }
    text.push_back(static_cast<char>(i * 37 + 11));
  }
}

// The word-at-a-time test for '{' at every position of keys of every length up to three words.
TEST(HashSlot, AnOpenBraceIsFoundWherever) {
  for (std::size_t length = 0; length <= 24; ++length) {
    const std::string plain(length, 'k');
    EXPECT_FALSE(has_open_brace(plain)) << length;
    EXPECT_FALSE(has_open_brace(std::string(length, '{' + 1))) << length;  // near misses
    EXPECT_FALSE(has_open_brace(std::string(length, '{' - 1))) << length;
    for (std::size_t at = 0; at < length; ++at) {
      std::string key = plain;
      key[at] = '{';
      EXPECT_TRUE(has_open_brace(key)) << length << " " << at;
    }
  }
}

// The one-pass slot (the CRC and the search for '{' together) against the definition, with a
// tag at every place in keys of every length across several words.
TEST(HashSlot, TheSlotIsTheCrcOfTheTagWhereverTheTagIs) {
  const auto expected = [](std::string_view key) { return bitwise_crc(hash_tag(key)) & 16383u; };
  for (std::size_t length = 0; length <= 26; ++length) {
    const std::string plain(length, 'x');
    EXPECT_EQ(key_hash_slot(plain), expected(plain)) << length;
    for (std::size_t open = 0; open < length; ++open) {
      std::string key = plain;
      key[open] = '{';
      if (open + 3 < length) key[open + 3] = '}';
      EXPECT_EQ(key_hash_slot(key), expected(key)) << key;
    }
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
