#include "server/server.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "server/commands/errors.h"
#include "server/net/socket.h"
#include "server/session.h"

namespace chronocached {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

// The longest an active-expiry slice runs before it yields to the clients (Redis's fast cycle
// gets 1 ms; ours comes 4x as often at most, so a GET waits at most this long behind one).
constexpr auto kExpirySliceBudget = std::chrono::microseconds(250);
// The shortest tick while expiry has work: a 1 ms epoll timeout.
constexpr chronocache::Duration kShortestTick{1};

// Descriptors kept for listeners and files besides clients (Redis's CONFIG_MIN_RESERVED_FDS).
constexpr long long kReservedFds = 32;

int level_rank(std::string_view level) {
  if (level == "debug") return 0;
  if (level == "verbose") return 1;
  if (level == "notice") return 2;
  if (level == "warning") return 3;
  return 4;
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

}  // namespace

std::int64_t unix_time_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class Server::Listener final : public net::EventLoop::Handler {
 public:
  Listener(Server& server, int fd) : server_(server), fd_(fd) {}
  ~Listener() { close(fd_); }
  void on_ready(std::uint32_t) override { server_.accept_from(fd_); }

 private:
  Server& server_;
  int fd_;
};

Server::Server(ServerConfig config)
    : state_(
          std::move(config),
          [] {
            std::random_device rd;
            return (std::uint64_t{rd()} << 32) ^ rd();
          }(),
          &now_,
          Logger([this](const char* level, const std::string& message) { log(level, message); })) {
  refresh_clock();
  state_.process.start_ms = unix_ms_;
  state_.snapshots.set_last_save(unix_ms_);  // as Redis: save points count from the start
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 40; ++i) state_.process.run_id.push_back(kHex[state_.random() % 16]);
  expiry_pacers_.resize(state_.keyspace.count());
  next_housekeeping_ = now_;
}

Server::~Server() {
  sessions_.clear();
  listeners_.clear();
}

void Server::refresh_clock() {
  const auto engine_now =
      std::chrono::time_point_cast<chronocache::Duration>(chronocache::TimePoint::clock::now());
  // The wall clock is derived from the engine clock by a fixed offset taken at start, so that a
  // deadline set by unix time (EXPIREAT, PXAT) reads back exactly (PEXPIRETIME): two clocks read
  // separately drift against each other by a millisecond from batch to batch.
  if (wall_offset_ms_ == kNoWallOffset) {
    wall_offset_ms_ = unix_time_ms() - std::chrono::duration_cast<std::chrono::milliseconds>(
                                           engine_now.time_since_epoch())
                                           .count();
  }
  now_ = engine_now + std::chrono::milliseconds(state_.debug.clock_offset_ms);
  unix_ms_ =
      std::chrono::duration_cast<std::chrono::milliseconds>(now_.time_since_epoch()).count() +
      wall_offset_ms_;
}

