#include "server/loop.h"

#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <utility>

#include "chronocache/base/assert.h"
#include "server/commands/errors.h"
#include "server/net/socket.h"
#include "server/session.h"

namespace chronocached {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

// What one tick may spend on background work in all, before it yields to the clients: active
// expiry first, then refitting loose table segments (on housekeeping ticks), then the records'
// compaction, each in what the ones before left. Redis's fast expiry cycle gets 1 ms; ours comes
// up to 4x as often, so a GET waits at most about this long behind one tick. Measured over a run
// of make bench-expiry: with a budget each (and four refits per housekeeping tick), 35 % of the
// ticks took 0.5 ms or more; with one budget, 2 %.
constexpr auto kBackgroundSliceBudget = std::chrono::microseconds(250);
// A refitting tick refits at least this many loose segments however the budget went (one holds
// up to ~3 300 keys, each rehashed from its record), so memory that a mass delete freed keeps
// coming back even while expiry takes the budget.
constexpr std::size_t kLooseSegmentsAtLeast = 1;
// The shortest tick while expiry has work: a 1 ms epoll timeout.
constexpr chronocache::Duration kShortestTick{1};
// The tick while only work without a deadline remains (a compaction pass, loose segments to
// refit): each tick is a wake-up of the loop. On this VM the kernel's switch and wake paths took
// 20-30 % of the server's CPU samples in make bench-expiry's expiry window (perf).
constexpr chronocache::Duration kCompactionTick{10};
// A loop that finds the state lock taken tries this many times, a pause apart (a few µs in all),
// before it sleeps: the lock is held under a microsecond a request, and sleeping and being woken
// cost both loops more than that. Measured in docs/design/server.md ("The state lock spins").
constexpr int kStateLockTries = 200;

// realtime-loops: puts the calling thread (a loop) in SCHED_FIFO at the lowest real-time
// priority. Measured beside CPU-bound processes (docs/performance.md, "Real-time loops"): a woken
// loop in the normal class may wait for the next scheduler tick, up to 4 ms at HZ=250, whenever
// it has just used CPU (a BGSAVE's capture); in the real-time class it runs at once. Threads the
// loop starts later inherit the class unless they leave it (the snapshot writer's worker does:
// it is background work). Empty on success, else why not.
std::string enter_realtime_class() {
  sched_param lowest{};
  lowest.sched_priority = 1;
  if (sched_setscheduler(0, SCHED_FIFO, &lowest) == 0) return {};
  return std::strerror(errno);
}

chronocache::Duration housekeeping_period(long long hz) {
  return chronocache::Duration(1000 / std::clamp<long long>(hz, 1, 1000));
}

// A database as chronocache::reclaim_slice sees it.
class SweptDb {
 public:
  explicit SweptDb(Db& db) : db_(db) {}
  bool may_hold_expired(chronocache::TimePoint now) const {
    return db_.engine().may_hold_expired(now);
  }
  std::size_t slot_capacity() const { return db_.engine().slot_capacity(); }
  std::size_t reclaim_expired_at(std::size_t slots, chronocache::TimePoint now) {
    return db_.reclaim_expired(slots, now);
  }

 private:
  Db& db_;
};

// Calls visit(index, engine) for each database whose engine may hold a key past its deadline at
// `now`: the ones active expiry has work in.
template <class Visit>
void for_each_db_with_due_keys(const Keyspace& keyspace, chronocache::TimePoint now, Visit visit) {
  for (std::size_t i = 0; i < keyspace.count(); ++i) {
    const Engine& engine = keyspace.db(i).engine();
    if (engine.may_hold_expired(now)) visit(i, engine);
  }
}

}  // namespace

// The loop's eventfd: written by other threads that left it mail, read (drained) by the loop.
class Loop::Waker final : public net::EventLoop::Handler {
 public:
  explicit Waker(net::EventLoop& events) : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    CC_CHECK(fd_ >= 0, "eventfd failed");
    events.add(fd_, true, false, this);
  }
  ~Waker() { close(fd_); }
  void wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t ignored = write(fd_, &one, sizeof(one));
  }
  void on_ready(std::uint32_t) override {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t ignored = read(fd_, &count, sizeof(count));
  }

 private:
  int fd_;
};

