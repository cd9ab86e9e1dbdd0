// Server: the event loop's owner. Listens, accepts, keeps the sessions, runs timers (idle
// timeouts, active expiry), and stops cleanly on SIGINT/SIGTERM or SHUTDOWN.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/cycle_clock.h"
#include "server/net/event_loop.h"
#include "server/server_state.h"

namespace chronocached {

class Session;

class Server {
 public:
  explicit Server(ServerConfig config);
  ~Server();

  // Binds the configured addresses; false (and a message in `error`) when it cannot.
  bool listen(std::string& error);
  // Serves until a signal or SHUTDOWN.
  void run();

  ServerState& state() { return state_; }
  net::EventLoop& loop() { return loop_; }
  // The engine clock reading and wall clock for the current batch.
  chronocache::TimePoint now() const { return now_; }
  std::int64_t unix_ms() const { return unix_ms_; }
  void refresh_clock();
  void schedule_close(std::uint64_t id) { finished_.push_back(id); }
  void log(const char* level, const std::string& message);

 private:
  class Listener;
  bool fit_maxclients_to_fd_limit(std::string& error);
  void accept_from(int listen_fd);
  void after_batch();
  void on_tick();
  void close_session(std::uint64_t id);

  ServerState state_;
  net::EventLoop loop_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Session>> sessions_;
  CycleRate cycle_rate_;  // converts INFO commandstats' cycles to microseconds
  chronocache::TimePoint now_{};
  std::int64_t unix_ms_ = 0;
  static constexpr std::int64_t kNoWallOffset = INT64_MIN;
  std::int64_t wall_offset_ms_ = kNoWallOffset;  // unix ms minus engine-clock ms, fixed at start
  std::vector<std::uint64_t> finished_;          // sessions to destroy after this batch
  // after_batch's snapshot of the monitors' ids (a member: no allocation per batch).
  std::vector<std::uint64_t> monitor_ids_;
};

}  // namespace chronocached
