// Pins FrequencySketch (policy/frequency_sketch.h): the doorkeeper absorbs first sightings,
// counters saturate at 15, aging halves them after the set period, and growing the table keeps
// every estimate.
#include "chronocache/policy/frequency_sketch.h"

#include <cstdint>

#include "chronocache/base/hash.h"

#include <gtest/gtest.h>

namespace chronocache::detail {
namespace {

std::uint64_t key(std::uint64_t n) { return hash_integer(n); }

void see(FrequencySketch& sketch, std::uint64_t n, int times) {
  for (int i = 0; i < times; ++i) sketch.increment(key(n));
}

TEST(FrequencySketch, EstimatesCountSightingsWithTheDoorkeeperAsTheFirst) {
  FrequencySketch sketch;
  sketch.ensure_capacity(1024);
  EXPECT_EQ(sketch.estimate(key(1)), 0u);
  see(sketch, 1, 1);
  EXPECT_EQ(sketch.estimate(key(1)), 1u);  // the doorkeeper's bit only
  see(sketch, 2, 3);
  EXPECT_EQ(sketch.estimate(key(2)), 3u);  // doorkeeper + 2 in the counters
  EXPECT_EQ(sketch.estimate(key(3)), 0u);
}

TEST(FrequencySketch, CountersSaturateAtFifteen) {
  FrequencySketch sketch;
  sketch.ensure_capacity(1024);
  see(sketch, 7, 100);
  EXPECT_EQ(sketch.estimate(key(7)), FrequencySketch::kMaxCount + 1);  // 15 + the doorkeeper
}

TEST(FrequencySketch, AgingHalvesCountersAndClearsTheDoorkeeper) {
  FrequencySketch sketch;
  sketch.ensure_capacity(1024);
  see(sketch, 1, 1);   // doorkeeper only
  see(sketch, 2, 10);  // doorkeeper + 9
  sketch.age();
  EXPECT_EQ(sketch.estimate(key(1)), 0u) << "a key seen once is forgotten";
  EXPECT_EQ(sketch.estimate(key(2)), 4u) << "9 / 2, no doorkeeper bit";
  see(sketch, 1, 1);
  EXPECT_EQ(sketch.estimate(key(1)), 1u) << "the doorkeeper takes it again";
}

TEST(FrequencySketch, AgesByItselfAfterThePeriod) {
  FrequencySketch sketch;
  sketch.ensure_capacity(1024);
  sketch.set_aging_period(FrequencySketch::aging_period_for(100));
  EXPECT_EQ(sketch.sample_size(), 1000u);
  see(sketch, 5, 13);  // 13 sightings: the doorkeeper + 12
  EXPECT_EQ(sketch.estimate(key(5)), 13u);
  // 987 more sightings of other keys (some absorbed by the doorkeeper, some collide: each counts
  // one sample either way) reach the period exactly once.
  for (std::uint64_t n = 1000; n < 1000 + 987; ++n) sketch.increment(key(n % 1200 + 1000));
  EXPECT_EQ(sketch.estimate(key(5)), 6u) << "12 / 2 and the doorkeeper cleared";
}

TEST(FrequencySketch, WithoutAPeriodItNeverAges) {
  FrequencySketch sketch;
  sketch.ensure_capacity(64);
  see(sketch, 5, 8);
  for (std::uint64_t n = 100; n < 100'000; ++n) sketch.increment(key(n));
  EXPECT_GE(sketch.estimate(key(5)), 8u);  // collisions may only raise it
}

TEST(FrequencySketch, GrowingKeepsEveryEstimate) {
  FrequencySketch sketch;
  sketch.ensure_capacity(64);
  for (std::uint64_t n = 0; n < 40; ++n) see(sketch, n, static_cast<int>(n % 7) + 1);
  unsigned before[40];
  for (std::uint64_t n = 0; n < 40; ++n) before[n] = sketch.estimate(key(n));
  sketch.ensure_capacity(5000);
  EXPECT_GE(sketch.capacity(), 5000u);
  for (std::uint64_t n = 0; n < 40; ++n) EXPECT_EQ(sketch.estimate(key(n)), before[n]) << n;
  const std::size_t bytes = sketch.memory_bytes();
  sketch.ensure_capacity(100);  // never shrinks
  EXPECT_EQ(sketch.memory_bytes(), bytes);
}

TEST(FrequencySketch, ClearForgetsEverything) {
  FrequencySketch sketch;
  sketch.ensure_capacity(64);
  see(sketch, 3, 5);
  sketch.clear();
  EXPECT_EQ(sketch.estimate(key(3)), 0u);
}

}  // namespace
}  // namespace chronocache::detail