// enter() .. leave() for a scope, as the analysis sees it (HostLock serves sessions, which see
// only SessionHost).
class CC_SCOPED_CAPABILITY Loop::Locked {
 public:
  explicit Locked(Loop& loop) CC_ACQUIRE(loop.state_.mu) : loop_(loop) { loop_.enter(); }
  ~Locked() CC_RELEASE() { loop_.leave(); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  Loop& loop_;
};

Loop::Loop(ServerState& state, std::size_t index, const std::vector<std::unique_ptr<Loop>>& loops)
    : state_(state),
      index_(index),
      loops_(loops),
      waker_(std::make_unique<Waker>(events_)),
      tick_ms_(static_cast<int>(housekeeping_period(state.config.hz).count())) {
  if (index_ == 0) expiry_pacers_.resize(state_.keyspace.count());
}

Loop::~Loop() {
  const chronocache::MutexLock lock(state_.mu);  // sessions leave the clients' registry
  sessions_.clear();
  for (const auto& [fd, id] : mail_.connections) close(fd);
}

void Loop::install_stop_signals() {
  std::signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void Loop::run() {
  read_clock();
  {
    const Locked lock(*this);
    next_housekeeping_ = now_;
    if (state_.config.realtime_loops) {
      const std::string refused = enter_realtime_class();
      if (!refused.empty() && index_ == 0) {
        state_.logger.log("warning",
                          "realtime-loops yes: the event loops stay in the normal scheduling "
                          "class (SCHED_FIFO refused: " +
                              refused + "; it needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 1)");
      }
    }
  }
  events_.run([this] { return tick_ms_; }, [this] { on_wakeup(); }, [this] { after_batch(); },
              [this] { on_tick(); });
}

void Loop::hand_over(int fd, std::uint64_t id) {
  {
    const chronocache::MutexLock lock(state_.mu);
    mail_.connections.emplace_back(fd, id);
  }
  has_mail_.store(true, std::memory_order_release);
  if (index_ != 0) waker_->wake();  // loop 0 accepts: it reads its mail after this batch
}

// ---- The state lock ---------------------------------------------------------------------------

void Loop::enter() {
  const std::uint64_t asked = cycles_now();
  state_.mu.lock_spinning(kStateLockTries);
  entered_at_ = cycles_now();
  ++state_.stats.lock_acquisitions;
  state_.stats.lock_wait_cycles += entered_at_ - asked;
  // The wakeup's reading, moved by DEBUG ADVANCE-CLOCK's offset; the shared clock never goes back.
  state_.set_clock_reading(woke_at_, woke_at_cycles_);
  now_ = state_.clock.now();
  unix_ms_ = state_.clock.unix_ms();
  if (config_seen_ != state_.config_generation) {
    config_seen_ = state_.config_generation;
    client_limits_ = ClientLimits{
        .hard_bytes = static_cast<std::size_t>(state_.config.client_output_buffer_limit),
        .soft_bytes = static_cast<std::size_t>(state_.config.client_output_buffer_soft_limit),
        .soft_seconds = state_.config.client_output_buffer_soft_seconds,
        .max_bulk_len = static_cast<std::size_t>(state_.config.proto_max_bulk_len)};
  }
}

void Loop::leave() {
  route_requests();
  state_.stats.lock_held_cycles += cycles_now() - entered_at_;
  state_.mu.unlock();
}

void Loop::read_clock() {
  woke_at_ = BatchClock::system_now();
  woke_at_cycles_ = cycles_now();
}

void Loop::refresh_clock() {
  read_clock();
  state_.set_clock_reading(woke_at_, woke_at_cycles_);
  now_ = state_.clock.now();
  unix_ms_ = state_.clock.unix_ms();
}

// One eventfd write per burst of mail, to this loop too: mail posted from inside read_mail() or
// a tick (a resumed or paused client's commands) must not wait for the next socket event.
void Loop::post(Loop& to) {
  if (!to.has_mail_.exchange(true, std::memory_order_acq_rel)) to.waker_->wake();
}

void Loop::route_requests() {
  ClientRegistry& clients = state_.clients;
  if (!clients.kill_list.empty()) {
    for (std::uint64_t id : clients.kill_list) {
      const auto it = clients.by_id.find(id);
      if (it == clients.by_id.end()) continue;
      Loop& owner = *loops_[it->second->loop];
      mailbox(owner).kills.push_back(id);
      post(owner);
    }
    clients.kill_list.clear();
  }
  if (clients.monitor_feed_pending) {
    clients.monitor_feed_pending = false;
    for (const ClientState* monitor : clients.monitors) {
      if (monitor->monitor_feed.empty()) continue;
      Loop& owner = *loops_[monitor->loop];
      mailbox(owner).monitor_feed = true;
      post(owner);
    }
  }
  if (clients.pause_lifted) {
    clients.pause_lifted = false;
    for (const auto& loop : loops_) {
      mailbox(*loop).pause_lifted = true;
      post(*loop);
    }
  }
  if (state_.shutdown_requested && !state_.stopping.load(std::memory_order_relaxed)) {
    state_.stopping.store(true, std::memory_order_relaxed);
    for (const auto& loop : loops_) post(*loop);
  }
}

// ---- Batches ----------------------------------------------------------------------------------

void Loop::on_wakeup() {
  read_clock();
  if (index_ != 0 || g_stop_signal == 0) return;  // signals reach the main thread only
  const char* name = g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
  g_stop_signal = 0;
  const Locked lock(*this);
  state_.logger.log("warning", std::string("Received ") + name + " scheduling shutdown...");
  // As Redis: save first when save rules are configured; a failed save keeps the server running
  // (a second signal tries again).
  const bool save = state_.snapshots.has_save_points();
  if (state_.snapshots.prepare_shutdown(save, /*force=*/false, now_, unix_ms_))
    state_.shutdown_requested = true;
}

void Loop::after_batch() {
  if (has_mail_.load(std::memory_order_relaxed) &&
      has_mail_.exchange(false, std::memory_order_acquire))
    read_mail();
  if (!finished_.empty()) close_finished();
  if (state_.stopping.load(std::memory_order_relaxed)) events_.stop();
}

void Loop::read_mail() {
  std::vector<std::uint64_t> kills;
  monitor_ids_.clear();
  bool pause_lifted = false;
  {
    const Locked lock(*this);
    pause_lifted = std::exchange(mail_.pause_lifted, false);
    for (const auto& [fd, id] : mail_.connections) admit(fd, id);
    mail_.connections.clear();
    kills.swap(mail_.kills);
    if (mail_.monitor_feed) {
      mail_.monitor_feed = false;
      for (ClientState* monitor : state_.clients.monitors) {
        if (monitor->loop != index_ || monitor->monitor_feed.empty()) continue;
        const auto it = sessions_.find(monitor->id);
        if (it == sessions_.end()) continue;
        it->second->take_monitor_feed();
        monitor_ids_.push_back(monitor->id);
      }
    }
  }
  // Outside the lock: these write to sockets, and on_ready() may run a paused monitor's buffered
  // commands (which take the lock).
  for (std::uint64_t id : monitor_ids_) {
    const auto it = sessions_.find(id);
    if (it != sessions_.end()) it->second->on_ready(0);
  }
  // CLIENT KILL closes at once, as Redis's freeClient: what the socket takes now is sent, the
  // rest dropped. (Waiting for the flush would spare a killed client that does not read.)
  for (std::uint64_t id : kills) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) continue;
    it->second->flush();
    finished_.push_back(id);
  }
  if (pause_lifted) resume_postponed();
}

