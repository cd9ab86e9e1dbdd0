// ServerState: what command handlers may read and change, passed to them (never global).
//
// What only the server owns is not here: the event loops and their sessions are Server's and
// Loop's (server.h, loop.h); a connection's bytes and socket are its Session's. ClientState
// (client_state.h) is per connection.
//
// The server runs `threads` event loops (docs/design/server.md). Every field here is one per
// process and is read or written only while holding `mu`, the state lock: a loop takes it to run
// a batch of commands, to admit or close a connection, and for its timers; it never holds it
// across a system call on a client socket. The exceptions are marked: `io` (per loop, atomic) and
// `stopping` (atomic), which loops touch outside the lock.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "chronocache/base/mutex.h"
#include "chronocache/predict/successor_model.h"
#include "server/base/logger.h"
#include "server/client_state.h"
#include "server/cluster/cluster_config_file.h"
#include "server/cluster/cluster_map.h"
#include "server/cluster/peer_connection.h"
#include "server/config/server_config.h"
#include "server/persist/snapshots.h"
#include "server/store/batch_clock.h"
#include "server/store/buffer_peaks.h"
#include "server/store/heap_trimmer.h"
#include "server/store/keyspace.h"
#include "server/store/latency_histogram.h"
#include "server/store/latency_monitor.h"
#include "server/store/memory_budget.h"
#include "server/store/rate_samples.h"
#include "server/store/record_compactor.h"
#include "server/store/slow_log.h"
#include "server/upstream/fetch_queue.h"

namespace chronocached {

struct CommandStats {
  std::uint64_t calls = 0;
  std::uint64_t cycles = 0;  // time-stamp counter cycles in the handler (cycle_clock.h)
  std::uint64_t rejected_calls = 0;
  std::uint64_t failed_calls = 0;
};

// Bytes one loop moved through its sockets (INFO's total_net_*_bytes). Per loop and summed when
// read, so that no cache line is shared between loops per read() or write(); atomic because the
// loop counts outside the state lock while INFO or CONFIG RESETSTAT reads or zeroes under it.
struct alignas(64) IoCounters {
  std::atomic<std::uint64_t> input{0};   // bytes read
  std::atomic<std::uint64_t> output{0};  // bytes written
  std::atomic<std::uint64_t> reads{0};   // reads from client sockets (Redis's read events)
  std::atomic<std::uint64_t> writes{0};  // flushes of a client's pending output
};

struct ServerStats {
  std::uint64_t connections_received = 0;
  std::uint64_t rejected_connections = 0;
  std::uint64_t commands_processed = 0;
  std::uint64_t keyspace_hits_reset = 0;  // hits/misses at the last CONFIG RESETSTAT
  std::uint64_t keyspace_misses_reset = 0;
  std::uint64_t expired_keys_reset = 0;
  std::uint64_t evicted_keys_reset = 0;
  std::uint64_t total_error_replies = 0;
  // Wall time spent in active expiry's slices (Redis's expire_cycle_cpu_milliseconds, which
  // times its cycles the same way).
  std::uint64_t expire_cycle_ns = 0;
  // Active expiry's slices that stopped at their time budget with due slots left unexamined
  // (Redis's expired_time_cap_reached_count: its cycles that stopped at their time limit).
  std::uint64_t expire_time_cap_reached = 0;
  // The state lock (loop.h), for INFO's threads figures: how often it was taken, and the
  // time-stamp-counter cycles it was held and waited for (cycle_clock.h).
  std::uint64_t lock_acquisitions = 0;
  std::uint64_t lock_held_cycles = 0;
  std::uint64_t lock_wait_cycles = 0;
  // By command ordinal (command_table.h: for_each_command_stats gives names). Cleared by
  // CONFIG RESETSTAT; dispatch re-sizes it on the next command.
  std::vector<CommandStats> commands;
  // By the same ordinal: each command's times while latency-tracking is on, made at its first
  // (24 KiB), as Redis. Beside `commands`, not in CommandStats: at 32 bytes an entry is found
  // with a shift (a 40-byte one took a multiply, and execute_now stopped inlining stats_of:
  // callgrind, 26 instructions a request).
  std::vector<std::unique_ptr<LatencyHistogram>> latency;
  double cycles_per_usec = 1000.0;  // calibrated by the server tick (cycle_clock.h)
  // Nanoseconds per cycle in 32.32 fixed point (1000 / the above): latency histograms, with
  // one multiply a command.
  std::uint64_t ns_per_cycle_q32 = std::uint64_t{1} << 32;

