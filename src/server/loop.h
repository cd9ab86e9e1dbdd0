// Loop: one event loop of the server, on its own thread (loop 0 on the main thread). It serves
// the connections handed to it, from their first byte to their close; a connection never moves.
//
//   Server ──accept──► Loop i's mailbox ──eventfd──► Loop i: Session ... Session
//                                                         │ a batch of commands:
//                                                         └ enter() ─ state lock ─ leave()
//
// Everything in ServerState is shared by the loops and touched only under its lock
// (ServerState::mu), which a loop holds while it runs one connection's batch of commands, admits
// or closes connections, or runs its timers, and never across a system call on a client socket:
// reads, parsing of the next read, writes and epoll_wait all run in parallel on every loop.
// What a batch asks of a connection on another loop (CLIENT KILL, MONITOR lines) and a SHUTDOWN
// reach that loop through its mailbox (under the lock) and its eventfd.
//
// Loop 0 also owns the process's timers: active expiry, maxmemory's background eviction, BGSAVE's
// capture slices and the save points, as one loop did before there were several; every loop runs
// its own clients' housekeeping (idle timeouts, buffer shrinking) `hz` times a second.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chronocache/base/thread_annotations.h"
#include "chronocache/expiry/expiry_pacer.h"
#include "server/base/cycle_clock.h"
#include "server/net/event_loop.h"
#include "server/server_state.h"
#include "server/session_host.h"

namespace chronocached {

class Session;

class Loop final : public SessionHost {
 public:
  // Loop `index` of `loops` (all of them, filled before any runs: a batch hands work to others).
  Loop(ServerState& state, std::size_t index, const std::vector<std::unique_ptr<Loop>>& loops);
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // Serves until the server stops (ServerState::stopping).
  void run();
  // Watches a listening socket: only loop 0 accepts; `on_ready` runs there for each readiness.
  net::EventLoop& events() { return events_; }
  // Queues an accepted connection for this loop, to be client `id` (ids follow the order of
  // accept(), as Redis's). Called on loop 0, which accepts.
  void hand_over(int fd, std::uint64_t id);
  // SIGINT and SIGTERM start a shutdown, which loop 0 carries out (the other loops' threads must
  // block both); SIGPIPE is ignored.
  static void install_stop_signals();

  // SessionHost.
  void enter() override CC_ACQUIRE(state_.mu);
  void leave() override CC_RELEASE(state_.mu);
  chronocache::TimePoint now() const override { return now_; }
  std::int64_t unix_ms() const override { return unix_ms_; }
  void refresh_clock() override;
  const ClientLimits& client_limits() const override { return client_limits_; }
  void schedule_close(std::uint64_t id) override { finished_.push_back(id); }
  void postpone(std::uint64_t id) override { postponed_.push_back(id); }
  // From any thread holding the state lock: this loop retries its postponed sessions (an upstream
  // fetch ended; upstream_fetcher.h). Unchecked by the analysis: the fetcher calls it through a
  // callback, under the lock it took.
  void wake_postponed() CC_NO_THREAD_SAFETY_ANALYSIS {
    mail_.pause_lifted = true;
    post(*this);
  }

 private:
  class Waker;
  class Locked;
  // What other threads ask of this loop, under the state lock; `has_mail_` says there is some.
  struct Mailbox {
    std::vector<std::pair<int, std::uint64_t>> connections;  // accepted sockets, their ids
    std::vector<std::uint64_t> kills;                        // CLIENT KILL of sessions here
    bool monitor_feed = false;                               // MONITOR lines for sessions here
    bool pause_lifted = false;                               // CLIENT UNPAUSE: run what waited
  };

  void on_wakeup();
  // The wall clock into woke_at_, and the cycle counter beside it (ServerState::clock_read_cycles).
  void read_clock();
  void after_batch();
  void read_mail();
  // `to` has mail. Under the lock: ServerState::mu, which every loop shares (the analysis cannot
  // know that `to.state_` is `state_`).
  void post(Loop& to) CC_NO_THREAD_SAFETY_ANALYSIS;
  // `to`'s mailbox, under the lock (unchecked for the same reason).
  static Mailbox& mailbox(Loop& to) CC_NO_THREAD_SAFETY_ANALYSIS { return to.mail_; }
  void route_requests() CC_REQUIRES(state_.mu);  // hands the batch's requests to their loops
  void admit(int fd, std::uint64_t id) CC_REQUIRES(state_.mu);
  void close_finished();
  void resume_postponed();  // outside the lock, once the pause is over
  void on_tick();
  void timers() CC_REQUIRES(state_.mu);
  // The tick period: the housekeeping period, shortened on loop 0 while expiry has work.
  int tick_ms() const CC_REQUIRES(state_.mu);
  void housekeeping() CC_REQUIRES(state_.mu);
  // Background work, each until `stop_at` (the tick's kBackgroundSliceBudget, shared).
  using SteadyTime = std::chrono::steady_clock::time_point;
  void expire_slice(SteadyTime stop_at) CC_REQUIRES(state_.mu);
  void sample_latency(std::string_view event, SteadyTime start) CC_REQUIRES(state_.mu);
  bool refit_loose_segments(SteadyTime stop_at) CC_REQUIRES(state_.mu);
  bool expiry_may_be_due() const CC_REQUIRES(state_.mu);  // some database may hold expired keys
  void compact_slice(SteadyTime stop_at) CC_REQUIRES(state_.mu);

  ServerState& state_;
  const std::size_t index_;
  const std::vector<std::unique_ptr<Loop>>& loops_;
  net::EventLoop events_;
  std::unique_ptr<Waker> waker_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Session>> sessions_;

  // This batch's clock, from the shared BatchClock (enter()); the reading of the last wakeup.
  chronocache::TimePoint now_{};
  std::int64_t unix_ms_ = 0;
  chronocache::TimePoint woke_at_{};
  std::uint64_t woke_at_cycles_ = 0;  // cycles_now() at that reading
  ClientLimits client_limits_;
  std::uint64_t config_seen_ = ~std::uint64_t{0};
  std::uint64_t entered_at_ = 0;  // cycles_now() when enter() got the lock

  Mailbox mail_ CC_GUARDED_BY(state_.mu);
  std::atomic<bool> has_mail_{false};
  std::vector<std::uint64_t> finished_;     // sessions to destroy after this batch
  std::vector<std::uint64_t> postponed_;    // sessions holding a command back for CLIENT PAUSE
  std::vector<std::uint64_t> monitor_ids_;  // read_mail's list (a member: no allocation)

  int tick_ms_ = 100;
  chronocache::TimePoint next_housekeeping_{};
  bool loose_segments_left_ = false;  // the last refit stopped for time (loop 0)
  // Loop 0's timers. One pacer per database, by index (SWAPDB swaps contents, not pacers: pacing
  // follows the index and catches up on the next slice).
  std::vector<chronocache::ExpiryPacer> expiry_pacers_;
  CycleRate cycle_rate_;  // converts INFO commandstats' cycles to microseconds
};

}  // namespace chronocached