// In arrival order, as Redis unblocks postponed clients. A session postponed again (a new pause)
// lists itself again.
void Loop::resume_postponed() {
  std::vector<std::uint64_t> waiting;
  waiting.swap(postponed_);
  for (std::uint64_t id : waiting) {
    const auto it = sessions_.find(id);
    if (it != sessions_.end() && it->second->postponed()) it->second->resume();
  }
}

void Loop::admit(int fd, std::uint64_t id) {
  const auto refuse = [&](std::string_view text) {
    std::string reply(1, '-');
    reply.append(text).append("\r\n");
    [[maybe_unused]] const ssize_t ignored = write(fd, reply.data(), reply.size());
    close(fd);
    ++state_.stats.rejected_connections;
  };
  if (state_.clients.by_id.size() >= static_cast<std::size_t>(state_.config.maxclients))
    return refuse(errors::kMaxClients);
  if (state_.config.protected_mode && state_.config.requirepass.empty() &&
      !net::is_loopback_peer(fd))
    return refuse(errors::kProtectedMode);
  // Only an admitted connection is received, as Redis counts: its refusals (maxclients,
  // protected mode) are rejected connections alone.
  ++state_.stats.connections_received;
  auto session = std::make_unique<Session>(*this, state_, events_, *state_.io[index_], fd, id);
  session->client().loop = index_;
  sessions_.emplace(id, std::move(session));
}

