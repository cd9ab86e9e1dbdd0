// The rate that turns time-stamp-counter cycles into the durations SLOWLOG, the latency
// histograms and INFO commandstats report.
#include "server/base/cycle_clock.h"

#include <chrono>

#include <gtest/gtest.h>

namespace chronocached {
namespace {

using namespace std::chrono_literals;

TEST(CycleClock, RateKeepsTheElapsedNanoseconds) {
  // 2 000 900 cycles over 2 000.9 us is 1 000 cycles a microsecond. Whole microseconds (2 000)
  // would give 1 000.45, and a 100 ms command timed with it would read 99 955 us.
  EXPECT_DOUBLE_EQ(cycles_per_usec(2'000'900, 2'000'900ns), 1000.0);
  EXPECT_DOUBLE_EQ(cycles_per_usec(3'000, 1'500ns), 2000.0);
  EXPECT_DOUBLE_EQ(cycles_per_usec(5, 0ns), 1000.0) << "no time: the 1 GHz guess";
}

TEST(CycleClock, AReadingPairsTheClockWithTheCountAroundIt) {
  const std::uint64_t cycles_before = cycles_now();
  const auto time_before = std::chrono::steady_clock::now();
  const ClockReading reading = read_clocks();
  const auto time_after = std::chrono::steady_clock::now();
  const std::uint64_t cycles_after = cycles_now();
  EXPECT_LE(time_before, reading.time);
  EXPECT_LE(reading.time, time_after);
  EXPECT_LE(cycles_before, reading.cycles);
  EXPECT_LE(reading.cycles, cycles_after);
}

}  // namespace
}  // namespace chronocached