  // INFO's instantaneous_ops_per_sec, _input_kbps and _output_kbps (of the bytes read and
  // written), sampled by the housekeeping tick (Loop::housekeeping).
  RateSamples ops_rate;
  RateSamples input_rate;
  RateSamples output_rate;
  // INFO's client_recent_max_input_buffer and _output_buffer, noted by every loop's housekeeping
  // (Session::shrink_buffers). CONFIG RESETSTAT keeps them, as Redis's does.
  BufferPeaks buffer_peaks;

  std::map<std::string, std::uint64_t, std::less<>> errors;  // by error code ("ERR", ...)
};

// maxmemory, maxmemory-policy, maxmemory-samples and maxmemory-eviction-tenacity as the budget
// takes them (the config accepts only policy names the budget knows: memory_budget_test.cc).
inline MemoryBudget::Settings memory_settings(const ServerConfig& config) {
  MemoryBudget::Settings s;
  s.maxmemory = static_cast<std::size_t>(config.maxmemory);
  const MaxmemoryPolicyName* policy = find_maxmemory_policy(config.maxmemory_policy);
  s.policy = policy != nullptr ? policy->policy : MaxmemoryPolicy::kNoEviction;
  s.samples = static_cast<std::size_t>(config.maxmemory_samples);
  s.tenacity = static_cast<unsigned>(config.maxmemory_eviction_tenacity);
  return s;
}

// The records' compaction, as activedefrag and its thresholds set it.
inline RecordCompactor::Settings compactor_settings(const ServerConfig& config) {
  return RecordCompactor::Settings{
      .enabled = config.activedefrag,
      .ignore_bytes = static_cast<std::size_t>(config.active_defrag_ignore_bytes),
      .threshold_percent = static_cast<unsigned>(config.active_defrag_threshold_lower)};
}

// SLOWLOG's threshold and length.
inline SlowLog::Settings slow_log_settings(const ServerConfig& config) {
  return SlowLog::Settings{.slower_than_usec = config.slowlog_log_slower_than,
                           .max_len = static_cast<std::size_t>(config.slowlog_max_len)};
}

// Snapshots' settings, as SAVE, BGSAVE and the save points take them.
inline Snapshots::Settings snapshot_settings(const ServerConfig& config) {
  return Snapshots::Settings{.path = snapshot_path(config), .save_points = save_points(config)};
}

// Facts about this process, fixed once it listens.
struct ProcessInfo {
  std::string run_id;         // 40 hex characters, new per process
  std::int64_t start_ms = 0;  // wall clock at start
  int tcp_port = 0;           // the port actually bound
  int metrics_port = -1;      // the metrics endpoint's, -1 without one
  std::string executable;
};

// The connected clients as commands see them (CLIENT LIST, CLIENT KILL, MONITOR). The sessions
// own the ClientStates and register them here for their lifetime.
struct ClientRegistry {
  std::unordered_map<std::uint64_t, ClientState*> by_id;
  std::vector<ClientState*> monitors;
  std::vector<std::uint64_t> kill_list;  // CLIENT KILL: closed by their loops after the batch
  // A command wrote MONITOR lines (ClientState::monitor_feed): their loops send them after the
  // batch.
  bool monitor_feed_pending = false;
  // CLIENT PAUSE: until when (unix ms), and whether only writes wait. A command that must wait
  // is not run (execute() says so) and its connection retries once the pause ends; CLIENT
  // UNPAUSE sets `pause_lifted` so that every loop retries at once.
  std::int64_t pause_until_ms = 0;
  bool pause_writes_only = false;
  bool pause_lifted = false;
  bool paused(std::int64_t unix_ms) const { return unix_ms < pause_until_ms; }
};

// DEBUG's knobs (enable-debug-command), for tests.
struct DebugControls {
  // DEBUG ADVANCE-CLOCK moves both clocks forward, so tests of expiry run without sleeping
  // (memcached's debugtime, for the same reason).
  std::int64_t clock_offset_ms = 0;
  bool clock_moved = false;   // ADVANCE-CLOCK ran, or the clock was read again (execute_now):
                              // the session re-reads it for the rest of its batch
  bool active_expire = true;  // DEBUG SET-ACTIVE-EXPIRE
};

struct ServerState {
  // `cfg.threads`: how many event loops will count bytes in `io` (resolved: at least 1).
  ServerState(ServerConfig cfg, std::uint64_t hash_seed, Logger log)
      : config(std::move(cfg)),
        logger(std::move(log)),
        keyspace(static_cast<std::size_t>(config.databases),
                 BlobHash(hash_seed, config.cluster_enabled), clock.reading()),
        memory(keyspace),
        compactor(keyspace),
        snapshots(keyspace, logger),
        random(hash_seed ^ 0x5bd1e995) {
    for (long long i = 0; i < config.threads; ++i) io.push_back(std::make_unique<IoCounters>());
    restart_rates();
    memory.measure_baseline();
    apply_config();
  }