// Sessions report their end (schedule_close); they are destroyed here, never from inside their
// own handler. An id may be listed twice: erase is idempotent.
void Loop::close_finished() {
  const Locked lock(*this);
  for (std::uint64_t id : finished_) sessions_.erase(id);
  finished_.clear();
}

// ---- Timers -----------------------------------------------------------------------------------

void Loop::on_tick() {
  read_clock();  // a tick may come long after the batch's reading
  bool pause_over = false;
  {
    const Locked lock(*this);
    timers();
    pause_over = !postponed_.empty() && !state_.clients.paused(unix_ms_);
  }
  if (pause_over) resume_postponed();
}

void Loop::timers() {
  const auto stop_at = std::chrono::steady_clock::now() + kBackgroundSliceBudget;
  const bool housekeeping_due = now_ >= next_housekeeping_;
  if (housekeeping_due) {
    housekeeping();
    next_housekeeping_ = now_ + housekeeping_period(state_.config.hz);
  }
  if (index_ == 0) {
    // As Redis, no key expires or is evicted by the server itself while clients are paused.
    const bool paused = state_.clients.paused(unix_ms_);
    if (!paused) {
      expire_slice(stop_at);
      // maxmemory's incremental eviction (CONFIG SET maxmemory shrinking the data set), within
      // its own time budget (maxmemory-eviction-tenacity).
      if (state_.memory.pending()) {
        const auto start = std::chrono::steady_clock::now();
        state_.memory.background_step(now_);
        sample_latency("eviction-cycle", start);
      }
    }
    // Between housekeeping ticks, refits go on only while no deadline is due: during a mass
    // expiry segments keep loosening, so a refit made now is often made again later, and the
    // housekeeping pace (hz) keeps up; after a mass delete nothing is due and they run on.
    if (housekeeping_due || (loose_segments_left_ && !expiry_may_be_due()))
      loose_segments_left_ = refit_loose_segments(stop_at);
    if (!paused) compact_slice(stop_at);
    // BGSAVE's capture slice, its end, and the save rules.
    const bool capturing = state_.snapshots.bgsave_in_progress();
    const auto start = std::chrono::steady_clock::now();
    state_.snapshots.step(now_, unix_ms_, [this] { return events_.events_waiting(); });
    if (capturing) sample_latency("snapshot-step", start);
  }
  tick_ms_ = tick_ms();
}

bool Loop::expiry_may_be_due() const {
  bool due = false;
  for_each_db_with_due_keys(state_.keyspace, now_, [&](std::size_t, const Engine&) { due = true; });
  return due;
}

int Loop::tick_ms() const {
  const chronocache::Duration longest = housekeeping_period(state_.config.hz);
  chronocache::Duration tick = longest;
  // A held command runs as soon as its pause ends.
  if (!postponed_.empty() && state_.clients.paused(unix_ms_)) {
    const chronocache::Duration left(state_.clients.pause_until_ms - unix_ms_);
    tick = std::min(tick, std::max(kShortestTick, left));
  }
  if (index_ != 0) return static_cast<int>(tick.count());
  if (state_.debug.active_expire) {
    // A database where nothing is due gives no reason to wake up.
    for_each_db_with_due_keys(state_.keyspace, now_, [&](std::size_t i, const Engine& engine) {
      tick = std::min(tick,
                      expiry_pacers_[i].interval(engine.slot_capacity(), kShortestTick, longest));
    });
  }
  if (state_.memory.pending()) tick = std::min(tick, kShortestTick);
  if (state_.compactor.running() || loose_segments_left_) tick = std::min(tick, kCompactionTick);
  // A BGSAVE advances in slices of Snapshots::kStepBudget per tick: a short tick finishes it
  // soon while each slice stays short for the clients.
  if (state_.snapshots.bgsave_in_progress()) tick = std::min(tick, kShortestTick);
  return static_cast<int>(tick.count());
}

