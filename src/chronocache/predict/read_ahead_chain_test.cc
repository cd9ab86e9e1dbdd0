// Pins ReadAheadChain (read_ahead_chain.h): it moves only when the reader reads the key it
// expected, keeps its links in order as its ring wraps and grows, and its probability is the
// product of its steps' confidences.
#include "chronocache/predict/read_ahead_chain.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace chronocache {
namespace {

// The chain's keys, front to back, read by advancing through a copy.
template <class K>
std::vector<K> keys_of(ReadAheadChain<K> chain) {
  std::vector<K> keys;
  while (!chain.empty()) {
    keys.push_back(chain.front().key);
    EXPECT_TRUE(chain.advance_to(chain.front().key));
  }
  return keys;
}

TEST(ReadAheadChain, AdvancesOnlyWhenTheReaderReadsTheKeyItExpectedNext) {
  ReadAheadChain<int> chain;
  EXPECT_FALSE(chain.advance_to(1));  // empty: nothing expected
  chain.push_back(1, 10, 1.0f);
  chain.push_back(2, 20, 1.0f);
  chain.push_back(3, 30, 1.0f);
  EXPECT_FALSE(chain.advance_to(2));  // a key further on is not the next one
  EXPECT_EQ(chain.size(), 3u);
  EXPECT_TRUE(chain.advance_to(1));
  EXPECT_EQ(chain.front().key, 2);
  EXPECT_EQ(chain.front().hash, 20u);
  EXPECT_EQ(chain.back().key, 3);
  EXPECT_EQ(keys_of(chain), (std::vector<int>{2, 3}));
  chain.clear();
  EXPECT_TRUE(chain.empty());
  EXPECT_FALSE(chain.advance_to(2));
}

TEST(ReadAheadChain, KeepsItsOrderAsTheRingWrapsAndGrows) {
  ReadAheadChain<std::string> chain;
  for (const char* key : {"a", "b", "c"}) chain.push_back(key, 0, 1.0f);
  ASSERT_TRUE(chain.advance_to("a"));
  chain.push_back("d", 0, 1.0f);  // into a's slot, at the ring's start
  ASSERT_TRUE(chain.advance_to("b"));
  chain.push_back("e", 0, 1.0f);
  chain.push_back("f", 0, 1.0f);  // full: the ring unrolls and grows
  EXPECT_EQ(chain.back().key, "f");
  EXPECT_EQ(keys_of(chain), (std::vector<std::string>{"c", "d", "e", "f"}));
  for (int round = 0; round < 10; ++round) {  // a reader moving along a chain it keeps 4 long
    const std::string next = chain.back().key + "'";
    ASSERT_TRUE(chain.advance_to(chain.front().key));
    chain.push_back(next, 0, 1.0f);
    EXPECT_EQ(chain.size(), 4u);
    EXPECT_EQ(chain.back().key, next);
  }
  EXPECT_EQ(keys_of(chain).front(), "f'''''''");  // c, d, e and f, then ten more, moved past 10
}

TEST(ReadAheadChain, ItsProbabilityIsTheProductOfItsStepsConfidences) {
  ReadAheadChain<int> chain;
  EXPECT_DOUBLE_EQ(chain.probability(), 1.0);
  chain.push_back(1, 0, 0.5f);
  chain.push_back(2, 0, 0.75f);
  chain.push_back(3, 0, 1.0f);
  EXPECT_DOUBLE_EQ(chain.probability(), 0.375);
  ASSERT_TRUE(chain.advance_to(1));  // read: from 1 on, the chain is 0.75 likely
  EXPECT_DOUBLE_EQ(chain.probability(), 0.75);
}

}  // namespace
}  // namespace chronocache
