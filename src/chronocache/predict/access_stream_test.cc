// Pins AccessStream (access_stream.h): it records each transition of its own sequence once,
// nothing before its first key or after reset() (which forgets its read-ahead chain too), and
// keeps two callers' sequences apart.
#include "chronocache/predict/access_stream.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "chronocache/predict/prediction.h"
#include "chronocache/predict/successor_model.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

// A model that only lists what it is told, to see exactly which transitions a stream records.
struct RecordingModel {
  std::vector<std::pair<int, int>> transitions;
  std::vector<std::uint64_t> hashes;
  std::uint64_t hash(int key) const { return static_cast<std::uint64_t>(key) * 100; }
  RecordOutcome record_prehashed(int prev, std::uint64_t prev_hash, int next) {
    transitions.emplace_back(prev, next);
    hashes.push_back(prev_hash);
    return RecordOutcome::kCounted;
  }
};

using Transitions = std::vector<std::pair<int, int>>;

TEST(AccessStream, RecordsEachTransitionOfItsSequenceOnce) {
  RecordingModel model;
  AccessStream<int> stream;
  EXPECT_FALSE(stream.has_previous());
  EXPECT_EQ(stream.advance(model, 1), RecordOutcome::kSkipped);  // nothing before the first key
  EXPECT_EQ(stream.advance(model, 2), RecordOutcome::kCounted);
  stream.advance(model, 3);
  EXPECT_EQ(model.transitions, (Transitions{{1, 2}, {2, 3}}));
  EXPECT_TRUE(stream.has_previous());
  EXPECT_EQ(stream.previous(), 3);
}

TEST(AccessStream, HandsThePreviousKeysHashToTheModel) {
  RecordingModel model;
  AccessStream<int> stream;
  stream.advance_prehashed(model, 1, 777);  // the caller's hash of 1, kept for the next record
  stream.advance(model, 2);
  ASSERT_EQ(model.hashes.size(), 1u);
  EXPECT_EQ(model.hashes[0], 777u);
}

TEST(AccessStream, ResetStartsANewSequence) {
  RecordingModel model;
  AccessStream<int> stream;
  stream.advance(model, 1);
  stream.read_ahead().push_back(2, 0, 1.0f);
  stream.reset();
  EXPECT_FALSE(stream.has_previous());
  EXPECT_TRUE(stream.read_ahead().empty());  // what was read ahead belonged to the old sequence
  stream.advance(model, 2);
  stream.advance(model, 3);
  EXPECT_EQ(model.transitions, (Transitions{{2, 3}}));
}

TEST(AccessStream, TwoCallersTeachOnlyTheirOwnTransitions) {
  SuccessorModel<int> model;
  AccessStream<int> first;
  AccessStream<int> second;
  // Interleaved reads: 1 2 3 from one caller, 10 20 30 from the other.
  for (int pass = 0; pass < 4; ++pass) {
    for (int i = 1; i <= 3; ++i) {
      first.advance(model, i);
      second.advance(model, i * 10);
    }
    first.reset();
    second.reset();
  }
  std::array<Prediction<int>, 4> out;
  ASSERT_EQ(model.predict(1, out), 1u);
  EXPECT_EQ(out[0].key, 2);
  ASSERT_EQ(model.predict(10, out), 1u);
  EXPECT_EQ(out[0].key, 20);
}

TEST(AccessStream, StringStreamRecordsIntoAStringModel) {
  SuccessorModel<std::string> model;
  AccessStream<std::string> stream;
  for (int pass = 0; pass < 3; ++pass) {
    stream.advance(model, std::string("a"));
    stream.advance(model, std::string("b"));
    stream.reset();
  }
  std::array<Prediction<std::string>, 4> out;
  ASSERT_EQ(model.predict("a", out), 1u);
  EXPECT_EQ(out[0].key, "b");
}

}  // namespace
}  // namespace chronocache
