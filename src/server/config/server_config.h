// ServerConfig: every setting of chronocached, and the only code that parses settings.
//
// Settings come, in order, from defaults, a redis.conf-style file (`--config FILE`, or a first
// argument that is not a flag, as redis-server takes it), and `--name value` flags; CONFIG SET
// changes the runtime ones later. Names, value syntax (memory units like 512mb, yes/no) and
// error texts follow Redis so that existing config files and tools work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace chronocached {

struct ServerConfig {
  int port = 6379;
  std::string bind = "127.0.0.1";  // space-separated addresses
  bool protected_mode = true;
  std::string requirepass;
  long long maxclients = 10000;
  long long timeout = 0;  // seconds idle before a client is closed; 0: never
  long long databases = 16;
  long long proto_max_bulk_len = 512LL << 20;
  long long client_query_buffer_limit = 1LL << 30;
  // client-output-buffer-limit for normal clients: pending reply bytes after which a client is
  // disconnected (the hard limit; Redis leaves it unlimited, unbounded memory is not an option
  // here), and a soft limit that may be exceeded for at most soft_seconds. 0: no limit.
  long long client_output_buffer_limit = 256LL << 20;
  long long client_output_buffer_soft_limit = 0;
  long long client_output_buffer_soft_seconds = 0;
  // The replica and pubsub classes' limits (hard, soft, seconds): no such clients exist yet; kept
  // so that redis.conf files load and CONFIG GET/SET round-trip as in Redis.
  long long replica_output_limits[3] = {256LL << 20, 64LL << 20, 60};
  long long pubsub_output_limits[3] = {32LL << 20, 8LL << 20, 60};
  long long tcp_backlog = 511;
  long long hz = 10;
  // Event loops (threads). 0: one per CPU the process may run on, resolved at start.
  long long threads = 0;
  // Event loops in the real-time class (SCHED_FIFO 1), for a server that shares its CPUs with
  // batch work: a woken loop then runs at once instead of at the next scheduler tick. Needs
  // CAP_SYS_NICE or an RLIMIT_RTPRIO of at least 1; without them the loops stay as they are.
  bool realtime_loops = false;
  long long maxmemory = 0;
  std::string maxmemory_policy = "noeviction";  // one of kMaxmemoryPolicies (maxmemory_policy.h)
  long long maxmemory_samples = 5;              // keys the sampled policies look at per victim
  long long maxmemory_eviction_tenacity = 10;   // 0..100: the time one eviction pass may take
  // Compaction of the records' arena (store/record_compactor.h), under Redis's names. On by
  // default, unlike Redis's (which needs its patched jemalloc): memory coming back after keys
  // leave is what this cache promises. A pass starts when the arena's unused bytes exceed both
  // the ignore bytes and the threshold percent of the records' bytes.
  bool activedefrag = true;
  long long active_defrag_ignore_bytes = 4LL << 20;
  long long active_defrag_threshold_lower = 10;
  // SLOWLOG (store/slow_log.h): commands that ran at least this many microseconds are logged
  // (negative: none; 0: every command), the newest slowlog-max-len of them kept.
  long long slowlog_log_slower_than = 10'000;
  long long slowlog_max_len = 128;
  // Per-command latency histograms (store/latency_histogram.h): recorded while on; INFO
  // latencystats reports these percentiles of each.
  bool latency_tracking = true;
  // The latency monitor (store/latency_monitor.h): events of at least this many milliseconds are
  // sampled; 0, Redis's default, samples none.
  long long latency_monitor_threshold = 0;
  // Prometheus's scrape target (metrics_endpoint.h) on this port, on the `bind` addresses:
  // -1 (the default) none, 0 one the kernel picks (INFO server's metrics_port tells which).
  long long metrics_port = -1;
  std::vector<double> latency_tracking_info_percentiles = {50.0, 99.0, 99.9};
  std::string loglevel = "notice";
  std::string logfile;  // empty: standard output
  // Snapshots (docs/design/server.md, "Snapshots"). The file is ours, not an RDB: a default name
  // of its own, so a Redis dump.rdb in the same directory is never mistaken for it.
  std::string dir = ".";
  std::string dbfilename = "dump.ccsnap";
  // Redis's save points, "<seconds> <changes> ..." (normalised): BGSAVE once `seconds` passed
  // since the last save with at least `changes` writes. Empty by default: chronocached starts as
  // an in-memory cache (the README's promise); `--save "3600 1 300 100"` turns snapshots on.
  std::string save;
  // A snapshot that cannot be loaded at start stops the server (as Redis); with this, it starts
  // empty instead and says why.
  bool ignore_snapshot_errors = false;
  // Redis's stop-writes-on-bgsave-error: once a BGSAVE failed while save points are set, writes
  // (and PING) are refused with -MISCONF until a save succeeds.
  bool stop_writes_on_bgsave_error = true;
  std::string appendonly = "no";
  bool enable_debug_command = false;
  // Redis 7's enable-protected-configs: whether CONFIG SET may change the protected settings
  // (dir, dbfilename: where SAVE writes), "no" (the default), "yes", or "local" (only from a
  // client on this host). Set at start only, as in Redis.
  std::string enable_protected_configs = "no";
  // Redis Cluster's client protocol (docs/design/server.md, "Cluster mode"): hash slots,
  // MOVED/CROSSSLOT redirections and the CLUSTER command, over a slot map kept in
  // cluster-config-file (in `dir`). Set at start only, as in Redis.
  bool cluster_enabled = false;
  std::string cluster_config_file = "nodes.conf";
  // Redis's: with unassigned slots the cluster is down (every keyed command refused) unless this
  // is no, and while down, reads may still run if allow-reads-when-down is yes.
  bool cluster_require_full_coverage = true;
  bool cluster_allow_reads_when_down = false;
  // Read-through near-cache (docs/design/server.md, "Read-through near-cache"): "host:port" of
  // a Redis-protocol server whose keys a local GET miss loads; empty: off. Set at start only.
  // Writes are then refused (-READONLY), as on a read-only replica.
  std::string upstream;
  long long upstream_max_ttl_ms = 60000;  // a loaded key lives at most this long here
  long long upstream_timeout_ms = 1000;   // one fetch (connect, GET + PTTL) at most this long
  bool upstream_prefetch = false;         // fetch the keys each client is predicted to read next
  long long upstream_prefetch_depth = 4;  // ... up to this many keys ahead (read-ahead)
  std::string config_file;                // the file read at start, for CONFIG REWRITE
};

