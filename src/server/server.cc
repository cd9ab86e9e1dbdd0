#include "server/server.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "server/base/cycle_clock.h"
#include "server/base/fd_limit.h"
#include "server/cluster/cluster_config_file.h"
#include "server/net/socket.h"
#include "server/upstream/upstream_address.h"

namespace chronocached {
namespace {

int level_rank(std::string_view level) {
  if (level == "debug") return 0;
  if (level == "verbose") return 1;
  if (level == "notice") return 2;
  if (level == "warning") return 3;
  return 4;
}

// `threads 0` (the default): one loop per CPU this process may run on.
ServerConfig with_threads_resolved(ServerConfig config) {
  if (config.threads == 0) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    config.threads = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  }
  return config;
}

}  // namespace

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
          with_threads_resolved(std::move(config)),
          [] {
            std::random_device rd;
            return (std::uint64_t{rd()} << 32) ^ rd();
          }(),
          Logger([this](const char* level, const std::string& message) { log(level, message); })) {
  state_.process.start_ms = state_.clock.unix_ms();
  // Commands are timed from the first one on, before the tick has calibrated the counter.
  state_.set_cycle_rate(measure_cycles_per_usec(std::chrono::milliseconds(2)));
  state_.snapshots.set_last_save(
      state_.process.start_ms);  // as Redis: save points count from start
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 40; ++i) state_.process.run_id.push_back(kHex[state_.random() % 16]);
  for (long long i = 0; i < state_.config.threads; ++i)
    loops_.push_back(std::make_unique<Loop>(state_, static_cast<std::size_t>(i), loops_));
}

Server::~Server() {
  upstream_.reset();  // before the loops: its threads post to their mailboxes
  listeners_.clear();
  metrics_.reset();  // before the loops: it is registered with loop 0's events
  loops_.clear();
}