void Loop::housekeeping() {
  if (index_ == 0) {
    state_.heap_trimmer.step(state_.keyspace, now_);
    cycle_rate_.calibrate();
    if (cycle_rate_.calibrated()) state_.set_cycle_rate(cycle_rate_.per_usec());
    state_.sample_rates(unix_ms_);
    state_.memory.read_used();  // samples used_memory_peak, as Redis's cron does
    state_.close_idle_migrate_targets(unix_ms_);
  }
  const std::int64_t timeout_ms = state_.config.timeout * 1000;
  std::vector<std::uint64_t> idle;
  for (auto& [id, session] : sessions_) {
    ClientState& c = session->client();
    // A client whose command is held (CLIENT PAUSE) waits on us, not idles: Redis's timeout
    // skips blocked clients too, and closing it would lose the command.
    if (timeout_ms > 0 && !c.monitor && !c.blocked && unix_ms_ - c.last_active_ms > timeout_ms)
      idle.push_back(id);
    session->shrink_buffers(state_.stats.buffer_peaks, unix_ms_ / 1000);
  }
  for (std::uint64_t id : idle) {
    state_.logger.log("verbose", "Closing idle client id=" + std::to_string(id));
    sessions_.erase(id);
  }
}

// One slice of active expiry over every database, until `stop_at` in all. With DEBUG
// SET-ACTIVE-EXPIRE 0 nothing is swept and no debt accrues (turning it back on starts afresh).
void Loop::expire_slice(SteadyTime stop_at) {
  const auto start = std::chrono::steady_clock::now();
  const auto keep_going = [&] { return std::chrono::steady_clock::now() < stop_at; };
  bool out_of_time = false;
  for (std::size_t i = 0; i < state_.keyspace.count(); ++i) {
    chronocache::ExpiryPacer& pacer = expiry_pacers_[i];
    if (!state_.debug.active_expire) {
      pacer.idle(now_);
      continue;
    }
    SweptDb db(state_.keyspace.db(i));
    out_of_time |= chronocache::reclaim_slice(db, pacer, now_, keep_going).out_of_time;
  }
  if (out_of_time) ++state_.stats.expire_time_cap_reached;
  state_.stats.expire_cycle_ns += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
  sample_latency("expire-cycle", start);
}

// A latency monitor sample of `event`, begun at `start`, if it took latency-monitor-threshold.
void Loop::sample_latency(std::string_view event, SteadyTime start) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  state_.latency_monitor.add_if_needed(event, static_cast<std::uint64_t>(ms), unix_ms_ / 1000);
}

// Table segments that a mass delete left loose, refitted while the tick's budget lasts (at least
// kLooseSegmentsAtLeast). True when it stopped for time, so loose segments may be left: the
// next ticks go on (every kCompactionTick) instead of waiting for housekeeping.
bool Loop::refit_loose_segments(SteadyTime stop_at) {
  std::size_t refitted = 0;
  bool out_of_time = false;
  const auto keep_going = [&] {
    if (refitted >= kLooseSegmentsAtLeast && std::chrono::steady_clock::now() >= stop_at) {
      out_of_time = true;
      return false;
    }
    ++refitted;
    return true;
  };
  for (std::size_t i = 0; i < state_.keyspace.count() && !out_of_time; ++i)
    state_.keyspace.db(i).shrink_loose_segments_while(keep_going);
  return out_of_time;
}

// One slice of the records' compaction (activedefrag), in what the tick's budget has left: a
// pass that moves a million records takes ~400 slices or more, at most kCompactionTick apart.
void Loop::compact_slice(SteadyTime stop_at) {
  state_.compactor.step(now_, [&] { return std::chrono::steady_clock::now() < stop_at; });
}

}  // namespace chronocached