void Server::log(const char* level, const std::string& message) {
  if (level_rank(level) < level_rank(state_.config.loglevel)) return;
  char stamp[64];
  const std::time_t seconds = static_cast<std::time_t>(unix_ms_ / 1000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  const std::size_t n = std::strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S", &tm);
  std::snprintf(stamp + n, sizeof(stamp) - n, ".%03d", static_cast<int>(unix_ms_ % 1000));
  const char mark = level_rank(level) == 0   ? '.'
                    : level_rank(level) == 1 ? '-'
                    : level_rank(level) == 2 ? '*'
                                             : '#';
  std::ostringstream line;
  line << getpid() << ":M " << stamp << ' ' << mark << ' ' << message << '\n';
  if (state_.config.logfile.empty()) {
    std::fputs(line.str().c_str(), stdout);
    std::fflush(stdout);
  } else {
    std::ofstream(state_.config.logfile, std::ios::app) << line.str();
  }
}

// As Redis's adjustOpenFilesLimit: raise the soft descriptor limit to what maxclients needs, and
// when the hard limit forbids it, lower maxclients instead. Otherwise accept() fails with EMFILE
// before maxclients is reached, and the client never gets the "max number of clients" error.
bool Server::fit_maxclients_to_fd_limit(std::string& error) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return true;
  const long long wanted = state_.config.maxclients + kReservedFds;
  if (limit.rlim_cur != RLIM_INFINITY && static_cast<long long>(limit.rlim_cur) < wanted) {
    const rlim_t original = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY
                         ? static_cast<rlim_t>(wanted)
                         : std::min(static_cast<rlim_t>(wanted), limit.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = original;
    const auto usable = static_cast<long long>(limit.rlim_cur);
    if (usable < wanted) {
      if (usable <= kReservedFds) {
        error = "Your current 'ulimit -n' of " + std::to_string(usable) +
                " is not enough for the server to start. Please increase your open file limit to "
                "at least " +
                std::to_string(kReservedFds + 1) + ". Exiting.";
        return false;
      }
      log("warning", "You requested maxclients of " + std::to_string(state_.config.maxclients) +
                         " requiring at least " + std::to_string(wanted) +
                         " max file descriptors.");
      state_.config.maxclients = usable - kReservedFds;
      log("warning", "Current maximum open files is " + std::to_string(usable) +
                         ". maxclients has been reduced to " +
                         std::to_string(state_.config.maxclients) +
                         " to compensate for low ulimit. If you need higher maxclients increase "
                         "'ulimit -n'.");
    } else {
      log("notice", "Increased maximum number of open files to " + std::to_string(usable) +
                        " (it was originally set to " + std::to_string(original) + ").");
    }
  }
  return true;
}

bool Server::listen(std::string& error) {
  if (!fit_maxclients_to_fd_limit(error)) return false;
  std::istringstream addresses(state_.config.bind);
  std::string host;
  // Port 0 lets the kernel pick a port; every further address listens on the same one, so a
  // client can reach any of them at the port the log announces.
  int port = state_.config.port;
  while (addresses >> host) {
    // redis.conf's "-::1" marks an address that may be missing (no IPv6 here, say); "*" and "::*"
    // are Redis's names for every IPv4 and every IPv6 address.
    const bool optional = host[0] == '-';
    if (optional) host.erase(0, 1);
    if (host == "*") host = "0.0.0.0";
    if (host == "::*") host = "::";
    const int fd = net::listen_tcp(host, port, static_cast<int>(state_.config.tcp_backlog), error);
    if (fd < 0) {
      if (!optional) return false;
      log("warning", "Skipping optional bind address: " + error);
      error.clear();
      continue;
    }
    state_.process.tcp_port = net::local_port(fd);
    port = state_.process.tcp_port;
    listeners_.push_back(std::make_unique<Listener>(*this, fd));
    loop_.add(fd, true, false, listeners_.back().get());
  }
  if (listeners_.empty()) {
    error = "no bind address configured";
    return false;
  }
  return true;
}

void Server::accept_from(int listen_fd) {
  // A few per wakeup: a connection storm must not starve the clients already served.
  for (int i = 0; i < 64; ++i) {
    const int fd = net::accept_client(listen_fd);
    if (fd < 0) return;
    ++state_.stats.connections_received;
    const auto refuse = [&](std::string_view text) {
      std::string reply = "-" + std::string(text) + "\r\n";
      [[maybe_unused]] const ssize_t ignored = write(fd, reply.data(), reply.size());
      close(fd);
      ++state_.stats.rejected_connections;
    };
    if (sessions_.size() >= static_cast<std::size_t>(state_.config.maxclients)) {
      refuse(errors::kMaxClients);
      continue;
    }
    if (state_.config.protected_mode && state_.config.requirepass.empty() &&
        !net::is_loopback_peer(fd)) {
      refuse(errors::kProtectedMode);
      continue;
    }
    const std::uint64_t id = next_client_id_++;
    sessions_.emplace(id, std::make_unique<Session>(*this, state_, loop_, fd, id));
  }
}

void Server::close_session(std::uint64_t id) { sessions_.erase(id); }

void Server::after_batch() {
  // By id, from a copy: on_ready() may run a monitor's buffered commands (it was paused), and
  // MONITOR or RESET among them changes state_.clients.monitors.
  monitor_ids_.clear();
  for (const ClientState* monitor : state_.clients.monitors) monitor_ids_.push_back(monitor->id);
  for (std::uint64_t id : monitor_ids_) {
    const auto it = sessions_.find(id);
    if (it != sessions_.end() && it->second->has_output()) {
      it->second->on_ready(0);  // flushes, and schedules the close of a monitor that went away
    }
  }
  // CLIENT KILL closes at once, as Redis's freeClient: what the socket takes now is sent, the
  // rest dropped. (Waiting for the flush would spare a killed client that does not read.)
  for (std::uint64_t id : state_.clients.kill_list) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) continue;
    it->second->flush();
    finished_.push_back(id);
  }
  state_.clients.kill_list.clear();
  // Sessions report their end (schedule_close); they are destroyed here, never from inside their
  // own handler. An id may be listed twice: erase is idempotent.
  for (std::uint64_t id : finished_) close_session(id);
  finished_.clear();
  if (state_.shutdown_requested) loop_.stop();
}

