// Pins SuccessorModel (successor_model.h) from one thread: it learns the four access patterns of
// docs/design/prefetch.md (sequential, branching, cyclic, and random, where it must stay quiet),
// keeps its memory fixed whatever the key space, lets a changed pattern take over by decay,
// settles rows wanted by two keys by tenure, and never allocates in predict.
#include "chronocache/predict/successor_model.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "chronocache/predict/access_stream.h"
#include "chronocache/predict/prediction.h"
#include "chronocache/predict/successor_model_options.h"
#include "testing/numbered.h"

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using IntModel = SuccessorModel<std::uint64_t>;
using Predictions = std::array<Prediction<std::uint64_t>, IntModel::kMaxPredictions>;

static_assert(IntModel::row_bytes() == 64, "one row of 8-byte keys is one cache line");
static_assert(IntModel::kOptimisticReads);
static_assert(!SuccessorModel<std::string>::kOptimisticReads);

std::vector<std::uint64_t> predicted(const IntModel& model, std::uint64_t key) {
  Predictions out;
  const std::size_t n = model.predict(key, out);
  std::vector<std::uint64_t> keys;
  for (std::size_t i = 0; i < n; ++i) keys.push_back(out[i].key);
  return keys;
}

using Keys = std::vector<std::uint64_t>;

TEST(SuccessorModel, KnowsNothingBeforeLearning) {
  IntModel model;
  EXPECT_EQ(predicted(model, 1), Keys{});
}

TEST(SuccessorModel, LearnsSequentialChain) {
  IntModel model;
  AccessStream<std::uint64_t> stream;
  for (int pass = 0; pass < 5; ++pass) {
    for (std::uint64_t key : {1, 2, 3, 4}) stream.advance(model, key);
    stream.reset();  // chains start afresh: D -> A is not part of the pattern
  }
  EXPECT_EQ(predicted(model, 1), Keys{2});
  EXPECT_EQ(predicted(model, 2), Keys{3});
  EXPECT_EQ(predicted(model, 3), Keys{4});
  EXPECT_EQ(predicted(model, 4), Keys{});
  Predictions out;
  ASSERT_EQ(model.predict(1, out), 1u);
  EXPECT_FLOAT_EQ(out[0].confidence, 1.0f);
}

TEST(SuccessorModel, ATransitionSeenOnceIsNotPredicted) {
  IntModel model;  // min_count = 2
  model.record(1, 2);
  EXPECT_EQ(predicted(model, 1), Keys{});
  model.record(1, 2);
  EXPECT_EQ(predicted(model, 1), Keys{2});
}

// A -> B 70 %, A -> C 30 %, in a fixed order so that the counts are known.
void record_branching(IntModel& model, int transitions) {
  for (int i = 0; i < transitions; ++i) model.record(1, i % 10 < 7 ? 2 : 3);
}

TEST(SuccessorModel, BranchingPredictsOnlyTheLikelySideAboveHalf) {
  IntModel model({.min_confidence = 0.5});
  record_branching(model, 200);
  Predictions out;
  ASSERT_EQ(model.predict(1, out), 1u);
  EXPECT_EQ(out[0].key, 2u);
  EXPECT_NEAR(out[0].confidence, 0.7, 0.08);
}

TEST(SuccessorModel, BranchingPredictsBothSidesBelowPointThree) {
  IntModel model({.min_confidence = 0.25});
  record_branching(model, 200);
  Predictions out;
  ASSERT_EQ(model.predict(1, out), 2u);
  EXPECT_EQ(out[0].key, 2u);  // strongest first
  EXPECT_EQ(out[1].key, 3u);
  EXPECT_NEAR(out[0].confidence, 0.7, 0.08);
  EXPECT_NEAR(out[1].confidence, 0.3, 0.08);
}

TEST(SuccessorModel, ASmallerSpanGetsTheStrongest) {
  IntModel model({.min_confidence = 0.25});
  record_branching(model, 200);
  std::array<Prediction<std::uint64_t>, 1> one;
  ASSERT_EQ(model.predict(1, one), 1u);
  EXPECT_EQ(one[0].key, 2u);
  EXPECT_EQ(model.predict(1, std::span<Prediction<std::uint64_t>>{}), 0u);
}

