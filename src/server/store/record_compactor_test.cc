// RecordCompactor over a real Keyspace and arena, with the time handed in: the rules that keep it
// from working against a mass expiry (records due within kSpareHorizon stay where they are, and a
// pass waits kPassCooldown after the last one), and a pass that does give pages back.
#include "server/store/record_compactor.h"

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>

#include "server/store/keyspace.h"

#include <gtest/gtest.h>

namespace chronocached {
namespace {

using namespace std::chrono_literals;

constexpr int kKeys = 100'000;  // 28-byte records: ~44 arena pages of 64 KiB
const std::string kValue(16, 'v');

class RecordCompactorTest : public testing::Test {
 protected:
  RecordCompactorTest() : keyspace_(1, BlobHash(42), &now_), compactor_(keyspace_) {
    RecordCompactor::Settings settings;
    settings.ignore_bytes = 0;
    compactor_.configure(settings);
  }

  Db& db() { return keyspace_.db(0); }
  static std::string key(int i) { return "k:" + std::to_string(10'000'000 + i); }

  // Every other key, so that each arena page is left about half used.
  void erase_odd_keys() {
    for (int i = 1; i < kKeys; i += 2) ASSERT_TRUE(db().erase(key(i), now_));
  }

  // One slice with no time limit: a whole pass, when one starts.
  void run_slice() {
    compactor_.step(now_, [] { return true; });
  }

  TimePoint now_ = TimePoint{} + 1000s;
  Keyspace keyspace_;
  RecordCompactor compactor_;
};

TEST_F(RecordCompactorTest, APassMovesTheSurvivorsOfHalfUsedPagesAndGivesThePagesBack) {
  for (int i = 0; i < kKeys; ++i) db().put(key(i), kValue, kNoExpiry, now_);
  erase_odd_keys();
  const std::size_t pages_before = keyspace_.arena().pages_in_use();

  run_slice();

  EXPECT_FALSE(compactor_.running());
  EXPECT_EQ(compactor_.passes(), 1u);
  EXPECT_GT(compactor_.moved(), 0u);
  EXPECT_EQ(compactor_.spared(), 0u);
  EXPECT_LT(keyspace_.arena().pages_in_use(), pages_before * 3 / 4);
  for (int i = 0; i < kKeys; i += 2) {
    const Blob* record = db().find(key(i), now_);
    ASSERT_NE(record, nullptr) << key(i);
    EXPECT_EQ(record->view(), kValue);
  }
}

TEST_F(RecordCompactorTest, RecordsDueWithinTheHorizonAreLeftForExpiryToFree) {
  // The survivors expire just inside the horizon: the pass looks at them and moves none.
  const TimePoint soon = now_ + RecordCompactor::kSpareHorizon - 1ms;
  for (int i = 0; i < kKeys; ++i) db().put(key(i), kValue, soon, now_);
  erase_odd_keys();

  run_slice();

  EXPECT_EQ(compactor_.passes(), 1u);
  EXPECT_EQ(compactor_.moved(), 0u);
  EXPECT_GT(compactor_.spared(), 0u);
  EXPECT_LE(compactor_.spared(), std::size_t{kKeys / 2});
}

TEST_F(RecordCompactorTest, RecordsDueAfterTheHorizonAreMovedLikePersistentOnes) {
  const TimePoint later = now_ + RecordCompactor::kSpareHorizon;
  for (int i = 0; i < kKeys; ++i) db().put(key(i), kValue, later, now_);
  erase_odd_keys();

  run_slice();

  EXPECT_GT(compactor_.moved(), 0u);
  EXPECT_EQ(compactor_.spared(), 0u);
}

TEST_F(RecordCompactorTest, ANewPassWaitsForTheCooldownAfterTheLastOne) {
  for (int i = 0; i < kKeys; ++i) db().put(key(i), kValue, kNoExpiry, now_);
  erase_odd_keys();
  run_slice();
  ASSERT_EQ(compactor_.passes(), 1u);

  // Waste again: every other survivor leaves.
  for (int i = 0; i < kKeys; i += 4) ASSERT_TRUE(db().erase(key(i), now_));
  const std::uint64_t moved = compactor_.moved();

  now_ += RecordCompactor::kPassCooldown - 1ms;
  run_slice();
  EXPECT_EQ(compactor_.passes(), 1u);
  EXPECT_EQ(compactor_.moved(), moved);

  now_ += 1ms;
  run_slice();
  EXPECT_EQ(compactor_.passes(), 2u);
  EXPECT_GT(compactor_.moved(), moved);
}

TEST_F(RecordCompactorTest, APassIsTimedFromItsFirstSliceToItsLast) {
  for (int i = 0; i < kKeys; ++i) db().put(key(i), kValue, kNoExpiry, now_);
  erase_odd_keys();
  EXPECT_EQ(compactor_.total_pass_time(now_), 0ms);
  // Slices of one check each, 2 ms apart, until the pass ends.
  int slices = 0;
  do {
    bool first_check = true;
    compactor_.step(now_, [&] { return std::exchange(first_check, false); });
    ++slices;
    if (compactor_.running()) {
      EXPECT_EQ(compactor_.current_pass_time(now_), (slices - 1) * 2ms);
      now_ += 2ms;
    }
  } while (compactor_.running() && slices < 100'000);
  ASSERT_FALSE(compactor_.running());
  ASSERT_GT(slices, 2);
  EXPECT_EQ(compactor_.current_pass_time(now_), 0ms);
  EXPECT_EQ(compactor_.total_pass_time(now_), (slices - 1) * 2ms);

  compactor_.reset_stats(now_);
  EXPECT_EQ(compactor_.total_pass_time(now_ + 1s), 0ms);
}

TEST_F(RecordCompactorTest, TurnedOffItStartsNoPass) {
  RecordCompactor::Settings off;
  off.enabled = false;
  off.ignore_bytes = 0;
  compactor_.configure(off);
  for (int i = 0; i < kKeys; ++i) db().put(key(i), kValue, kNoExpiry, now_);
  erase_odd_keys();

  run_slice();

  EXPECT_EQ(compactor_.passes(), 0u);
  EXPECT_EQ(compactor_.moved(), 0u);
}

}  // namespace
}  // namespace chronocached
