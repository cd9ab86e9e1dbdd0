// SessionHost: all a Session asks of whoever owns it (the Server): the current batch's clock, a
// fresh reading after DEBUG ADVANCE-CLOCK moved it, and its own close once the batch is done.
//
// Narrow on purpose. A session never reaches the listeners, the timers or the other sessions;
// what commands may touch comes to it as ServerState, the socket's events through net::EventLoop.
// So session.cc does not include server.h, and a second owner (a per-thread loop, a test
// harness) implements these four calls.
#pragma once

#include <cstdint>

#include "chronocache/clock/clock.h"

namespace chronocached {

class SessionHost {
 public:
  // The engine clock and the wall clock for the current batch (read once per wakeup).
  virtual chronocache::TimePoint now() const = 0;
  virtual std::int64_t unix_ms() const = 0;
  // Reads both clocks again (a command moved them: DEBUG ADVANCE-CLOCK).
  virtual void refresh_clock() = 0;
  // The session `id` is finished: it is destroyed after the current batch, never from inside
  // its own handler.
  virtual void schedule_close(std::uint64_t id) = 0;

 protected:
  ~SessionHost() = default;
};

}  // namespace chronocached