TEST(SuccessorModel, LearnsCycle) {
  IntModel model;
  AccessStream<std::uint64_t> stream;
  for (int lap = 0; lap < 5; ++lap) {
    for (std::uint64_t key : {1, 2, 3}) stream.advance(model, key);
  }
  EXPECT_EQ(predicted(model, 1), Keys{2});
  EXPECT_EQ(predicted(model, 2), Keys{3});
  EXPECT_EQ(predicted(model, 3), Keys{1});
}

// Share of `probes` keys (drawn from the stream's key space) for which anything is predicted.
double share_predicted(const IntModel& model, std::uint64_t key_space, int probes) {
  std::mt19937_64 rng(7);
  int with_prediction = 0;
  for (int i = 0; i < probes; ++i) {
    if (!predicted(model, rng() % key_space).empty()) ++with_prediction;
  }
  return static_cast<double>(with_prediction) / probes;
}

TEST(SuccessorModel, RandomKeysOverALargeSpaceYieldAlmostNoPredictions) {
  IntModel model;
  AccessStream<std::uint64_t> stream;
  std::mt19937_64 rng(42);
  constexpr std::uint64_t kKeySpace = 100'000;
  for (int i = 0; i < 1'000'000; ++i) stream.advance(model, rng() % kKeySpace);
  EXPECT_LT(share_predicted(model, kKeySpace, 10'000), 0.01);
}

TEST(SuccessorModel, RandomKeysOverASmallSpaceYieldAlmostNoPredictions) {
  // Every key is seen thousands of times here, so its row is full of successors: none of them may
  // stand out.
  IntModel model;
  AccessStream<std::uint64_t> stream;
  std::mt19937_64 rng(42);
  constexpr std::uint64_t kKeySpace = 100;
  for (int i = 0; i < 300'000; ++i) stream.advance(model, rng() % kKeySpace);
  EXPECT_LT(share_predicted(model, kKeySpace, 10'000), 0.01);
}

TEST(SuccessorModel, MemoryStaysFixedUnderTenMillionDistinctKeys) {
  IntModel model({.rows = 1 << 12});
  const std::size_t before = model.memory_bytes();
  EXPECT_EQ(model.row_count(), 4096u);
  EXPECT_EQ(before, sizeof(model) + 4096 * IntModel::row_bytes());
  for (std::uint64_t key = 0; key < 10'000'000; ++key) model.record(key, key + 1);
  EXPECT_EQ(model.row_count(), 4096u);
  EXPECT_EQ(model.memory_bytes(), before);
}

TEST(SuccessorModel, StringKeysStayWithinTheStatedBound) {
  using StringModel = SuccessorModel<std::string>;
  constexpr std::size_t kRows = 256;
  constexpr std::size_t kMaxKeyBytes = 48;
  StringModel model({.rows = kRows, .max_key_bytes = kMaxKeyBytes});
  // The bound of successor_model.h's header: each of a row's 1 + W keys owns at most one
  // allocation of about max_key_bytes (with malloc's rounding).
  const std::size_t bound =
      sizeof(model) +
      kRows * (StringModel::row_bytes() + (1 + StringModel::kMaxPredictions) * (kMaxKeyBytes + 32));
  const std::string pad(40, 'x');  // past the small-string buffer: every key owns heap bytes
  for (std::size_t i = 0; i < 200'000; ++i) {
    model.record(test_support::numbered(pad, i), test_support::numbered(pad, i + 1));
  }
  const std::size_t after_first = model.memory_bytes();
  EXPECT_LE(after_first, bound);
  for (std::size_t i = 200'000; i < 400'000; ++i) {
    model.record(test_support::numbered(pad, i), test_support::numbered(pad, i + 1));
  }
  EXPECT_LE(model.memory_bytes(), bound);
  // Keys over max_key_bytes are not recorded at all.
  const std::string long_key(kMaxKeyBytes + 1, 'y');
  EXPECT_EQ(model.record(long_key, "a"), RecordOutcome::kSkipped);
  EXPECT_EQ(model.record("a", long_key), RecordOutcome::kSkipped);
}

TEST(SuccessorModel, DecayLetsAChangedPatternTakeOver) {
  IntModel model;  // decay_period 64
  for (int i = 0; i < 10'000; ++i) model.record(1, 2);
  ASSERT_EQ(predicted(model, 1), Keys{2});
  int transitions = 0;
  while (predicted(model, 1) != Keys{3}) {
    model.record(1, 3);
    ASSERT_LT(++transitions, 2 * 64) << "the new successor should win within two periods";
  }
  // and the old one fades out completely.
  for (int i = 0; i < 4 * 64; ++i) model.record(1, 3);
  Predictions out;
  ASSERT_EQ(model.predict(1, out), 1u);
  EXPECT_EQ(out[0].key, 3u);
}

TEST(SuccessorModel, ANewSuccessorTakesTheWeakestPlace) {
  IntModel model({.min_confidence = 0.0});
  for (int i = 0; i < 8; ++i) model.record(1, 2);
  for (int i = 0; i < 6; ++i) model.record(1, 3);
  for (int i = 0; i < 4; ++i) model.record(1, 4);
  for (int i = 0; i < 2; ++i) model.record(1, 5);
  EXPECT_EQ(predicted(model, 1), (Keys{2, 3, 4, 5}));
  // 6 replaces 5 (the weakest, count 2) and inherits its count: it ranks, but its guaranteed
  // count is the 1 transition seen, under min_count.
  EXPECT_EQ(model.record(1, 6), RecordOutcome::kAdded);
  EXPECT_EQ(predicted(model, 1), (Keys{2, 3, 4}));
  EXPECT_EQ(model.record(1, 6), RecordOutcome::kCounted);
  EXPECT_EQ(predicted(model, 1), (Keys{2, 3, 4, 6}));
}

// Every key to one row, to pin how two keys share it.
struct OneRowHash {
  std::uint64_t operator()(std::uint64_t) const noexcept { return 0; }
};

TEST(SuccessorModel, ARowStaysWithItsKeyForItsTenure) {
  SuccessorModel<std::uint64_t, OneRowHash> model({.rows = 2, .owner_tenure = 8});
  EXPECT_EQ(model.record(1, 2), RecordOutcome::kClaimed);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(model.record(1, 2), RecordOutcome::kCounted);
  for (int claim = 0; claim < 7; ++claim) {
    EXPECT_EQ(model.record(10, 11), RecordOutcome::kRowHeld) << claim;
  }
  std::array<Prediction<std::uint64_t>, 4> out;
  EXPECT_EQ(model.predict(1, out), 1u);
  EXPECT_EQ(model.record(10, 11), RecordOutcome::kClaimed);
  EXPECT_EQ(model.predict(1, out), 0u);
  model.record(10, 11);
  ASSERT_EQ(model.predict(10, out), 1u);
  EXPECT_EQ(out[0].key, 11u);
}

TEST(SuccessorModel, TheMoreFrequentKeyKeepsASharedRow) {
  SuccessorModel<std::uint64_t, OneRowHash> model({.rows = 2});
  for (int i = 0; i < 1000; ++i) {
    model.record(1, 2);
    model.record(1, 2);
    model.record(10, 11);  // half as often
  }
  std::array<Prediction<std::uint64_t>, 4> out;
  ASSERT_EQ(model.predict(1, out), 1u);
  EXPECT_EQ(out[0].key, 2u);
  EXPECT_EQ(model.predict(10, out), 0u);
}

TEST(SuccessorModel, SelfTransitionsAreSkipped) {
  IntModel model;
  EXPECT_EQ(model.record(1, 1), RecordOutcome::kSkipped);
  EXPECT_EQ(predicted(model, 1), Keys{});
}

TEST(SuccessorModel, RowsAreRoundedUpToAPowerOfTwo) {
  EXPECT_EQ(IntModel({.rows = 1000}).row_count(), 1024u);
  EXPECT_EQ(IntModel({.rows = 0}).row_count(), 2u);
}

TEST(SuccessorModel, StringKeysArePredictedWhole) {
  SuccessorModel<std::string> model;
  AccessStream<std::string> stream;
  const std::string a = "user:1:profile-with-a-name-longer-than-sso";
  const std::string b = "user:1:avatar-with-a-name-longer-than-sso";
  for (int i = 0; i < 4; ++i) {
    stream.advance(model, a);
    stream.advance(model, b);
  }
  std::array<Prediction<std::string>, 4> out;
  ASSERT_EQ(model.predict(a, out), 1u);
  EXPECT_EQ(out[0].key, b);
  ASSERT_EQ(model.predict(b, out), 1u);
  EXPECT_EQ(out[0].key, a);
}

}  // namespace
}  // namespace chronocache