// One named setting: how to read it and how to change it.
struct ConfigParam {
  std::string_view name;
  std::string (*get)(const ServerConfig&);
  // Applies `value`; returns an error text (without "ERR ") when it is invalid.
  std::optional<std::string> (*set)(ServerConfig&, std::string_view value);
  bool runtime;         // CONFIG SET may change it while running
  bool secret = false;  // its value is a password: CONFIG SET's shows as "(redacted)" in SLOWLOG
  // Redis 7's protected configs: CONFIG SET changes it only as enable-protected-configs allows.
  bool is_protected = false;
};

std::span<const ConfigParam> config_params();
// A percentile as Redis prints it (CONFIG GET latency-tracking-info-percentiles, INFO
// latencystats): "%f" without trailing zeros, "50", "99.9".
std::string percentile_text(double p);
// The values maxmemory-policy accepts: Redis's eight, in the order of Redis's error message, then
// chronocached's own.
const ConfigParam* find_config_param(std::string_view name);  // case-insensitive

// The save points of a normalised `save` value: {seconds, changes} pairs.
struct SavePoint {
  long long seconds;
  long long changes;
};
std::vector<SavePoint> save_points(const ServerConfig& config);
// The snapshot file: dir/dbfilename.
std::string snapshot_path(const ServerConfig& config);

// "1gb" -> 1073741824, as Redis's memtoull (b, k, kb, m, mb, g, gb; case-insensitive): no sign,
// no blanks, no fractions, fewer than 128 digits; "" and a bare unit read as 0; past the uint64
// maximum, that maximum (where Redis's product wraps).
std::optional<unsigned long long> parse_memory(std::string_view text);

struct ConfigLoad {
  ServerConfig config;
  std::string error;  // non-empty: refuse to start with this message
  bool show_help = false;
  bool show_version = false;
};

// argv as main receives it (without argv[0]).
ConfigLoad load_config(const std::vector<std::string>& args);
// Redis's sdssplitargs on one line of a config file; nullopt on unbalanced quotes.
std::optional<std::vector<std::string>> split_config_line(std::string_view line);
// The file's text for CONFIG REWRITE: current values of every setting that differs from the
// default, one per line.
std::string render_config(const ServerConfig& config);

extern const char* const kUsage;

}  // namespace chronocached
