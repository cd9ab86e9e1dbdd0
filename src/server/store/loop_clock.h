// LoopClock: the engine's Clock inside chronocached: the time the event loop read when its
// current batch began. Handlers pass that time explicitly to the engine's *_prehashed calls;
// this clock serves the engine's own readings (size(), reclaim_expired()) with the same value.
// Why not CoarseClock: the server reads the clock once per wakeup anyway, and CoarseClock's 1 ms
// ticker thread woke 1000 times a second on the server's core (perf: futex and context-switch
// time under redis-benchmark) for nothing.
#pragma once

#include "chronocache/clock/clock.h"

namespace chronocached {

class LoopClock {
 public:
  LoopClock() = default;  // always the zero time point: for code that passes time explicitly
  explicit LoopClock(const chronocache::TimePoint* batch_now) : batch_now_(batch_now) {}
  chronocache::TimePoint now() const noexcept {
    return batch_now_ != nullptr ? *batch_now_ : chronocache::TimePoint{};
  }

 private:
  const chronocache::TimePoint* batch_now_ = nullptr;
};
static_assert(chronocache::Clock<LoopClock>);

}  // namespace chronocached
