// Deadlines in 32 bits: milliseconds after an epoch that the owning cache rebases.
//
// A deadline sits in every slot, so its width is paid per entry: 4 bytes instead of the 8 of a
// time_point. The stored value is the deadline's distance from `epoch` in ms:
//
//     stored value   meaning
//     0              expired (what a rebase leaves when it shifts a past deadline)
//     1 .. 2^32-2    expires at epoch + value ms
//     2^32-1         no deadline inside the window: never expires, or expires so far ahead
//                    that the owner keeps the exact time aside (see Cache's far deadlines)
//
// The owner rebases (epoch := 2^30 ms before now, every stored value shifted down) once `now` is
// 2^31 ms (24.8 days) past the epoch, so `now - epoch` always fits in 31 bits and a live check on
// the hot path is one unsigned compare: `stored > relative_now`. A deadline equal to now is
// expired: an entry is visible strictly before its deadline, never at it.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>

#include "chronocache/clock/clock.h"

namespace chronocache::detail {

using StoredDeadline = std::uint32_t;

inline constexpr StoredDeadline kExpiredMark = 0;
inline constexpr StoredDeadline kNoDeadlineInWindow = std::numeric_limits<std::uint32_t>::max();
// How far past the epoch `now` may go before a rebase: keeps relative_now below 2^31, so any
// stored value in the window still compares correctly.
inline constexpr Duration kRebaseAfter{std::int64_t{1} << 31};
// The furthest deadline a stored value can express, in stored form: the largest value below the
// no-deadline mark, and the lowest a far deadline can have, so it bounds every far deadline
// from below.
inline constexpr StoredDeadline kWindowEndStored = kNoDeadlineInWindow - 1;
// The same as a duration after the epoch.
inline constexpr Duration kWindow{kWindowEndStored};
// The longest TTL a put may store as `relative_now + ttl` (WindowDeadline): with relative_now
// below kRebaseAfter, the sum stays at or below kWindow, so it never reads as the mark.
inline constexpr std::int64_t kMaxWindowTtlMs = kRebaseAfter.count() - 1;

// A deadline already in stored form and inside the window: what a put with a TTL of 1 ms to
// kMaxWindowTtlMs stores, relative_now + ttl. It needs no encode, cannot be far, and cannot have
// passed (the TTL is positive), so the put skips three tests the absolute deadline needs.
struct WindowDeadline {
  StoredDeadline stored;

  static bool fits(std::int64_t ttl_ms) noexcept { return ttl_ms > 0 && ttl_ms <= kMaxWindowTtlMs; }
  // Precondition: fits(ttl_ms), and relative_now is now - epoch exactly, below kRebaseAfter.
  static WindowDeadline after(std::uint32_t relative_now, std::int64_t ttl_ms) noexcept {
    return WindowDeadline{static_cast<StoredDeadline>(relative_now + ttl_ms)};
  }
};

inline constexpr TimePoint kNever = TimePoint::max();

class DeadlineEpoch {
 public:
  explicit DeadlineEpoch(TimePoint epoch) noexcept : epoch_(epoch) {}

  TimePoint epoch() const noexcept { return epoch_; }

  // `now - epoch` in ms as an unsigned number. Live checks accept it only below kRebaseAfter
  // (is_usable); anything else means "rebase first", or for a reading before the epoch (a huge
  // unsigned value) "use 0". One subtraction and one compare on the hot path.
  std::uint64_t unchecked_relative_now(TimePoint now) const noexcept {
    return static_cast<std::uint64_t>((now - epoch_).count());
  }
  static bool is_usable(std::uint64_t relative_now) noexcept {
    return relative_now < static_cast<std::uint64_t>(kRebaseAfter.count());
  }
  bool is_before_epoch(TimePoint now) const noexcept { return now < epoch_; }

  static bool is_live(StoredDeadline stored, std::uint32_t relative_now) noexcept {
    return stored > relative_now;
  }

  // `now` is before epoch + stored: exact for every stored value but kNoDeadlineInWindow, which
  // it reads as a deadline at the window's end (epoch + 2^32 - 1 ms, later than any far
  // deadline's "beyond the window" and than any `now` until 49.7 days without a rebase).
  bool is_before_window_deadline(StoredDeadline stored, TimePoint now) const noexcept {
    return epoch_ + Duration(stored) > now;
  }

  // Exact for any `now`, rebased or not; used by const paths that may not rebase.
  bool is_live_at(StoredDeadline stored, TimePoint now) const noexcept {
    return stored == kNoDeadlineInWindow || epoch_ + Duration(stored) > now;
  }

