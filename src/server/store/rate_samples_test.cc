// Pins RateSamples (rate_samples.h): per-second rates from a running total, their mean over the
// last 16 samples, where the count starts, and what a restart or a counter that goes back does.
#include "server/store/rate_samples.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace chronocached {
namespace {

TEST(RateSamples, CountsFromItsStartAndReadsZeroBeforeTheFirstSample) {
  RateSamples rate(1'000, 0);
  EXPECT_EQ(rate.per_second(), 0u);
  rate.add(1'100, 1'600);  // 16 000 a second over 100 ms, though the start took no sample
  EXPECT_EQ(rate.per_second(), 1'000u) << "one sample counts a sixteenth of the mean";
}

TEST(RateSamples, ASteadyRateReadsExactlyOnceEverySampleHoldsIt) {
  RateSamples rate;
  std::uint64_t total = 0;
  for (int i = 1; i <= 16; ++i) {
    total += 250;  // 2 500 a second at 100 ms a tick
    rate.add(i * 100, total);
  }
  EXPECT_EQ(rate.per_second(), 2'500u);
}

TEST(RateSamples, ABurstFadesOutOverSixteenIdleSamples) {
  RateSamples rate;
  rate.add(100, 16'000);  // 160 000 a second
  EXPECT_EQ(rate.per_second(), 10'000u);
  for (int i = 2; i <= 16; ++i) rate.add(i * 100, 16'000);
  EXPECT_EQ(rate.per_second(), 10'000u) << "the burst's sample is still among the last 16";
  rate.add(1'700, 16'000);
  EXPECT_EQ(rate.per_second(), 0u);
}

TEST(RateSamples, TheRateIsPerSecondWhateverTheTickLength) {
  RateSamples rate;
  rate.add(250, 400);  // 1 600 a second over 250 ms
  EXPECT_EQ(rate.per_second(), 100u);
}

TEST(RateSamples, RestartZeroesEverySampleAndCountsFromTheNewTotal) {
  RateSamples rate;
  rate.add(100, 1'600);
  rate.restart(150, 0);  // CONFIG RESETSTAT zeroed the counter at 150 ms
  EXPECT_EQ(rate.per_second(), 0u);
  rate.add(250, 160);  // what came after the reset, over the 100 ms since it
  EXPECT_EQ(rate.per_second(), 100u);
}

TEST(RateSamples, ATotalThatGoesBackAddsNoSampleAndCountsFromThere) {
  RateSamples rate(0, 1'000);
  rate.add(100, 10);  // reset elsewhere: no huge unsigned difference
  EXPECT_EQ(rate.per_second(), 0u);
  rate.add(200, 170);
  EXPECT_EQ(rate.per_second(), 100u);  // 160 over 100 ms, a sixteenth of the mean
}

TEST(RateSamples, CallsWithinAPeriodAreIgnoredSoSixteenSamplesSpanOnePointSixSeconds) {
  // A server at hz 100 ticks every 10 ms: still a sample every 100 ms.
  RateSamples rate;
  std::uint64_t total = 0;
  for (int ms = 10; ms <= 1'600; ms += 10) {
    total += 16;  // 1 600 a second
    rate.add(ms, total);
  }
  EXPECT_EQ(rate.per_second(), 1'600u);
  for (int ms = 1'610; ms <= 3'100; ms += 10) rate.add(ms, total);  // idle for 1.5 s
  EXPECT_EQ(rate.per_second(), 100u) << "one busy sample of 16 is left";
  rate.add(3'200, total);
  EXPECT_EQ(rate.per_second(), 0u);
}

}  // namespace
}  // namespace chronocached
