// Pins the two clocks: ManualClock moves only when told, CoarseClock tracks steady_clock to the
// millisecond and never runs backwards, however many threads refresh it.
#include "chronocache/clock/clock.h"
#include "chronocache/clock/coarse_clock.h"
#include "chronocache/clock/manual_clock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace chronocache {
namespace {

using namespace std::chrono_literals;

static_assert(Clock<ManualClock>);
static_assert(Clock<CoarseClock>);

TimePoint steady_now_ms() {
  return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
}

// Polls (never a fixed sleep) until the tick passes `reading`; false after two seconds.
bool tick_passes(const CoarseClock& clock, TimePoint reading) {
  const auto give_up = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < give_up) {
    if (clock.now() > reading) return true;
    std::this_thread::sleep_for(1ms);
  }
  return clock.now() > reading;
}

TEST(ManualClock, StartsAwayFromTimeZero) {
  const ManualClock clock;
  EXPECT_NE(clock.now(), TimePoint{});
  EXPECT_EQ(clock.now(), clock.now());
}

TEST(ManualClock, StartsWhereTheTestSays) {
  const ManualClock clock(TimePoint(Duration(42)));
  EXPECT_EQ(clock.now(), TimePoint(Duration(42)));
}

TEST(ManualClock, AdvanceMovesTimeByExactlyTheStep) {
  ManualClock clock;
  const TimePoint start = clock.now();
  clock.advance(5s);
  EXPECT_EQ(clock.now(), start + 5s);
  clock.advance(1ms);
  EXPECT_EQ(clock.now(), start + 5001ms);
  clock.advance(0ms);
  EXPECT_EQ(clock.now(), start + 5001ms);
  clock.advance(std::chrono::days(400));
  EXPECT_EQ(clock.now(), start + 5001ms + std::chrono::days(400));
}

TEST(ManualClock, CopiesMoveIndependently) {
  ManualClock clock;
  const ManualClock copy = clock;
  clock.advance(1s);
  EXPECT_EQ(clock.now(), copy.now() + 1s);
}

TEST(ManualClockDeathTest, RefusesToRunBackwards) {
  ManualClock clock;
  EXPECT_DEATH(clock.advance(-1ms), "only moves forward");
}

TEST(CoarseClock, ReadsSteadyClockToTheMillisecondAfterRefresh) {
  const CoarseClock clock;
  for (int i = 0; i < 100; ++i) {
    const TimePoint before = steady_now_ms();
    const TimePoint refreshed = CoarseClock::refresh();
    const TimePoint read = clock.now();
    const TimePoint after = steady_now_ms();
    EXPECT_LE(before, refreshed);
    EXPECT_LE(refreshed, read);  // the ticker may have moved it on, never back
    EXPECT_LE(read, after);
  }
}

TEST(CoarseClock, AFreshClockIsAlreadyCurrent) {
  const TimePoint before = steady_now_ms();
  const CoarseClock clock;
  const TimePoint read = clock.now();
  EXPECT_LE(before, read);
  EXPECT_LE(read, steady_now_ms());
}

TEST(CoarseClock, TheTickerAdvancesItWithoutRefreshCalls) {
  const CoarseClock clock;
  EXPECT_TRUE(tick_passes(clock, clock.now()));
}

TEST(CoarseClock, TheTickerKeepsRunningWhileACopyOutlivesTheOriginal) {
  std::optional<CoarseClock> original(std::in_place);
  const CoarseClock copy = *original;
  original.reset();
  EXPECT_TRUE(tick_passes(copy, copy.now()));
}

TEST(CoarseClock, TheTickerRestartsAfterEveryClockWasDestroyed) {
  { const CoarseClock first; }
  const CoarseClock second;
  EXPECT_TRUE(tick_passes(second, second.now()));
}

// A prefork host: caches made before fork() keep their time moving in the child, which inherits
// no ticker thread and must not inherit the ticker's lock held either.
TEST(CoarseClock, AForkedChildGetsItsOwnTicker) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer refuses to start threads in the child of a threaded fork";
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  GTEST_SKIP() << "ThreadSanitizer refuses to start threads in the child of a threaded fork";
#endif
#endif
  const CoarseClock clock;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const bool ticks = tick_passes(clock, clock.now());
    { const CoarseClock another; }  // attach and detach: the lock is usable in the child
    _exit(ticks && tick_passes(clock, clock.now()) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(CoarseClock, NeverRunsBackwardsWhileTwoThreadsRefresh) {
  const CoarseClock clock;
  std::atomic<bool> backwards{false};
  auto refresher = [&] {
    TimePoint last_read = clock.now();
    TimePoint last_refresh = CoarseClock::refresh();
    for (int i = 0; i < 100'000; ++i) {
      const TimePoint refreshed = CoarseClock::refresh();
      const TimePoint read = clock.now();
      if (refreshed < last_refresh || read < last_read || read < refreshed) backwards = true;
      last_refresh = refreshed;
      last_read = read;
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(2);
  for (int t = 0; t < 2; ++t) threads.emplace_back(refresher);
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(backwards);
}

}  // namespace
}  // namespace chronocache