int Server::tick_ms() const {
  const chronocache::Duration longest = housekeeping_period(state_.config.hz);
  chronocache::Duration tick = longest;
  if (state_.debug.active_expire) {
    for (std::size_t i = 0; i < state_.keyspace.count(); ++i) {
      const Engine& engine = state_.keyspace.db(i).engine();
      if (!engine.may_hold_expired(now_)) continue;  // nothing due: no reason to wake up
      tick = std::min(tick,
                      expiry_pacers_[i].interval(engine.slot_capacity(), kShortestTick, longest));
    }
  }
  if (state_.memory.pending()) tick = std::min(tick, kShortestTick);
  // A BGSAVE advances in slices of Snapshots::kStepBudget per tick: a short tick finishes it
  // soon while each slice stays short for the clients.
  if (state_.snapshots.bgsave_in_progress()) tick = std::min(tick, kShortestTick);
  return static_cast<int>(tick.count());
}

void Server::on_tick() {
  refresh_clock();  // a tick may come long after the batch's reading: slices pace by real time
  if (now_ >= next_housekeeping_) {
    housekeeping();
    next_housekeeping_ = now_ + housekeeping_period(state_.config.hz);
  }
  expire_slice();
  // maxmemory's incremental eviction (CONFIG SET maxmemory shrinking the data set), within its
  // own time budget (maxmemory-eviction-tenacity).
  state_.memory.background_step(now_);
  // BGSAVE's capture slice, its end, and the save rules.
  state_.snapshots.step(now_, unix_ms_, [this] { return loop_.events_waiting(); });
}

bool Server::load_snapshot() {
  const Snapshots::LoadResult result = state_.snapshots.load(now_, unix_ms_);
  if (result.ok) return true;
  if (state_.config.ignore_snapshot_errors) {
    log("warning", "Error loading the snapshot: " + result.error);
    log("warning", "ignore-snapshot-errors is yes: starting with an empty data set.");
    return true;
  }
  log("warning", "Fatal error loading the snapshot: " + result.error);
  log("warning",
      "The file is corrupt or was not written by this server. Move it away, or start with "
      "--ignore-snapshot-errors yes to start empty (the file is then overwritten by the next "
      "save). Exiting.");
  return false;
}

void Server::housekeeping() {
  cycle_rate_.calibrate();
  state_.stats.cycles_per_usec = cycle_rate_.per_usec();
  state_.stats.sample_ops(unix_ms_);
  const std::int64_t timeout_ms = state_.config.timeout * 1000;
  std::vector<std::uint64_t> idle;
  for (auto& [id, session] : sessions_) {
    ClientState& c = session->client();
    if (timeout_ms > 0 && !c.monitor && unix_ms_ - c.last_active_ms > timeout_ms)
      idle.push_back(id);
    session->shrink_buffers();
  }
  for (std::uint64_t id : idle) {
    log("verbose", "Closing idle client id=" + std::to_string(id));
    close_session(id);
  }
}

// One slice of active expiry over every database, within kExpirySliceBudget in all. With DEBUG
// SET-ACTIVE-EXPIRE 0 nothing is swept and no debt accrues (turning it back on starts afresh).
void Server::expire_slice() {
  const auto stop_at = std::chrono::steady_clock::now() + kExpirySliceBudget;
  const auto keep_going = [&] { return std::chrono::steady_clock::now() < stop_at; };
  for (std::size_t i = 0; i < state_.keyspace.count(); ++i) {
    chronocache::ExpiryPacer& pacer = expiry_pacers_[i];
    if (!state_.debug.active_expire) {
      pacer.idle(now_);
      continue;
    }
    SweptDb db(state_.keyspace.db(i));
    chronocache::reclaim_slice(db, pacer, now_, keep_going);
  }
}

void Server::run() {
  std::signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  loop_.run([this] { return tick_ms(); },
            [this] {
              refresh_clock();
              if (g_stop_signal != 0) {
                log("warning", std::string("Received ") +
                                   (g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM") +
                                   " scheduling shutdown...");
                g_stop_signal = 0;
                // As Redis: save first when save rules are configured; a failed save keeps the
                // server running (a second signal tries again).
                const bool save = state_.snapshots.has_save_points();
                if (state_.snapshots.prepare_shutdown(save, /*force=*/false, now_, unix_ms_))
                  state_.shutdown_requested = true;
              }
            },
            [this] { after_batch(); }, [this] { on_tick(); });
  log("warning", "chronocached is now ready to exit, bye bye...");
}

}  // namespace chronocached