void Server::log(const char* level, const std::string& message) {
  if (level_rank(level) < level_rank(state_.config.loglevel)) return;
  char stamp[64];
  const std::int64_t unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  const std::size_t n = std::strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S", &tm);
  std::snprintf(stamp + n, sizeof(stamp) - n, ".%03d", static_cast<int>(unix_ms % 1000));
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

// As Redis's adjustOpenFilesLimit (base/fd_limit.h): when the hard limit forbids the
// descriptors maxclients needs, lower maxclients instead.
bool Server::fit_maxclients_to_fd_limit(std::string& error) {
  const long long wanted = state_.config.maxclients + kReservedFds;
  const std::optional<FdLimit> limit = raise_fd_limit(wanted);
  if (!limit || limit->before >= wanted) return true;
  const long long usable = limit->usable;
  if (usable < wanted) {
    if (usable <= kReservedFds) {
      error = "Your current 'ulimit -n' of " + std::to_string(usable) +
              " is not enough for the server to start. Please increase your open file limit to "
              "at least " +
              std::to_string(kReservedFds + 1) + ". Exiting.";
      return false;
    }
    log("warning", "You requested maxclients of " + std::to_string(state_.config.maxclients) +
                       " requiring at least " + std::to_string(wanted) + " max file descriptors.");
    state_.config.maxclients = usable - kReservedFds;
    log("warning", "Current maximum open files is " + std::to_string(usable) +
                       ". maxclients has been reduced to " +
                       std::to_string(state_.config.maxclients) +
                       " to compensate for low ulimit. If you need higher maxclients increase "
                       "'ulimit -n'.");
  } else {
    log("notice", "Increased maximum number of open files to " + std::to_string(usable) +
                      " (it was originally set to " + std::to_string(limit->before) + ").");
  }
  return true;
}

bool Server::listen(std::string& error) {
  if (!fit_maxclients_to_fd_limit(error)) return false;
  // Port 0 lets the kernel pick a port; every further address listens on the same one, so a
  // client can reach any of them at the port the log announces.
  int port = state_.config.port;
  for (const net::BindAddress& address : net::bind_addresses(state_.config.bind)) {
    const int fd =
        net::listen_tcp(address.host, port, static_cast<int>(state_.config.tcp_backlog), error);
    if (fd < 0) {
      if (!address.optional) return false;
      log("warning", "Skipping optional bind address: " + error);
      error.clear();
      continue;
    }
    state_.process.tcp_port = net::local_port(fd);
    port = state_.process.tcp_port;
    listeners_.push_back(std::make_unique<Listener>(*this, fd));
    loops_[0]->events().add(fd, true, false, listeners_.back().get());
  }
  if (listeners_.empty()) {
    error = "no bind address configured";
    return false;
  }
  if (state_.config.metrics_port >= 0) {
    metrics_ = std::make_unique<MetricsEndpoint>(state_, loops_[0]->events());
    if (!metrics_->listen(state_.config.bind, static_cast<int>(state_.config.metrics_port),
                          error)) {
      error = "metrics port: " + error;
      return false;
    }
    state_.process.metrics_port = metrics_->port();
    // Worded without "port <n>", which log readers (and the tests) take for the RESP port.
    log("notice", "Metrics endpoint listening at :" + std::to_string(metrics_->port()) +
                      " (HTTP GET /metrics, /healthz)");
  }
  return true;
}

// Round robin: redis-benchmark and connection pools open their connections in a burst, which a
// loop-that-wakes-first scheme (EPOLLEXCLUSIVE, SO_REUSEPORT's hash) spreads unevenly.
// The loop admits it (maxclients, protected mode) under the state lock.
void Server::accept_from(int listen_fd) {
  // A few per wakeup: a connection storm must not starve the clients already served.
  for (int i = 0; i < 64; ++i) {
    const int fd = net::accept_client(listen_fd);
    if (fd < 0) return;
    loops_[next_loop_++ % loops_.size()]->hand_over(fd, next_client_id_++);
  }
}

bool Server::start_cluster(std::string& error) {
  if (!state_.config.cluster_enabled) return true;
  const std::string path =
      (std::filesystem::path(state_.config.dir) / state_.config.cluster_config_file).string();
  cluster_lock_ = ClusterConfigLock::take(path, error);
  if (!cluster_lock_) return false;
  std::optional<ClusterMap> map = load_cluster_config(path, state_.random, error);
  if (!map) return false;
  // Where clients reach this node: the first bind address that names one host (no gossip will
  // tell it otherwise). With wildcards alone, the address the first MEET reached it by
  // (cluster_meet), kept in the file from an earlier run, or none until a peer meets it, which
  // clients read as "the address you used".
  ClusterNode& myself = map->myself();
  for (const net::BindAddress& address : net::bind_addresses(state_.config.bind)) {
    if (address.host != "*" && address.host != "0.0.0.0" && address.host != "::") {
      myself.ip = address.host;
      break;
    }
  }
  myself.port = state_.process.tcp_port;
  myself.cport = myself.port + 10000 <= 65535 ? myself.port + 10000 : 0;
  ClusterConfigFile file(path);
  if (!file.save(*map, error)) return false;
  log("notice", "Cluster mode: node " + myself.id + ", " + std::to_string(map->assigned_slots()) +
                    " slots assigned, config " + path);
  state_.cluster = std::move(map);
  state_.cluster_config = std::move(file);
  handshakes_ = std::make_unique<ClusterHandshakes>(state_);
  handshakes_->start();
  return true;
}

bool Server::prepare_upstream(std::string& error) {
  const std::string& text = state_.config.upstream;
  if (text.empty()) return true;
  if (state_.config.cluster_enabled) {
    error = "upstream and cluster-enabled cannot both be set";
    return false;
  }
  if (!parse_upstream_address(text)) {
    error = "upstream must be ip:port (or localhost:port), not '" + text + "'";
    return false;
  }
  upstream_ = std::make_unique<UpstreamFetcher>(
      state_, [this](std::size_t loop) { loops_[loop]->wake_postponed(); });
  if (state_.config.upstream_prefetch)
    state_.upstream_model = std::make_unique<chronocache::SuccessorModel<std::string>>(
        chronocache::SuccessorModelOptions{});
  log("notice", "Read-through near-cache of " + text + ": writes are refused (READONLY)" +
                    (state_.config.upstream_prefetch ? "; prefetching predicted reads" : ""));
  return true;
}

bool Server::load_snapshot() {
  const Snapshots::LoadResult result =
      state_.snapshots.load(state_.clock.now(), state_.clock.unix_ms());
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

bool Server::verify_cluster_data(std::string& error) {
  if (!state_.cluster) return true;
  const chronocache::TimePoint now = state_.clock.now();
  for (std::size_t i = 1; i < state_.keyspace.count(); ++i) {
    if (state_.keyspace.db(i).stored_size() != 0) {
      error = "You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.";
      return false;
    }
  }
  ClusterMap& map = *state_.cluster;
  const Db& db = state_.keyspace.db(0);
  bool changed = false;
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
    if (map.owner(slot) == ClusterMap::kMyself ||
        map.importing_from(slot) != ClusterMap::kUnassigned)
      continue;
    bool has_keys = false;
    db.for_each_in_slot(slot, now, [&](std::string_view, const Blob&) {
      has_keys = true;
      return false;
    });
    if (!has_keys) continue;
    changed = true;
    if (map.owner(slot) == ClusterMap::kUnassigned) {
      log("notice", "I have keys for unassigned slot " + std::to_string(slot) +
                        ". Taking responsibility for it.");
      map.assign(slot, ClusterMap::kMyself);
    } else {
      log("notice", "I have keys for slot " + std::to_string(slot) +
                        ", but the slot is assigned to another node. Setting it to importing "
                        "state.");
      map.set_importing(slot, map.owner(slot));
    }
  }
  return !changed || state_.cluster_config->save(map, error, ClusterConfigFile::Sync::kAlways);
}

void Server::run() {
  // main installed the stop signals' handler before startup. The other loops' threads block
  // SIGINT and SIGTERM (a thread inherits the mask it is created with): the signals wake loop 0's
  // epoll_wait, which starts the shutdown.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < loops_.size(); ++i)
    threads.emplace_back([loop = loops_[i].get()] { loop->run(); });
  if (upstream_) upstream_->start();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  loops_[0]->run();
  for (std::thread& thread : threads) thread.join();
  if (upstream_) upstream_->stop();
  if (handshakes_) handshakes_->stop();
  log("warning", "chronocached is now ready to exit, bye bye...");
}

}  // namespace chronocached
