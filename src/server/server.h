// Server: the event loop's owner. Listens, accepts, keeps the sessions, runs timers (idle
// timeouts, active expiry), and stops cleanly on SIGINT/SIGTERM or SHUTDOWN.
//
// Two timers share the loop's tick. Housekeeping (client timeouts, stats sampling, buffer
// shrinking) runs `hz` times a second, as in Redis. Active expiry runs in slices between batches
// of requests, paced per database by chronocache::ExpiryPacer so that every table slot is examined
// at least once per 500 ms whatever the table's size: a key is gone within ~0.5 s of its deadline
// without anyone reading it. A slice is sized to ~0.1 ms of sweeping (the tick shortens to as
// little as 1 ms for big tables) and cut at kExpirySliceBudget, so a request that arrives during
// one waits at most that long; a database with no due deadline costs nothing. `hz` remains the
// housekeeping rate and the longest gap between expiry slices.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "chronocache/expiry/expiry_pacer.h"
#include "server/base/cycle_clock.h"
#include "server/net/event_loop.h"
#include "server/server_state.h"
#include "server/session_host.h"

namespace chronocached {

class Session;

class Server final : public SessionHost {
 public:
  explicit Server(ServerConfig config);
  ~Server();

  // Binds the configured addresses; false (and a message in `error`) when it cannot.
  bool listen(std::string& error);
  // Loads the snapshot in dir/dbfilename, if there is one. False: the server must not start
  // (the reason is logged); with ignore-snapshot-errors it starts empty instead.
  bool load_snapshot();
  // Serves until a signal or SHUTDOWN.
  void run();

  ServerState& state() { return state_; }
  void log(const char* level, const std::string& message);

  // SessionHost: the batch's clocks, and sessions' ends.
  chronocache::TimePoint now() const override { return now_; }
  std::int64_t unix_ms() const override { return unix_ms_; }
  void refresh_clock() override;
  void schedule_close(std::uint64_t id) override { finished_.push_back(id); }

 private:
  class Listener;
  bool fit_maxclients_to_fd_limit(std::string& error);
  void accept_from(int listen_fd);
  void after_batch();
  void on_tick();
  // The loop's tick period: the housekeeping period, shortened while expiry has work.
  int tick_ms() const;
  void housekeeping();
  void expire_slice();
  void close_session(std::uint64_t id);

  // Before state_: the engines' LoopClock reads now_ (ServerState's batch_now).
  chronocache::TimePoint now_{};
  ServerState state_;
  net::EventLoop loop_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Session>> sessions_;
  CycleRate cycle_rate_;  // converts INFO commandstats' cycles to microseconds
  std::uint64_t next_client_id_ = 1;
  std::int64_t unix_ms_ = 0;
  static constexpr std::int64_t kNoWallOffset = INT64_MIN;
  std::int64_t wall_offset_ms_ = kNoWallOffset;  // unix ms minus engine-clock ms, fixed at start
  std::vector<std::uint64_t> finished_;          // sessions to destroy after this batch
  // after_batch's snapshot of the monitors' ids (a member: no allocation per batch).
  std::vector<std::uint64_t> monitor_ids_;
  // One per database, by index (SWAPDB swaps contents, not pacers: pacing follows the index and
  // catches up on the next slice).
  std::vector<chronocache::ExpiryPacer> expiry_pacers_;
  chronocache::TimePoint next_housekeeping_{};
};

}  // namespace chronocached
