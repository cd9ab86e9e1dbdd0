// Unix time <-> engine deadlines. Redis reasons in unix milliseconds (EXPIREAT, PXAT,
// PEXPIRETIME, a snapshot's expiry times); the engine keeps deadlines on its monotonic clock.
// The two meet at a clock pair read together, once per batch (`now`, `unix_ms`): a unix time T
// is the deadline now + (T - unix_ms), and a deadline D reads back as unix_ms + (D - now). So a
// deadline set by unix time reads back exactly, however the wall clock drifts meanwhile.
#pragma once

#include <cstdint>
#include <limits>

#include "chronocache/clock/clock.h"
#include "chronocache/expiry/deadline.h"

namespace chronocached {

// `now + ms`, saturated just short of the engine's "never": PXAT 9223372036854775807 is a
// deadline far away, not a key without one (Redis accepts any target up to INT64_MAX ms).
inline chronocache::TimePoint deadline_after(chronocache::TimePoint now, std::int64_t ms) {
  const std::int64_t latest = chronocache::detail::kNever.time_since_epoch().count() - 1;
  const std::int64_t base = now.time_since_epoch().count();
  if (ms > 0 && base > latest - ms) return chronocache::TimePoint(chronocache::Duration(latest));
  return now + chronocache::Duration(ms);
}

// The deadline of unix time `unix_target_ms` (one in the past is a deadline before `now`).
inline chronocache::TimePoint deadline_at_unix_ms(std::int64_t unix_target_ms,
                                                  chronocache::TimePoint now,
                                                  std::int64_t unix_ms) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const std::int64_t ahead_ms =
      unix_target_ms < kMin + unix_ms ? -unix_ms : unix_target_ms - unix_ms;  // no overflow
  return deadline_after(now, ahead_ms);
}

// The unix time of `deadline`, saturated at INT64_MAX: a deadline set for unix INT64_MAX ms reads
// back as that even when the wall clock moved a millisecond against the engine clock since.
inline std::int64_t unix_ms_of(chronocache::TimePoint deadline, chronocache::TimePoint now,
                               std::int64_t unix_ms) {
  const std::int64_t ahead_ms = (deadline - now).count();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  return ahead_ms > kMax - unix_ms ? kMax : unix_ms + ahead_ms;
}

}  // namespace chronocached
