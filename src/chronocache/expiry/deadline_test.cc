// Pins the arithmetic under every TTL: rounding up to whole milliseconds, saturation instead of
// overflow, and the 32-bit relative encoding with its rebase (expiry/deadline.h).
#include "chronocache/expiry/deadline.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>

#include <gtest/gtest.h>

namespace chronocache::detail {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kTwoTo31 = std::int64_t{1} << 31;
constexpr std::int64_t kTwoTo32 = std::int64_t{1} << 32;

// The encoding must round at compile time too (a constexpr TTL costs nothing at run time).
static_assert(ttl_to_ms(1us) == 1);
static_assert(ttl_to_ms(-1ns) == -1);
static_assert(kWindow.count() == kTwoTo32 - 2,
              "the largest stored value below the no-deadline mark");
static_assert(kRebaseAfter.count() == kTwoTo31);
static_assert(kWindowEndStored == kWindow.count(), "the window's end, stored as itself");

TEST(TtlToMs, ZeroStaysZeroInEveryUnit) {
  EXPECT_EQ(ttl_to_ms(0ns), 0);
  EXPECT_EQ(ttl_to_ms(0us), 0);
  EXPECT_EQ(ttl_to_ms(0ms), 0);
  EXPECT_EQ(ttl_to_ms(0s), 0);
  EXPECT_EQ(ttl_to_ms(0min), 0);
  EXPECT_EQ(ttl_to_ms(0h), 0);
}

TEST(TtlToMs, NegativeTtlsBecomeMinusOneInEveryUnit) {
  EXPECT_EQ(ttl_to_ms(-1ns), -1);
  EXPECT_EQ(ttl_to_ms(-999us), -1);
  EXPECT_EQ(ttl_to_ms(-1ms), -1);
  EXPECT_EQ(ttl_to_ms(-7s), -1);
  EXPECT_EQ(ttl_to_ms(-3min), -1);
  EXPECT_EQ(ttl_to_ms(-5h), -1);
  EXPECT_EQ(ttl_to_ms(std::chrono::nanoseconds::min()), -1);
  EXPECT_EQ(ttl_to_ms(std::chrono::hours::min()), -1);
}

TEST(TtlToMs, SubMillisecondTtlsRoundUpToOneMillisecond) {
  EXPECT_EQ(ttl_to_ms(1ns), 1);
  EXPECT_EQ(ttl_to_ms(999'999ns), 1);
  EXPECT_EQ(ttl_to_ms(1us), 1);
  EXPECT_EQ(ttl_to_ms(999us), 1);
}

TEST(TtlToMs, FractionalMillisecondsRoundUpAndWholeOnesStayExact) {
  EXPECT_EQ(ttl_to_ms(1'000'000ns), 1);
  EXPECT_EQ(ttl_to_ms(1'000'001ns), 2);
  EXPECT_EQ(ttl_to_ms(1000us), 1);
  EXPECT_EQ(ttl_to_ms(1001us), 2);
  EXPECT_EQ(ttl_to_ms(2999us), 3);
  EXPECT_EQ(ttl_to_ms(1ms), 1);
  EXPECT_EQ(ttl_to_ms(123'456ms), 123'456);
}

TEST(TtlToMs, CoarseUnitsScaleExactly) {
  EXPECT_EQ(ttl_to_ms(5s), 5'000);
  EXPECT_EQ(ttl_to_ms(2min), 120'000);
  EXPECT_EQ(ttl_to_ms(3h), 10'800'000);
  EXPECT_EQ(ttl_to_ms(std::chrono::days(400)), 400LL * 86'400'000);
}

TEST(TtlToMs, UnitsWithAFractionalPeriodRoundUp) {
  using Thirds = std::chrono::duration<std::int64_t, std::ratio<1, 3>>;  // 333.33 ms each
  EXPECT_EQ(ttl_to_ms(Thirds(1)), 334);
  EXPECT_EQ(ttl_to_ms(Thirds(3)), 1000);
}

TEST(TtlToMs, SmallRepresentationsDoNotOverflowWhileScaling) {
  using ByteHours = std::chrono::duration<std::int8_t, std::ratio<3600>>;
  EXPECT_EQ(ttl_to_ms(ByteHours(100)), 360'000'000);
  using ShortSeconds = std::chrono::duration<std::int16_t>;
  EXPECT_EQ(ttl_to_ms(ShortSeconds(30'000)), 30'000'000);
}

TEST(TtlToMs, HugeTtlsSaturateInsteadOfOverflowing) {
  EXPECT_EQ(ttl_to_ms(std::chrono::milliseconds::max()), kInt64Max);
  EXPECT_EQ(ttl_to_ms(std::chrono::seconds::max()), kInt64Max);
  EXPECT_EQ(ttl_to_ms(std::chrono::minutes::max()), kInt64Max);
  EXPECT_EQ(ttl_to_ms(std::chrono::hours::max()), kInt64Max);
  // Finer units divide, so their maximum is a finite (rounded up) number of milliseconds.
  EXPECT_EQ(ttl_to_ms(std::chrono::nanoseconds::max()), 9'223'372'036'855);
  EXPECT_EQ(ttl_to_ms(std::chrono::microseconds::max()), 9'223'372'036'854'776);
}

TEST(TtlToMs, SaturationStartsExactlyWhereTheProductWouldOverflow) {
  constexpr std::int64_t kLargestExactSeconds = kInt64Max / 1000;
  EXPECT_EQ(ttl_to_ms(std::chrono::seconds(kLargestExactSeconds)), kLargestExactSeconds * 1000);
  EXPECT_EQ(ttl_to_ms(std::chrono::seconds(kLargestExactSeconds + 1)), kInt64Max);
}

TEST(TtlToMs, UnsignedRepresentationsConvertLikeSignedOnes) {
  EXPECT_EQ(ttl_to_ms(std::chrono::duration<std::uint32_t, std::milli>(5)), 5);
  EXPECT_EQ(ttl_to_ms(std::chrono::duration<std::uint64_t, std::micro>(1)), 1);
  EXPECT_EQ(ttl_to_ms(std::chrono::duration<std::uint64_t>(0)), 0);
}

// "Any integral duration ... saturating at the int64 maximum": an unsigned count above INT64_MAX
// is a huge positive TTL, never a negative one (which would delete the key on put).
TEST(TtlToMs, HugeUnsignedTtlsSaturateInsteadOfTurningNegative) {
  EXPECT_EQ(ttl_to_ms(std::chrono::duration<std::uint64_t, std::milli>(
                std::numeric_limits<std::uint64_t>::max())),
            kInt64Max);
  EXPECT_EQ(ttl_to_ms(std::chrono::duration<std::uint64_t, std::milli>(std::uint64_t{1} << 63)),
            kInt64Max);
  EXPECT_EQ(ttl_to_ms(std::chrono::duration<std::uint64_t, std::nano>(
                std::numeric_limits<std::uint64_t>::max())),
            18'446'744'073'710);
}

TEST(DeadlineAfter, AddsTheTtlToNow) {
  const TimePoint now(Duration(1'000'000));
  EXPECT_EQ(deadline_after(now, 1), now + 1ms);
  EXPECT_EQ(deadline_after(now, 86'400'000), now + 24h);
}

TEST(DeadlineAfter, PassingTheEndOfTimeMeansNever) {
  const TimePoint now(Duration(1'000'000));
  const std::int64_t headroom = (TimePoint::max() - now).count();
  EXPECT_EQ(deadline_after(now, headroom - 1), TimePoint::max() - 1ms);
  EXPECT_EQ(deadline_after(now, headroom), kNever);
  EXPECT_EQ(deadline_after(now, kInt64Max), kNever);
  EXPECT_EQ(deadline_after(TimePoint::max() - 1ms, 1), kNever);
  EXPECT_EQ(deadline_after(TimePoint::max() - 1ms, kInt64Max), kNever);
}

TEST(DeadlineEpoch, EncodesDeadlinesAsMillisecondsAfterTheEpoch) {
  const TimePoint epoch(Duration(5'000));
  const DeadlineEpoch e(epoch);
  EXPECT_EQ(e.encode(epoch + 1ms), 1u);
  EXPECT_EQ(e.encode(epoch + 24h), 86'400'000u);
  EXPECT_EQ(e.decode(1), epoch + 1ms);
  EXPECT_EQ(e.decode(86'400'000), epoch + 24h);
}

TEST(DeadlineEpoch, DeadlinesAtOrBeforeTheEpochEncodeAsExpired) {
  const TimePoint epoch(Duration(5'000));
  const DeadlineEpoch e(epoch);
  EXPECT_EQ(e.encode(epoch), kExpiredMark);
  EXPECT_EQ(e.encode(epoch - 1ms), kExpiredMark);
  EXPECT_EQ(e.encode(TimePoint(Duration(0))), kExpiredMark);
}

TEST(DeadlineEpoch, TheWindowEndsOneBelowTheNoDeadlineMark) {
  const TimePoint epoch(Duration(5'000));
  const DeadlineEpoch e(epoch);
  EXPECT_EQ(e.encode(epoch + kWindow), static_cast<StoredDeadline>(kTwoTo32 - 2));
  EXPECT_EQ(e.decode(e.encode(epoch + kWindow)), epoch + kWindow);
  EXPECT_EQ(e.encode(epoch + kWindow + 1ms), kNoDeadlineInWindow);
  EXPECT_EQ(e.encode(epoch + std::chrono::days(400)), kNoDeadlineInWindow);
  EXPECT_EQ(e.encode(kNever), kNoDeadlineInWindow);
  EXPECT_EQ(e.encode(kNever - 1ms), kNoDeadlineInWindow);
}

TEST(DeadlineEpoch, EncodeThenDecodeIsExactAcrossTheWindow) {
  const TimePoint epoch(Duration(123'456'789));
  const DeadlineEpoch e(epoch);
  for (std::int64_t offset : {std::int64_t{1}, std::int64_t{999}, kTwoTo31 - 1, kTwoTo31,
                              kTwoTo31 + 1, kTwoTo32 - 3, kTwoTo32 - 2}) {
    SCOPED_TRACE(offset);
    EXPECT_EQ(e.decode(e.encode(epoch + Duration(offset))), epoch + Duration(offset));
  }
}

TEST(DeadlineEpoch, IsLiveStrictlyBeforeTheStoredValue) {
  EXPECT_TRUE(DeadlineEpoch::is_live(1, 0));
  EXPECT_FALSE(DeadlineEpoch::is_live(1, 1));
  EXPECT_FALSE(DeadlineEpoch::is_live(kExpiredMark, 0));
  EXPECT_TRUE(DeadlineEpoch::is_live(1000, 999));
  EXPECT_FALSE(DeadlineEpoch::is_live(1000, 1000));
  EXPECT_FALSE(DeadlineEpoch::is_live(1000, 1001));
  EXPECT_TRUE(
      DeadlineEpoch::is_live(kNoDeadlineInWindow, static_cast<std::uint32_t>(kTwoTo31 - 1)));
  EXPECT_TRUE(DeadlineEpoch::is_live(static_cast<StoredDeadline>(kTwoTo32 - 2),
                                     static_cast<std::uint32_t>(kTwoTo31 - 1)));
}

TEST(DeadlineEpoch, IsLiveAtIsExactForAnyNowWithoutARebase) {
  const TimePoint epoch(Duration(5'000));
  const DeadlineEpoch e(epoch);
  EXPECT_TRUE(e.is_live_at(10, epoch + 9ms));
  EXPECT_FALSE(e.is_live_at(10, epoch + 10ms));
  const auto far = static_cast<StoredDeadline>(kTwoTo32 - 2);
  // Far past the rebase point (the const paths never rebase): still exact.
  EXPECT_TRUE(e.is_live_at(far, epoch + Duration(kTwoTo32 - 3)));
  EXPECT_FALSE(e.is_live_at(far, epoch + Duration(kTwoTo32 - 2)));
  EXPECT_FALSE(e.is_live_at(kExpiredMark, epoch));
  EXPECT_TRUE(e.is_live_at(kNoDeadlineInWindow, epoch + std::chrono::days(10'000)));
}

TEST(DeadlineEpoch, RelativeNowCountsMillisecondsFromTheEpoch) {
  const TimePoint epoch(Duration(5'000));
  const DeadlineEpoch e(epoch);
  EXPECT_EQ(e.unchecked_relative_now(epoch), 0u);
  EXPECT_EQ(e.unchecked_relative_now(epoch + 42ms), 42u);
  EXPECT_EQ(e.unchecked_relative_now(epoch + Duration(kTwoTo31 - 1)),
            static_cast<std::uint64_t>(kTwoTo31 - 1));
}

TEST(DeadlineEpoch, ARelativeNowIsUsableBelowTwoToThe31Milliseconds) {
  const TimePoint epoch(Duration(5'000));
  const DeadlineEpoch e(epoch);
  EXPECT_TRUE(DeadlineEpoch::is_usable(e.unchecked_relative_now(epoch)));
  EXPECT_TRUE(DeadlineEpoch::is_usable(e.unchecked_relative_now(epoch + Duration(kTwoTo31 - 1))));
  EXPECT_FALSE(DeadlineEpoch::is_usable(e.unchecked_relative_now(epoch + Duration(kTwoTo31))));
  EXPECT_FALSE(DeadlineEpoch::is_usable(e.unchecked_relative_now(epoch + std::chrono::days(1000))));
}

TEST(DeadlineEpoch, AReadingBeforeTheEpochIsNeitherUsableNorMistakenForARebase) {
  const TimePoint epoch(Duration(5'000));
  const DeadlineEpoch e(epoch);
  EXPECT_FALSE(DeadlineEpoch::is_usable(e.unchecked_relative_now(epoch - 1ms)));
  EXPECT_TRUE(e.is_before_epoch(epoch - 1ms));
  EXPECT_FALSE(e.is_before_epoch(epoch));
  EXPECT_FALSE(e.is_before_epoch(epoch + Duration(kTwoTo31)));
}

TEST(DeadlineEpoch, AdvanceToMovesTheEpochAndReturnsTheShift) {
  DeadlineEpoch e(TimePoint(Duration(5'000)));
  EXPECT_EQ(e.advance_to(TimePoint(Duration(5'000) + Duration(kTwoTo31))),
            static_cast<std::uint64_t>(kTwoTo31));
  EXPECT_EQ(e.epoch(), TimePoint(Duration(5'000) + Duration(kTwoTo31)));
  EXPECT_EQ(e.advance_to(e.epoch()), 0u);
}

TEST(DeadlineEpoch, ShiftedMovesLiveValuesDownAndPastOnesToExpired) {
  EXPECT_EQ(DeadlineEpoch::shifted(1000, 1), 999u);
  EXPECT_EQ(DeadlineEpoch::shifted(1000, 999), 1u);
  EXPECT_EQ(DeadlineEpoch::shifted(1000, 1000), kExpiredMark);  // deadline == new epoch: expired
  EXPECT_EQ(DeadlineEpoch::shifted(1000, 1001), kExpiredMark);
  EXPECT_EQ(DeadlineEpoch::shifted(kExpiredMark, 5), kExpiredMark);
  // A shift wider than 32 bits (a jump of more than 49 days) must not wrap around.
  EXPECT_EQ(DeadlineEpoch::shifted(1000, (std::uint64_t{1} << 32) + 1), kExpiredMark);
  EXPECT_EQ(
      DeadlineEpoch::shifted(static_cast<StoredDeadline>(kTwoTo32 - 2), std::uint64_t{1} << 40),
      kExpiredMark);
}

TEST(DeadlineEpoch, ShiftedLeavesTheNoDeadlineMarkAlone) {
  EXPECT_EQ(DeadlineEpoch::shifted(kNoDeadlineInWindow, 1), kNoDeadlineInWindow);
  EXPECT_EQ(DeadlineEpoch::shifted(kNoDeadlineInWindow, std::uint64_t{1} << 40),
            kNoDeadlineInWindow);
}

TEST(DeadlineEpoch, ARebaseKeepsEveryDeadlineAtTheSameAbsoluteTime) {
  const TimePoint epoch(Duration(5'000));
  DeadlineEpoch e(epoch);
  const TimePoint deadlines[] = {epoch + Duration(kTwoTo31 + 1), epoch + Duration(kTwoTo32 - 2),
                                 epoch + 3h};
  StoredDeadline stored[3];
  for (int i = 0; i < 3; ++i) stored[i] = e.encode(deadlines[i]);
  const TimePoint now = epoch + Duration(kTwoTo31);
  const std::uint64_t shift = e.advance_to(now);
  for (int i = 0; i < 3; ++i) stored[i] = DeadlineEpoch::shifted(stored[i], shift);
  EXPECT_EQ(e.decode(stored[0]), deadlines[0]);
  EXPECT_EQ(e.decode(stored[1]), deadlines[1]);
  EXPECT_EQ(stored[2], kExpiredMark);
  EXPECT_TRUE(DeadlineEpoch::is_live(stored[0], 0));  // at the new epoch
  EXPECT_FALSE(DeadlineEpoch::is_live(stored[0], 1));
  EXPECT_EQ(e.unchecked_relative_now(now + 1ms), 1u);
}

}  // namespace
}  // namespace chronocache::detail
