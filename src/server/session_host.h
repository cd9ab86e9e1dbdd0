// SessionHost: all a Session asks of the event loop that serves it (Loop): entering and leaving
// the state lock with the batch's clock, a fresh reading after DEBUG ADVANCE-CLOCK moved it, the
// limits it checks outside the lock, a retry after CLIENT PAUSE, and its own close once the batch
// is done.
//
// Narrow on purpose. A session never reaches the listeners, the timers or the other sessions;
// what commands may touch comes to it as ServerState, the socket's events through net::EventLoop.
// So session.cc includes neither loop.h nor server.h, and a test harness could serve a session.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chronocache/clock/clock.h"

namespace chronocached {

// What a session checks outside the state lock, as its loop copies it from the configuration
// when the configuration changes: client-output-buffer-limit's normal class (after writing to
// the socket) and proto-max-bulk-len (framing a batch before taking the lock).
struct ClientLimits {
  std::size_t hard_bytes = 0;  // 0: no limit
  std::size_t soft_bytes = 0;  // 0: no limit
  std::int64_t soft_seconds = 0;
  std::size_t max_bulk_len = 0;
};

class SessionHost {
 public:
  // Takes the state lock (ServerState::mu) and the batch's clock reading; a session runs
  // commands, and touches anything in ServerState, only between enter() and leave(). leave()
  // hands what the batch asked of other connections (CLIENT KILL, MONITOR lines, SHUTDOWN) to
  // their loops, then releases the lock.
  virtual void enter() = 0;
  virtual void leave() = 0;
  // The engine clock and the wall clock for the current batch, fixed by enter().
  virtual chronocache::TimePoint now() const = 0;
  virtual std::int64_t unix_ms() const = 0;
  // Reads both clocks again (a command moved them: DEBUG ADVANCE-CLOCK). Inside enter()/leave().
  virtual void refresh_clock() = 0;
  virtual const ClientLimits& client_limits() const = 0;
  // The session `id` is finished: it is destroyed after the current batch, never from inside
  // its own handler.
  virtual void schedule_close(std::uint64_t id) = 0;
  // The session `id` holds a command back for CLIENT PAUSE: call its resume() when it ends.
  virtual void postpone(std::uint64_t id) = 0;

 protected:
  ~SessionHost() = default;
};

// enter() .. leave() for a scope.
class HostLock {
 public:
  explicit HostLock(SessionHost& host) : host_(host) { host_.enter(); }
  ~HostLock() { host_.leave(); }
  HostLock(const HostLock&) = delete;
  HostLock& operator=(const HostLock&) = delete;

 private:
  SessionHost& host_;
};

}  // namespace chronocached
