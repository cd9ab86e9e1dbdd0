// Slots as redis-server 7.0.15's CLUSTER KEYSLOT answers them (checked against it), and the
// CRC's standard check value.
#include "server/cluster/hash_slot.h"

#include <gtest/gtest.h>

namespace chronocached {
namespace {

TEST(HashSlot, TheCrcIsXmodemsCheckValue) { EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3); }

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