  // kNoDeadlineInWindow when `deadline` is kNever or beyond the window. The common case (a
  // deadline inside the window, or at the epoch itself, whose 0 is kExpiredMark) costs one
  // subtraction and one compare: the difference is taken in unsigned arithmetic, so deadlines
  // before the epoch and kNever both land above the window and go to the rare branch.
  StoredDeadline encode(TimePoint deadline) const noexcept {
    static_assert(kExpiredMark == 0);
    const std::uint64_t delta = static_cast<std::uint64_t>(deadline.time_since_epoch().count()) -
                                static_cast<std::uint64_t>(epoch_.time_since_epoch().count());
    if (delta <= static_cast<std::uint64_t>(kWindow.count())) [[likely]]
      return static_cast<StoredDeadline>(delta);
    return deadline <= epoch_ ? kExpiredMark : kNoDeadlineInWindow;
  }

  // Precondition: stored != kNoDeadlineInWindow.
  TimePoint decode(StoredDeadline stored) const noexcept { return epoch_ + Duration(stored); }

  // Moves the epoch to `new_epoch` (>= epoch); returns the shift to apply to stored values.
  std::uint64_t advance_to(TimePoint new_epoch) noexcept {
    const auto shift = (new_epoch - epoch_).count();
    epoch_ = new_epoch;
    return static_cast<std::uint64_t>(shift);
  }

  static StoredDeadline shifted(StoredDeadline stored, std::uint64_t shift) noexcept {
    if (stored == kNoDeadlineInWindow) return stored;
    return stored > shift ? static_cast<StoredDeadline>(stored - shift) : kExpiredMark;
  }

 private:
  TimePoint epoch_;
};

// Converts a TTL of any integral duration to whole milliseconds, rounding up (a positive TTL
// never becomes zero) and saturating at the int64 maximum instead of overflowing.
template <class Rep, class Period>
constexpr std::int64_t ttl_to_ms(std::chrono::duration<Rep, Period> ttl) noexcept {
  static_assert(std::is_integral_v<Rep>, "TTL durations must have an integral count");
  using ToMs = std::ratio_divide<Period, std::milli>;
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  if constexpr (std::is_unsigned_v<Rep>) {
    // An unsigned count beyond int64 would turn negative below: convert it exactly in 128 bits.
    if (ttl.count() > static_cast<std::uint64_t>(kMax)) {
      __extension__ using U128 = unsigned __int128;
      const U128 scaled = static_cast<U128>(ttl.count()) * static_cast<U128>(ToMs::num);
      const U128 ms = scaled / static_cast<U128>(ToMs::den) +
                      (scaled % static_cast<U128>(ToMs::den) != 0 ? 1 : 0);
      return ms > static_cast<U128>(kMax) ? kMax : static_cast<std::int64_t>(ms);
    }
  }
  // An int8_t count is a number, not a byte: sign extension is meant.
  const auto count = static_cast<std::int64_t>(ttl.count());  // NOLINT(bugprone-signed-char-misuse)
  if (count <= 0) return count < 0 ? -1 : 0;
  if (count > kMax / ToMs::num) return kMax;
  const std::int64_t scaled = count * ToMs::num;
  return scaled / ToMs::den + (scaled % ToMs::den != 0 ? 1 : 0);
}

// now + ttl_ms, or kNever when that passes the end of time. An add that checks its overflow
// (an add and a cmov) rather than a headroom compare: two instructions fewer on every put with a
// TTL (callgrind, putSingle), and defined for a `now` before the clock's epoch too.
inline TimePoint deadline_after(TimePoint now, std::int64_t ttl_ms) noexcept {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(now.time_since_epoch().count(), ttl_ms, &sum)) return kNever;
  return TimePoint(Duration(sum));  // the end of time exactly is kNever as well
}

// The deadline a put with `ttl` at `now` gets: `now` itself for TTL <= 0 (expired on arrival),
// kNever past the end of time, else now + the TTL rounded up to whole milliseconds.
inline TimePoint deadline_for_ttl_ms(TimePoint now, std::int64_t ttl_ms) noexcept {
  return ttl_ms <= 0 ? now : deadline_after(now, ttl_ms);
}
template <class Rep, class Period>
TimePoint deadline_for_ttl(TimePoint now, std::chrono::duration<Rep, Period> ttl) noexcept {
  return deadline_for_ttl_ms(now, ttl_to_ms(ttl));
}

}  // namespace chronocache::detail