  // The time-stamp counter's rate (cycle_clock.h), for whatever converts cycles to time:
  // measured as the server starts (Server), then calibrated by loop 0's tick.
  void set_cycle_rate(double cycles_per_usec) {
    stats.cycles_per_usec = cycles_per_usec;
    stale_clock_cycles = static_cast<std::uint64_t>(cycles_per_usec * kStaleClockUsec);
    stats.ns_per_cycle_q32 = static_cast<std::uint64_t>(1000.0 / cycles_per_usec * 4294967296.0);
    slow_log.set_cycles_per_usec(cycles_per_usec);
    latency_monitor.set_cycles_per_usec(cycles_per_usec);
    update_slow_command_cycles();
  }
  // A command that ran fewer cycles concerns neither SLOWLOG nor the latency monitor: the one
  // compare execute_now makes for both.
  void update_slow_command_cycles() {
    slow_command_cycles = std::min(slow_log.threshold_cycles(), latency_monitor.threshold_cycles());
  }

  // What the loops read from and wrote to clients since the start or the last CONFIG
  // RESETSTAT, all together (INFO's total_net_*_bytes and total_*_processed), and the reads and
  // writes of loops other than loop 0 (io_threaded_*_processed: as Redis's I/O threads, they
  // take that work off the loop that runs the timers; 0 with one loop, as Redis with one).
  struct IoTotals {
    std::uint64_t input = 0;
    std::uint64_t output = 0;
    std::uint64_t reads = 0;
    std::uint64_t writes = 0;
    std::uint64_t threaded_reads = 0;
    std::uint64_t threaded_writes = 0;
  };
  IoTotals io_totals() const {
    IoTotals total;
    for (std::size_t i = 0; i < io.size(); ++i) {
      const IoCounters& loop = *io[i];
      total.input += loop.input.load(std::memory_order_relaxed);
      total.output += loop.output.load(std::memory_order_relaxed);
      const std::uint64_t reads = loop.reads.load(std::memory_order_relaxed);
      const std::uint64_t writes = loop.writes.load(std::memory_order_relaxed);
      total.reads += reads;
      total.writes += writes;
      if (i != 0) {
        total.threaded_reads += reads;
        total.threaded_writes += writes;
      }
    }
    return total;
  }
  // INFO's instantaneous rates count from now (the start, CONFIG RESETSTAT), every sample 0.
  void restart_rates() {
    const std::int64_t unix_ms = clock.unix_ms();
    const IoTotals net = io_totals();
    stats.ops_rate.restart(unix_ms, stats.commands_processed);
    stats.input_rate.restart(unix_ms, net.input);
    stats.output_rate.restart(unix_ms, net.output);
  }
  // Samples INFO's instantaneous rates (the housekeeping tick, at `unix_ms`).
  void sample_rates(std::int64_t unix_ms) {
    const IoTotals net = io_totals();
    stats.ops_rate.add(unix_ms, stats.commands_processed);
    stats.input_rate.add(unix_ms, net.input);
    stats.output_rate.add(unix_ms, net.output);
  }

  // After `config` changed (start, CONFIG SET): each module takes its own settings from it.
  // maxmemory and its policy act at once (a smaller budget starts the background eviction).
  // The loops copy what they read outside the lock when `config_generation` moves.
  void apply_config() {
    memory.configure(memory_settings(config));
    compactor.configure(compactor_settings(config));
    snapshots.configure(snapshot_settings(config));
    slow_log.configure(slow_log_settings(config));
    latency_monitor.set_threshold_ms(config.latency_monitor_threshold);
    update_slow_command_cycles();
    ++config_generation;
  }

  // The state lock. Not a reader-writer lock: nearly every command writes (counters, LRU order,
  // lazy expiry), and the measured hold time per request is a fraction of the system calls around
  // it (docs/design/server.md).
  chronocache::Mutex mu;

