// BatchClock: the time every engine call of a batch sees, one for the whole server.
//
// Each event loop reads the system clock once per wakeup (the coarse reading the engine's
// *_prehashed calls take). When a loop takes the state lock to run commands it moves this clock
// to its reading and runs the batch at the clock's value, so all loops share one time line that
// never goes backwards: two loops read the clock at different moments, and a deadline one loop
// set must not look further away to the next batch of another. The engines' LoopClock reads the
// same value (reading()). Guarded by the state lock (ServerState::mu), like the engines.
//
// The wall clock is derived from the engine clock by an offset fixed at start, so that a deadline
// set in unix time (EXPIREAT, PXAT) reads back exactly (PEXPIRETIME): two clocks read separately
// drift against each other by a millisecond from batch to batch.
#pragma once

#include <chrono>
#include <cstdint>

#include "chronocache/clock/clock.h"

namespace chronocached {

class BatchClock {
 public:
  BatchClock() : wall_offset_ms_(system_unix_ms() - since_epoch_ms(system_now())) {
    advance(system_now());
  }
  BatchClock(const BatchClock&) = delete;
  BatchClock& operator=(const BatchClock&) = delete;

  // The engine clock as the system has it now (steady, whole milliseconds).
  static chronocache::TimePoint system_now() {
    return std::chrono::time_point_cast<chronocache::Duration>(
        chronocache::TimePoint::clock::now());
  }

  // Moves the clock to `reading` unless it is already past it.
  void advance(chronocache::TimePoint reading) {
    if (reading > now_) now_ = reading;
  }
  chronocache::TimePoint now() const { return now_; }
  std::int64_t unix_ms() const { return since_epoch_ms(now_) + wall_offset_ms_; }
  // Where the value lives, for the engines' LoopClock.
  const chronocache::TimePoint* reading() const { return &now_; }

 private:
  static std::int64_t since_epoch_ms(chronocache::TimePoint t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  }
  static std::int64_t system_unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  std::int64_t wall_offset_ms_;
  chronocache::TimePoint now_{};
};

}  // namespace chronocached
