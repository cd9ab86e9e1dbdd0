// ServerState and ClientState: what command handlers may read and change.
//
// ServerState is one event loop's world: its config, keyspace, counters and clients. It is
// passed to handlers, never global, so a second loop (one per core, later) is a second object.
// ClientState is one connection's protocol-level state (database, auth, transaction, names);
// the bytes and the socket belong to the session and the net layer, which handlers never see.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/config/server_config.h"
#include "server/snapshots.h"
#include "server/store/keyspace.h"
#include "server/store/memory_budget.h"

namespace chronocached {

struct CommandSpec;

struct ClientState {
  std::uint64_t id = 0;
  std::string name;
  std::string lib_name;
  std::string lib_version;
  std::string address;        // "ip:port" of the peer
  std::string local_address;  // "ip:port" of our end
  int fd = -1;
  std::size_t db = 0;
  int protocol = 2;
  bool authenticated = false;
  bool close_after_reply = false;  // QUIT, a protocol error, CLIENT KILL
  bool monitor = false;
  bool no_evict = false;
  // CLIENT REPLY, as Redis's CLIENT_REPLY_OFF, _SKIP and _SKIP_NEXT flags: what is answered
  // while replies_silenced() is not sent (client_command.cc has the transitions).
  bool reply_off = false;
  bool reply_skip = false;          // silences the request being run
  bool reply_skip_next = false;     // CLIENT REPLY SKIP ran: silences the next request
  std::int64_t created_ms = 0;      // wall clock, for CLIENT LIST age
  std::int64_t last_active_ms = 0;  // wall clock, for idle and timeout
  const CommandSpec* last_command = nullptr;
  // For CLIENT LIST, noted by the session when a batch starts and when it ends. While a batch
  // runs, query_buffer_bytes is the whole batch, commands already run included, as Redis's qbuf.
  std::size_t query_buffer_bytes = 0;     // qbuf
  std::size_t query_buffer_capacity = 0;  // qbuf + qbuf-free
  std::size_t output_buffer_bytes = 0;    // unsent reply bytes
  std::size_t output_sent_bytes = 0;      // sent from the front of *monitor_out, not yet erased
  // The session's output buffer, for MONITOR lines, and for CLIENT LIST's rbs and obl, read
  // live: Redis counts the replies already written by the batch's earlier commands.
  std::string* monitor_out = nullptr;

  // MULTI ... EXEC: commands queued as owned copies (the read buffer moves on).
  bool in_multi = false;
  bool multi_error = false;  // a command failed to queue: EXEC answers EXECABORT
  std::vector<std::vector<std::string>> queued;
  bool watching = false;
  bool in_exec = false;  // EXEC is running the queue: MONITOR (and blocking) are refused
  // WATCHed keys that were live at WATCH: one that is gone at EXEC expired meanwhile, which
  // aborts the transaction as in Redis (the engine's expiry tells no watcher).
  std::vector<std::pair<std::size_t, std::string>> watched_live_keys;

  bool replies_silenced() const { return reply_off || reply_skip; }
  // A request is done (run, refused, or an empty line), as Redis's resetClient: a SKIP it gave
  // silences the next request, and a SKIP that silenced it is spent.
  void end_request() {
    reply_skip = reply_skip_next;
    reply_skip_next = false;
  }
};

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
  const MaxmemoryPolicyInfo* policy = find_maxmemory_policy(config.maxmemory_policy);
  s.policy = policy != nullptr ? policy->policy : MaxmemoryPolicy::kNoEviction;
  s.samples = static_cast<std::size_t>(config.maxmemory_samples);
  s.tenacity = static_cast<unsigned>(config.maxmemory_eviction_tenacity);
  return s;
}

struct ServerState {
  explicit ServerState(ServerConfig cfg, std::uint64_t hash_seed)
      : config(std::move(cfg)),
        keyspace(static_cast<std::size_t>(config.databases), hash_seed, &batch_now),
        memory(keyspace),
        random(hash_seed ^ 0x5bd1e995) {
    memory.measure_baseline();
    memory.configure(memory_settings(config));
  }

  ServerConfig config;
  chronocache::TimePoint batch_now{};  // the engine clock at this batch's start (LoopClock)
  Keyspace keyspace;
  MemoryBudget memory;  // maxmemory: what is counted, what is evicted (store/memory_budget.h)
  ServerStats stats;
  std::mt19937_64 random;
  std::string run_id;             // 40 hex characters, new per process
  std::int64_t start_ms = 0;      // wall clock at start
  std::int64_t last_save_ms = 0;  // wall clock of the last successful save (start: start_ms)
  int tcp_port = 0;               // the port actually bound
  std::string executable;
  std::unordered_map<std::uint64_t, ClientState*> clients;  // by id; owned by the sessions
  std::vector<ClientState*> monitors;
  std::vector<std::uint64_t> kill_list;  // CLIENT KILL: closed by the server after the batch
  bool shutdown_requested = false;
  std::uint64_t next_client_id = 1;
  std::uint64_t dirty = 0;           // writes since start (rdb_changes_since_last_save)
  std::size_t used_memory_peak = 0;  // highest used_memory INFO has seen
  // DEBUG ADVANCE-CLOCK (with enable-debug-command): moves both clocks forward, so tests of
  // expiry run without sleeping (memcached's debugtime, for the same reason).
  std::int64_t clock_offset_ms = 0;
  bool clock_moved_in_batch = false;  // DEBUG ADVANCE-CLOCK ran: sessions re-read the clock
  bool active_expire = true;          // DEBUG SET-ACTIVE-EXPIRE
  // SAVE, BGSAVE, save rules, load at start (snapshots.h). After keyspace: destroyed
  // first, so a running capture is abandoned while its engines still exist.
  Snapshots snapshots;
  // The server's log (Server::log), for what handlers and the snapshot driver report.
  std::function<void(const char* level, const std::string& message)> log;
};

// Wall-clock milliseconds from the system clock. Read once, at start, to fix the offset from
// which every batch's unix time is derived (Server::refresh_clock); handlers use ctx.unix_ms.
std::int64_t unix_time_ms();

}  // namespace chronocached