  ServerConfig config;
  std::uint64_t config_generation = 0;
  BatchClock clock;  // the batch's time for every loop (before keyspace: the engines read it)
  // The batch's clock is read once per wakeup; a batch whose commands have run for longer than
  // kStaleClockUsec since that reading reads it again after the command that passed it
  // (execute_now), so a slow command (KEYS over a large keyspace, DEBUG SLEEP) does not leave the
  // commands after it, in the pipeline or the transaction, a time that stood still: a TTL set
  // after it starts from now, and a key it outlived has expired, as in Redis, whose time moves
  // from one command to the next.
  static constexpr double kStaleClockUsec = 1000;
  std::uint64_t clock_read_cycles = 0;  // cycles_now() at the clock's last reading
  // Moves the shared clock to a wall-clock reading taken at `cycles` (cycles_now()), plus DEBUG
  // ADVANCE-CLOCK's offset; it never goes back.
  void set_clock_reading(chronocache::TimePoint wall, std::uint64_t cycles) {
    clock.advance(wall + std::chrono::milliseconds(debug.clock_offset_ms));
    clock_read_cycles = cycles;
  }
  std::uint64_t stale_clock_cycles = static_cast<std::uint64_t>(1000.0 * kStaleClockUsec);
  Logger logger;  // the server's log (Server::log)
  // When a connection was last closed for sending an HTTP request (Session): logged once a
  // minute at most, so that a flood of them cannot flood the log.
  std::int64_t http_request_logged_ms = 0;
  Keyspace keyspace;
  MemoryBudget memory;        // maxmemory: what is counted, what is evicted (store/memory_budget.h)
  RecordCompactor compactor;  // activedefrag: the records' arena gives memory back
  HeapTrimmer heap_trimmer;   // shrunk tables' heap pages back to the OS
  // SAVE, BGSAVE, save points, load at start. After keyspace: destroyed first, so a running
  // capture is abandoned while its engines still exist.
  Snapshots snapshots;
  ClientRegistry clients;
  ProcessInfo process;
  bool shutdown_requested = false;
  // Set (under the lock) once a shutdown is decided; every loop stops after its batch.
  std::atomic<bool> stopping{false};
  std::vector<std::unique_ptr<IoCounters>> io;  // by loop index

  ServerStats stats;
  SlowLog slow_log;                // SLOWLOG: configured by apply_config, timed by execute_now
  LatencyMonitor latency_monitor;  // LATENCY LATEST/HISTORY: commands and background steps
  std::uint64_t slow_command_cycles = CycleThreshold::kNever;
  std::mt19937_64 random;
  DebugControls debug;
  // Cluster mode (cluster-enabled): this node's slot map, and the file it is saved to after every
  // change. Empty when cluster mode is off.
  std::optional<ClusterMap> cluster;
  std::optional<ClusterConfigFile> cluster_config;
  // MEETs answered and not yet carried out: the handshake thread (cluster_handshakes.h) asks
  // each peer for its view, under no lock, and merges it. Woken by `meets_ready` (with `mu`).
  std::vector<ClusterNode> pending_meets;
  chronocache::CondVar meets_ready;
  // MIGRATE's connections to its targets ("host:port"), kept between calls as Redis keeps them:
  // a reshard sends one MIGRATE per batch of keys to the same target.
  // Each is closed once unused for 10 s (Redis's MIGRATE_SOCKET_CACHE_TTL): by the next MIGRATE
  // to it, or by loop 0's housekeeping, so a target does not keep an idle client of ours.
  struct MigrateTarget {
    static constexpr std::int64_t kIdleCloseMs = 10'000;
    PeerConnection connection;
    std::int64_t last_used_ms = 0;
    long long selected_db = -1;  // what the target has SELECTed for us (-1: unknown)

    bool idle_too_long(std::int64_t unix_ms) const noexcept {
      return unix_ms - last_used_ms > kIdleCloseMs;
    }
  };
  std::map<std::string, MigrateTarget> migrate_targets;
  void close_idle_migrate_targets(std::int64_t unix_ms) {
    std::erase_if(migrate_targets,
                  [unix_ms](const auto& target) { return target.second.idle_too_long(unix_ms); });
  }
  // --upstream: the fetches GET misses asked for (single-flight, bounded), taken by the fetcher
  // threads (upstream_fetcher.h), woken by `upstream_ready` (with `mu`).
  FetchQueue upstream_fetches{kUpstreamQueueCapacity};
  chronocache::CondVar upstream_ready;
  // upstream-prefetch (off: null): which key each client reads after which, over all clients'
  // reads (each client's own sequence: ClientState::upstream_stream), and the prefetched keys
  // not read yet, for INFO's used count (cleared whole past kPrefetchedTracked keys).
  std::unique_ptr<chronocache::SuccessorModel<std::string>> upstream_model;
  std::unordered_set<std::string> upstream_prefetched;
  std::uint64_t upstream_prefetches_used = 0;
  static constexpr std::size_t kPrefetchedTracked = 65536;
  // Distinct keys pending upstream at most: at 1 ms a fetch and two fetcher threads, a full
  // queue is half a second of work; past it a miss is answered -TRYAGAIN at once.
  static constexpr std::size_t kUpstreamQueueCapacity = 1024;
};

}  // namespace chronocached
