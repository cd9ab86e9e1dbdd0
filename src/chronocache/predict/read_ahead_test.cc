// Pins read_ahead (read_ahead.h) against a real SuccessorModel, counting the model's predictions:
// a reader that follows the chain takes one model step a read whatever the depth, a repeated read
// takes none, a read off the chain starts it afresh, and depth 1 keeps no chain.
#include "chronocache/predict/read_ahead.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "chronocache/predict/access_stream.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/successor_model.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

// The model read_ahead sees: the real one, its predictions counted.
struct CountingModel {
  const SuccessorModel<int>& model;
  mutable int predictions = 0;
  std::size_t predict_prehashed(const int& key, std::uint64_t hash,
                                std::span<Prediction<int>> out) const {
    ++predictions;
    return model.predict_prehashed(key, hash, out);
  }
  const SuccessorModelOptions& options() const noexcept { return model.options(); }
};

// A model that has seen 0 -> 1 -> ... -> 19 twice (min_count 2), and a reader's stream.
struct Reader {
  SuccessorModel<int> model{SuccessorModelOptions{.rows = 1024}};
  CountingModel counting{model};
  AccessStream<int> stream;
  std::array<Prediction<int>, 4> scratch;

  Reader() {
    AccessStream<int> teacher;
    for (int pass = 0; pass < 2; ++pass)
      for (int key = 0; key < 20; ++key) teacher.advance(model, key);
  }
  // Reads `key` at read-ahead depth `depth`: what it emits, in order.
  std::vector<int> read(int key, std::size_t depth) {
    std::vector<int> emitted;
    const std::uint64_t hash = model.hash(key);
    stream.advance_prehashed(model, key, hash);
    read_ahead(
        counting, stream, key, hash, {.max_per_get = 1, .depth = depth},
        std::span<Prediction<int>>(scratch), [this](int next) { return model.hash(next); },
        [&](int next, std::uint64_t) { emitted.push_back(next); });
    return emitted;
  }
};

TEST(ReadAhead, AReaderOnTheChainTakesOneModelStepAReadWhateverTheDepth) {
  Reader reader;
  EXPECT_EQ(reader.read(0, 4), (std::vector<int>{1, 2, 3, 4}));  // the chain starts
  EXPECT_EQ(reader.counting.predictions, 4);
  for (int key = 1; key <= 5; ++key) {
    reader.counting.predictions = 0;
    // The next key asked for again, then one more at the far end.
    EXPECT_EQ(reader.read(key, 4), (std::vector<int>{key + 1, key + 4})) << "read " << key;
    EXPECT_EQ(reader.counting.predictions, 1);
  }
}

TEST(ReadAhead, ARepeatedReadEmitsAndPredictsNothing) {
  Reader reader;
  EXPECT_EQ(reader.read(0, 4).size(), 4u);
  reader.counting.predictions = 0;
  EXPECT_TRUE(reader.read(0, 4).empty());  // a GET retried after its fetch, for example
  EXPECT_EQ(reader.counting.predictions, 0);
  EXPECT_EQ(reader.read(1, 4), (std::vector<int>{2, 5}));  // the chain held
}

TEST(ReadAhead, AReadOffTheChainStartsItAfresh) {
  Reader reader;
  (void)reader.read(0, 4);
  reader.counting.predictions = 0;
  EXPECT_EQ(reader.read(10, 4), (std::vector<int>{11, 12, 13, 14}));
  EXPECT_EQ(reader.counting.predictions, 4);
}

TEST(ReadAhead, DepthOneEmitsTheSuccessorAndKeepsNoChain) {
  Reader reader;
  EXPECT_EQ(reader.read(0, 1), (std::vector<int>{1}));
  EXPECT_EQ(reader.read(1, 1), (std::vector<int>{2}));
  EXPECT_TRUE(reader.stream.read_ahead().empty());
  EXPECT_EQ(reader.counting.predictions, 2);
}

}  // namespace
}  // namespace chronocache
