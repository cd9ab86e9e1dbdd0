// A hint is found by the very view its batch hashed: the same address and length, never equal
// bytes elsewhere (a record's key, a copy), and none after clear().
#include "server/store/key_hash_hints.h"

#include <gtest/gtest.h>

#include <string>

namespace chronocached {
namespace {

TEST(KeyHashHints, AHintIsFoundByItsViewOnly) {
  const std::string buffer = "GETkey:1GETkey:2";
  const std::string_view first(buffer.data() + 3, 5);
  const std::string_view second(buffer.data() + 11, 5);
  KeyHashHints hints;
  EXPECT_TRUE(hints.empty());
  hints.add(first, 11);
  hints.add(second, 22);
  ASSERT_NE(hints.find(first), nullptr);
  EXPECT_EQ(*hints.find(first), 11u);
  EXPECT_EQ(*hints.find(second), 22u);
  EXPECT_EQ(*hints.find(first), 11u);  // out of batch order too
  const std::string copy(first);
  EXPECT_EQ(hints.find(copy), nullptr);                // equal bytes, another place
  EXPECT_EQ(hints.find(first.substr(0, 4)), nullptr);  // the same place, another length
  hints.clear();
  EXPECT_TRUE(hints.empty());
  EXPECT_EQ(hints.find(first), nullptr);
}

TEST(KeyHashHints, ABatchLargerThanTheHintsKeepsTheFirstOnes) {
  std::string buffer(2 * KeyHashHints::kMax, 'k');
  KeyHashHints hints;
  for (std::size_t i = 0; i < 2 * KeyHashHints::kMax; ++i)
    hints.add(std::string_view(buffer.data() + i, 1), i);
  EXPECT_EQ(*hints.find(std::string_view(buffer.data() + KeyHashHints::kMax - 1, 1)),
            KeyHashHints::kMax - 1);
  EXPECT_EQ(hints.find(std::string_view(buffer.data() + KeyHashHints::kMax, 1)), nullptr);
}

}  // namespace
}  // namespace chronocached
