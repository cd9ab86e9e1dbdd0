// ServerState: what command handlers may read and change, passed to them (never global).
//
// What only the server owns is not here: the event loop, the sessions, the batch's clock reading
// and the next client id are Server's (server.h); a connection's bytes and socket are its
// Session's. Each field below is marked with the scope it keeps once the server runs one event
// loop per core (docs/design/threading.md):
//   global       one per process, shared by every loop: settings, data, snapshots, the clients'
//                registry (CLIENT LIST/KILL see every connection), process facts
//   per loop     one per event loop, merged when read: counters, the random source, debug knobs
// ClientState (client_state.h) is per connection.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/base/logger.h"
#include "server/client_state.h"
#include "server/config/server_config.h"
#include "server/persist/snapshots.h"
#include "server/store/keyspace.h"
#include "server/store/memory_budget.h"

namespace chronocached {

struct CommandStats {
  std::uint64_t calls = 0;
  std::uint64_t cycles = 0;  // time-stamp counter cycles in the handler (cycle_clock.h)
  std::uint64_t rejected_calls = 0;
  std::uint64_t failed_calls = 0;
};

struct ServerStats {
  std::uint64_t connections_received = 0;
  std::uint64_t rejected_connections = 0;
  std::uint64_t commands_processed = 0;
  std::uint64_t net_input_bytes = 0;
  std::uint64_t net_output_bytes = 0;
  std::uint64_t keyspace_hits_reset = 0;  // hits/misses at the last CONFIG RESETSTAT
  std::uint64_t keyspace_misses_reset = 0;
  std::uint64_t expired_keys_reset = 0;
  std::uint64_t evicted_keys_reset = 0;
  std::uint64_t total_error_replies = 0;
  // By command ordinal (command_table.h: for_each_command_stats gives names). Cleared by
  // CONFIG RESETSTAT; dispatch re-sizes it on the next command.
  std::vector<CommandStats> commands;
  double cycles_per_usec = 1000.0;  // calibrated by the server tick (cycle_clock.h)

  // instantaneous_ops_per_sec: like Redis, the mean rate over the last 16 tick samples.
  void sample_ops(std::int64_t now_ms) {
    if (last_sample_ms != 0 && now_ms > last_sample_ms &&
        commands_processed >= last_sample_commands) {  // (CONFIG RESETSTAT zeroes the count)
      ops_samples[sample_index++ % ops_samples.size()] =
          (commands_processed - last_sample_commands) * 1000 /
          static_cast<std::uint64_t>(now_ms - last_sample_ms);
    }
    last_sample_ms = now_ms;
    last_sample_commands = commands_processed;
  }
  std::uint64_t instantaneous_ops() const {
    std::uint64_t sum = 0;
    for (std::uint64_t s : ops_samples) sum += s;
    return sum / ops_samples.size();
  }
  std::array<std::uint64_t, 16> ops_samples{};
  std::size_t sample_index = 0;
  std::int64_t last_sample_ms = 0;
  std::uint64_t last_sample_commands = 0;
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

// Snapshots' settings, as SAVE, BGSAVE and the save points take them.
inline Snapshots::Settings snapshot_settings(const ServerConfig& config) {
  return Snapshots::Settings{.path = snapshot_path(config), .save_points = save_points(config)};
}

// Facts about this process, fixed once it listens.
struct ProcessInfo {
  std::string run_id;         // 40 hex characters, new per process
  std::int64_t start_ms = 0;  // wall clock at start
  int tcp_port = 0;           // the port actually bound
  std::string executable;
};

// The connected clients as commands see them (CLIENT LIST, CLIENT KILL, MONITOR). The sessions
// own the ClientStates and register them here for their lifetime.
struct ClientRegistry {
  std::unordered_map<std::uint64_t, ClientState*> by_id;
  std::vector<ClientState*> monitors;
  std::vector<std::uint64_t> kill_list;  // CLIENT KILL: closed by the server after the batch
};

// DEBUG's knobs (enable-debug-command), for tests.
struct DebugControls {
  // DEBUG ADVANCE-CLOCK moves both clocks forward, so tests of expiry run without sleeping
  // (memcached's debugtime, for the same reason).
  std::int64_t clock_offset_ms = 0;
  bool clock_moved = false;   // ADVANCE-CLOCK ran in this batch: the session re-reads the clock
  bool active_expire = true;  // DEBUG SET-ACTIVE-EXPIRE
};

struct ServerState {
  // `batch_now`: where the server keeps its batch's clock reading (the engines' LoopClock).
  ServerState(ServerConfig cfg, std::uint64_t hash_seed, const chronocache::TimePoint* batch_now,
              Logger log)
      : config(std::move(cfg)),
        logger(std::move(log)),
        keyspace(static_cast<std::size_t>(config.databases), hash_seed, batch_now),
        memory(keyspace),
        snapshots(keyspace, logger),
        random(hash_seed ^ 0x5bd1e995) {
    memory.measure_baseline();
    apply_config();
  }

  // After `config` changed (start, CONFIG SET): each module takes its own settings from it.
  // maxmemory and its policy act at once (a smaller budget starts the background eviction).
  void apply_config() {
    memory.configure(memory_settings(config));
    snapshots.configure(snapshot_settings(config));
  }

  // ---- Global ---------------------------------------------------------------------------------
  ServerConfig config;
  Logger logger;  // the server's log (Server::log)
  Keyspace keyspace;
  MemoryBudget memory;  // maxmemory: what is counted, what is evicted (store/memory_budget.h)
  // SAVE, BGSAVE, save points, load at start. After keyspace: destroyed first, so a running
  // capture is abandoned while its engines still exist.
  Snapshots snapshots;
  ClientRegistry clients;
  ProcessInfo process;
  bool shutdown_requested = false;
  std::size_t used_memory_peak = 0;  // highest used_memory INFO has seen

  // ---- Per loop -------------------------------------------------------------------------------
  ServerStats stats;
  std::mt19937_64 random;
  DebugControls debug;
};

// Wall-clock milliseconds from the system clock. Read once, at start, to fix the offset from
// which every batch's unix time is derived (Server::refresh_clock); handlers use ctx.unix_ms.
std::int64_t unix_time_ms();

}  // namespace chronocached
