#include "server/commands/info.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <concepts>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

#include "chronocache/stats.h"
#include "server/base/version.h"
#include "server/commands/command_table.h"
#include "server/commands/memory_report.h"

namespace chronocached {
chronocache::CacheStats engine_totals(const ServerState& server) {
  chronocache::CacheStats total;
  for (std::size_t i = 0; i < server.keyspace.count(); ++i) total += server.keyspace.db(i).stats();
  return total;
}

namespace {

// Appends "name:value\r\n" lines under "# Title" headers, sections separated by a blank line.
class InfoText {
 public:
  void section(std::string_view title) {
    if (!text_.empty()) text_.append("\r\n");
    text_.append("# ");
    text_.append(title);
    text_.append("\r\n");
  }
  void field(std::string_view name, std::string_view value) {
    text_.append(name);
    text_.push_back(':');
    text_.append(value);
    text_.append("\r\n");
  }
  void field(std::string_view name, const char* value) { field(name, std::string_view(value)); }
  void field(std::string_view name, const std::string& value) {
    field(name, std::string_view(value));
  }
  template <std::integral T>
  void field(std::string_view name, T value) {
    char buf[24];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
    field(name, std::string_view(buf, static_cast<std::size_t>(end - buf)));
  }
  // A double with the fixed decimals Redis prints ("%.2f", "%.6f").
  void fixed(std::string_view name, double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
    field(name, buf);
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Redis's bytesToHuman: 1023B, 1.00K, 1.50M, ...
std::string human_bytes(std::uint64_t n) {
  char buf[32];
  constexpr const char* kUnits = "KMGTP";
  if (n < 1024) {
    std::snprintf(buf, sizeof(buf), "%lluB", static_cast<unsigned long long>(n));
    return buf;
  }
  double scaled = static_cast<double>(n) / 1024;
  int unit = 0;
  for (; scaled >= 1024 && unit < 4; ++unit) scaled /= 1024;
  std::snprintf(buf, sizeof(buf), "%.2f%c", scaled, kUnits[unit]);
  return buf;
}

std::string rusage_seconds(const struct timeval& tv) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec),
                static_cast<long>(tv.tv_usec));
  return buf;
}

// A counter since the last CONFIG RESETSTAT (never below zero, should an engine ever restart).
std::uint64_t since_reset(std::uint64_t now, std::uint64_t at_reset) {
  return now >= at_reset ? now - at_reset : 0;
}

void server_section(InfoText& info, const CommandContext& ctx) {
  const ServerState& server = ctx.server;
  info.section("Server");
  info.field("redis_version", kRedisVersion);
  info.field("chronocached_version", kVersion);
  info.field("redis_git_sha1", "00000000");
  info.field("redis_git_dirty", 0);
  info.field("redis_build_id", "0");
  info.field("redis_mode", server.cluster ? "cluster" : "standalone");
  struct utsname name {};
  uname(&name);
  std::string os = name.sysname;
  os.append(" ").append(name.release).append(" ").append(name.machine);
  info.field("os", os);
  info.field("arch_bits", static_cast<int>(sizeof(void*) * 8));
  info.field("monotonic_clock", "POSIX clock_gettime");
  info.field("multiplexing_api", "epoll");
  info.field("atomicvar_api", "c11-builtin");
  char gcc[32];
  std::snprintf(gcc, sizeof(gcc), "%d.%d.%d", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
  info.field("gcc_version", gcc);
  info.field("process_id", static_cast<long long>(getpid()));
  info.field("process_supervised", "no");
  info.field("run_id", server.process.run_id);
  info.field("tcp_port", server.process.tcp_port);
  info.field("metrics_port", server.process.metrics_port);  // chronocached's: -1 for none
  info.field("server_time_usec", static_cast<long long>(ctx.unix_us_now()));
  const std::int64_t uptime = (ctx.unix_ms - server.process.start_ms) / 1000;
  info.field("uptime_in_seconds", static_cast<long long>(uptime));
  info.field("uptime_in_days", static_cast<long long>(uptime / 86400));
  info.field("hz", server.config.hz);
  info.field("configured_hz", server.config.hz);
  info.field("lru_clock", static_cast<long long>((ctx.unix_ms / 1000) & ((1 << 24) - 1)));
  info.field("executable", server.process.executable);
  info.field("config_file", server.config.config_file);
  info.field("io_threads_active", server.io.size() > 1 ? 1 : 0);
}

void clients_section(InfoText& info, const ServerState& server, std::int64_t unix_ms) {
  std::size_t blocked = 0;
  std::size_t connected = 0;  // a killed client is gone, as CLIENT LIST says
  for (const auto& [id, client] : server.clients.by_id) {
    if (client->killed) continue;
    ++connected;
    if (client->blocked) ++blocked;
  }
  info.section("Clients");
  info.field("connected_clients", connected);
  info.field("cluster_connections", 0);
  info.field("maxclients", server.config.maxclients);
  const BufferPeaks::Peaks recent = server.stats.buffer_peaks.recent(unix_ms / 1000);
  info.field("client_recent_max_input_buffer", recent.input);
  info.field("client_recent_max_output_buffer", recent.output);
  info.field("blocked_clients", blocked);
  info.field("tracking_clients", 0);
  info.field("clients_in_timeout_table", 0);
}

// used_memory is maxmemory's own figure (store/memory_budget.h says what it counts): the number
// eviction compares with the budget, so a client reading INFO sees what the server acts on. The
// rest of the section splits it as MEMORY STATS does (commands/memory_report.h).
void memory_section(InfoText& info, ServerState& server) {
  const MemoryReport memory = memory_report(server);
  const std::size_t used = memory.total;
  const std::size_t rss = memory.rss;
  const auto system_memory = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                             static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const auto maxmemory = static_cast<std::uint64_t>(server.config.maxmemory);
  const auto percent = [](float value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f%%", static_cast<double>(value));
    return std::string(text);
  };
  info.section("Memory");
  info.field("used_memory", used);
  info.field("used_memory_human", human_bytes(used));
  info.field("used_memory_rss", rss);
  info.field("used_memory_rss_human", human_bytes(rss));
  info.field("used_memory_peak", memory.peak);
  info.field("used_memory_peak_human", human_bytes(memory.peak));
  info.field("used_memory_peak_perc", percent(memory.peak_percent()));
  info.field("used_memory_overhead", memory.overhead);
  info.field("used_memory_startup", memory.startup);
  info.field("used_memory_dataset", memory.dataset);
  info.field("used_memory_dataset_perc", percent(memory.dataset_percent()));
  info.field("allocator_allocated", memory.allocator_allocated());
  info.field("allocator_active", memory.allocator_active());
  info.field("allocator_resident", memory.allocator_resident());
  info.field("total_system_memory", system_memory);
  info.field("total_system_memory_human", human_bytes(system_memory));
  // No scripting (EVAL, FUNCTION): no Lua VM, no scripts, no functions. Redis's fields, at 0.
  for (const std::string_view field :
       {"used_memory_lua", "used_memory_vm_eval", "used_memory_lua_human",
        "used_memory_scripts_eval", "number_of_cached_scripts", "number_of_functions",
        "number_of_libraries", "used_memory_vm_functions", "used_memory_vm_total",
        "used_memory_vm_total_human", "used_memory_functions", "used_memory_scripts",
        "used_memory_scripts_human"}) {
    if (field.ends_with("_human"))
      info.field(field, human_bytes(0));
    else
      info.field(field, 0);
  }
  info.field("maxmemory", maxmemory);
  info.field("maxmemory_human", human_bytes(maxmemory));
  info.field("maxmemory_policy", server.config.maxmemory_policy);
  // The allocator's lines from its stand-in figures (memory_report.h): allocator and total
  // fragmentation are the same ratio, the allocator's own RSS overhead none.
  info.fixed("allocator_frag_ratio", memory.allocator_fragmentation(), 2);
  info.field("allocator_frag_bytes", memory.allocator_fragmentation_bytes());
  info.fixed("allocator_rss_ratio", 1.0, 2);
  info.field("allocator_rss_bytes", 0);
  info.fixed("rss_overhead_ratio", 1.0, 2);
  info.field("rss_overhead_bytes", 0);
  info.fixed("mem_fragmentation_ratio", memory.fragmentation(), 2);
  info.field("mem_fragmentation_bytes", memory.fragmentation_bytes());
  info.field("mem_not_counted_for_evict", 0);  // no replication backlog or AOF buffer
  info.field("mem_replication_backlog", 0);
  info.field("mem_total_replication_buffers", 0);
  info.field("mem_clients_slaves", 0);
  info.field("mem_clients_normal", memory.clients);
  info.field("mem_cluster_links", 0);  // no cluster bus (docs/design/server.md, "Cluster mode")
  info.field("mem_aof_buffer", 0);
  info.field("mem_allocator", "libc");
  info.field("active_defrag_running", server.compactor.running() ? 1 : 0);
  info.field("lazyfree_pending_objects", 0);
  info.field("lazyfreed_objects", 0);
  // chronocached's own: the records' arena (docs/design/memory.md). Its pages' bytes against its
  // records' bytes is the fragmentation activedefrag works on.
  const chronocache::RecordArena& arena = server.keyspace.arena();
  info.field("arena_records", arena.records());
  info.field("arena_record_bytes", arena.record_bytes());
  info.field("arena_page_bytes", arena.pages_in_use() * chronocache::RecordArena::kPageBytes);
  info.field("arena_resident_bytes", arena.resident_bytes());
  info.field("heap_trims", server.heap_trimmer.trims());
  info.field("heap_trim_last_usec", server.heap_trimmer.last_trim_usec());
}

// Redis 7.0's fields in Redis's order. No fork, so the copy-on-write fields stay 0: a BGSAVE
// here copies nothing (server/persist/snapshots.h).
void persistence_section(InfoText& info, const ServerState& server, std::int64_t unix_ms) {
  const Snapshots& snapshots = server.snapshots;
  const bool saving = snapshots.bgsave_in_progress();
  info.section("Persistence");
  info.field("loading", 0);
  info.field("async_loading", 0);
  info.field("current_cow_peak", 0);
  info.field("current_cow_size", 0);
  info.field("current_cow_size_age", 0);
  info.fixed("current_fork_perc", 0, 2);
  info.field("current_save_keys_processed", saving ? snapshots.keys_processed() : 0);
  info.field("current_save_keys_total", saving ? snapshots.keys_total() : 0);
  info.field("rdb_changes_since_last_save", server.keyspace.changes());
  info.field("rdb_bgsave_in_progress", saving ? 1 : 0);
  info.field("rdb_last_save_time", static_cast<long long>(server.snapshots.last_save_ms() / 1000));
  info.field("rdb_last_bgsave_status", snapshots.last_bgsave_ok() ? "ok" : "err");
  info.field("rdb_last_bgsave_time_sec", static_cast<long long>(snapshots.last_bgsave_seconds()));
  info.field(
      "rdb_current_bgsave_time_sec",
      saving ? static_cast<long long>((unix_ms - snapshots.bgsave_started_ms()) / 1000) : -1LL);
  info.field("rdb_saves", snapshots.saves());
  info.field("rdb_last_cow_size", 0);
  info.field("rdb_last_load_keys_expired", snapshots.last_load_expired());
  info.field("rdb_last_load_keys_loaded", snapshots.last_load_loaded());
  info.field("aof_enabled", 0);
  info.field("aof_rewrite_in_progress", 0);
  info.field("aof_rewrite_scheduled", 0);
  info.field("aof_last_rewrite_time_sec", -1);
  info.field("aof_current_rewrite_time_sec", -1);
  info.field("aof_last_bgrewrite_status", "ok");
  info.field("aof_rewrites", 0);
  info.field("aof_rewrites_consecutive_failures", 0);
  info.field("aof_last_write_status", "ok");
  info.field("aof_last_cow_size", 0);
  info.field("module_fork_in_progress", 0);
  info.field("module_fork_last_cow_size", 0);
}

void stats_section(InfoText& info, const ServerState& server) {
  const ServerStats& stats = server.stats;
  const chronocache::CacheStats engine = engine_totals(server);
  info.section("Stats");
  info.field("total_connections_received", stats.connections_received);
  info.field("total_commands_processed", stats.commands_processed);
  info.field("instantaneous_ops_per_sec", stats.ops_rate.per_second());
  const ServerState::IoTotals net = server.io_totals();
  info.field("total_net_input_bytes", net.input);
  info.field("total_net_output_bytes", net.output);
  info.field("total_net_repl_input_bytes", 0);  // no replication
  info.field("total_net_repl_output_bytes", 0);
  info.fixed("instantaneous_input_kbps", static_cast<double>(stats.input_rate.per_second()) / 1024,
             2);
  info.fixed("instantaneous_output_kbps",
             static_cast<double>(stats.output_rate.per_second()) / 1024, 2);
  info.fixed("instantaneous_input_repl_kbps", 0, 2);
  info.fixed("instantaneous_output_repl_kbps", 0, 2);
  info.field("rejected_connections", stats.rejected_connections);
  // chronocached's own: the state lock the event loops share (docs/design/server.md).
  info.field("state_lock_acquisitions", stats.lock_acquisitions);
  info.field("state_lock_held_usec",
             static_cast<std::uint64_t>(static_cast<double>(stats.lock_held_cycles) /
                                        stats.cycles_per_usec));
  info.field("state_lock_wait_usec",
             static_cast<std::uint64_t>(static_cast<double>(stats.lock_wait_cycles) /
                                        stats.cycles_per_usec));
  info.field("sync_full", 0);
  info.field("sync_partial_ok", 0);
  info.field("sync_partial_err", 0);
  info.field("expired_keys", since_reset(engine.expired, stats.expired_keys_reset));
  info.fixed("expired_stale_perc", 0, 2);
  info.field("expired_time_cap_reached_count", stats.expire_time_cap_reached);
  info.field("expire_cycle_cpu_milliseconds", stats.expire_cycle_ns / 1'000'000);
  info.field("evicted_keys", since_reset(server.memory.evicted(), stats.evicted_keys_reset));
  info.field("evicted_clients", 0);
  const MemoryBudget::ExceededTime exceeded = server.memory.exceeded_time();
  info.field("total_eviction_exceeded_time", exceeded.total_usec / 1000);
  info.field("current_eviction_exceeded_time", exceeded.current_usec / 1000);
  info.field("keyspace_hits", since_reset(engine.hits, stats.keyspace_hits_reset));
  info.field("keyspace_misses", since_reset(engine.misses, stats.keyspace_misses_reset));
  // No pub/sub.
  for (const char* field : {"pubsub_channels", "pubsub_patterns", "pubsubshard_channels"})
    info.field(field, 0);
  info.field("latest_fork_usec", 0);
  info.field("total_forks", 0);
  info.field("migrate_cached_sockets", 0);
  info.field("slave_expires_tracked_keys", 0);
  // Records the compaction moved (store/record_compactor.h); a miss is one on an evacuating page
  // that it left where it was (due soon, or no memory to move it into).
  info.field("active_defrag_hits", server.compactor.moved());
  info.field("active_defrag_misses", server.compactor.spared());
  info.field("active_defrag_key_hits", server.compactor.moved());
  info.field("active_defrag_key_misses", server.compactor.spared());
  const chronocache::TimePoint now = server.clock.now();
  info.field("total_active_defrag_time", server.compactor.total_pass_time(now).count());
  info.field("current_active_defrag_time", server.compactor.current_pass_time(now).count());
  // No client-side caching (CLIENT TRACKING), no AOF or replication stream to error from.
  for (const char* field : {"tracking_total_keys", "tracking_total_items",
                            "tracking_total_prefixes", "unexpected_error_replies"})
    info.field(field, 0);
  info.field("total_error_replies", stats.total_error_replies);
  info.field("total_reads_processed", net.reads);
  info.field("total_writes_processed", net.writes);
  info.field("io_threaded_reads_processed", net.threaded_reads);
  info.field("io_threaded_writes_processed", net.threaded_writes);
}

void replication_section(InfoText& info, const ServerState& server) {
  info.section("Replication");
  info.field("role", "master");
  info.field("connected_slaves", 0);
  info.field("master_failover_state", "no-failover");
  info.field("master_replid", server.process.run_id);
  info.field("master_replid2", "0000000000000000000000000000000000000000");
  info.field("master_repl_offset", 0);
  info.field("second_repl_offset", -1);
  info.field("repl_backlog_active", 0);
  info.field("repl_backlog_size", 1048576);
  info.field("repl_backlog_first_byte_offset", 0);
  info.field("repl_backlog_histlen", 0);
}

void cpu_section(InfoText& info) {
  struct rusage self {};
  struct rusage children {};
  struct rusage thread {};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  getrusage(RUSAGE_THREAD, &thread);
  info.section("CPU");
  info.field("used_cpu_sys", rusage_seconds(self.ru_stime));
  info.field("used_cpu_user", rusage_seconds(self.ru_utime));
  info.field("used_cpu_sys_children", rusage_seconds(children.ru_stime));
  info.field("used_cpu_user_children", rusage_seconds(children.ru_utime));
  info.field("used_cpu_sys_main_thread", rusage_seconds(thread.ru_stime));
  info.field("used_cpu_user_main_thread", rusage_seconds(thread.ru_utime));
}

void commandstats_section(InfoText& info, const ServerState& server) {
  info.section("Commandstats");
  for_each_command_stats(server.stats, [&](std::uint32_t, std::string_view name,
                                           const CommandStats& s) {
    const double usec = static_cast<double>(s.cycles) / server.stats.cycles_per_usec;
    char line[192];
    std::snprintf(line, sizeof(line),
                  "calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu",
                  static_cast<unsigned long long>(s.calls),
                  static_cast<unsigned long long>(command_usec(s, server.stats)),
                  s.calls == 0 ? 0.0 : usec / static_cast<double>(s.calls),
                  static_cast<unsigned long long>(s.rejected_calls),
                  static_cast<unsigned long long>(s.failed_calls));
    std::string key = "cmdstat_";
    key.append(name);
    info.field(key, line);
  });
}

void errorstats_section(InfoText& info, const ServerState& server) {
  info.section("Errorstats");
  for (const auto& [code, count] : server.stats.errors) {
    std::string key = "errorstat_";
    key.append(code);
    std::string value = "count=";
    value.append(std::to_string(count));
    info.field(key, value);
  }
}

// db<N>:keys=..,expires=..,avg_ttl=..: keys and expires in O(1), both counting expired keys
// not yet reclaimed (the sizes of Redis's dict and expires dict); avg_ttl by a walk of small
// databases and from a sample of kKeyspaceSample keys of large ones (a walk of 10 M keys would
// stall every client for tens of milliseconds on each INFO a dashboard sends; Redis estimates
// avg_ttl by sampling too).
constexpr std::size_t kKeyspaceSample = 4096;

void keyspace_section(InfoText& info, CommandContext& ctx) {
  info.section("Keyspace");
  for (std::size_t i = 0; i < ctx.server.keyspace.count(); ++i) {
    Db& db = ctx.server.keyspace.db(i);
    const std::uint64_t keys = db.stored_size();
    if (keys == 0) continue;
    std::uint64_t with_ttl = 0;
    long double ttl_sum_ms = 0;
    const auto count = [&](TimePoint deadline) {
      if (deadline == kNoExpiry) return;
      ++with_ttl;
      ttl_sum_ms += static_cast<long double>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ctx.now).count());
    };
    if (keys <= kKeyspaceSample * 4) {
      db.for_each(ctx.now, [&](std::string_view, const Blob&, TimePoint d) { count(d); });
    } else {
      for (std::size_t n = 0; n < kKeyspaceSample; ++n) {
        const auto key = db.random_key(ctx.server.random(), ctx.now);
        if (!key) break;
        if (const auto deadline = db.deadline(*key, ctx.now)) count(*deadline);
      }
    }
    const auto avg_ttl = with_ttl == 0 ? 0LL : static_cast<long long>(ttl_sum_ms / with_ttl);
    char value[96];
    std::snprintf(value, sizeof(value), "keys=%llu,expires=%llu,avg_ttl=%lld",
                  static_cast<unsigned long long>(keys),
                  static_cast<unsigned long long>(db.volatile_stored_size()), avg_ttl);
    std::string key = "db";
    key.append(std::to_string(i));
    info.field(key, value);
  }
}

enum Section : unsigned {
  kServer = 1u << 0,
  kClients = 1u << 1,
  kMemory = 1u << 2,
  kPersistence = 1u << 3,
  kStats = 1u << 4,
  kReplication = 1u << 5,
  kCpu = 1u << 6,
  kModules = 1u << 7,
  kCommandstats = 1u << 8,
  kErrorstats = 1u << 9,
  kLatencystats = 1u << 10,
  kCluster = 1u << 11,
  kKeyspace = 1u << 12,
  kUpstream = 1u << 13,
};

constexpr unsigned kDefaultSections = kServer | kClients | kMemory | kPersistence | kStats |
                                      kReplication | kCpu | kModules | kErrorstats | kCluster |
                                      kUpstream | kKeyspace;
constexpr unsigned kAllSections = kDefaultSections | kCommandstats | kLatencystats;

// latency_percentiles_usec_<command>:p50=8.031,p99=10.047,... while latency-tracking is on, for
// every command timed since the last CONFIG RESETSTAT (Redis prints nothing while it is off).
void latencystats_section(InfoText& info, const ServerState& server) {
  info.section("Latencystats");
  if (!server.config.latency_tracking) return;
  // A timed command was called, so it is among commandstats' (every histogram is made by a call).
  for_each_command_stats(server.stats, [&](std::uint32_t i, std::string_view name,
                                           const CommandStats&) {
    if (i >= server.stats.latency.size() || server.stats.latency[i] == nullptr) return;
    std::string line;
    for (double p : server.config.latency_tracking_info_percentiles) {
      if (!line.empty()) line += ',';
      char value[48];
      std::snprintf(value, sizeof(value), "%.3f",
                    static_cast<double>(server.stats.latency[i]->value_at_percentile(p)) / 1000.0);
      line.append("p").append(percentile_text(p)).append("=").append(value);
    }
    std::string key = "latency_percentiles_usec_";
    key.append(name);
    info.field(key, line);
  });
}

// --upstream: the near-cache's fetches (FetchQueue's counters). Only with an upstream set.
void upstream_section(InfoText& info, const ServerState& server) {
  const FetchQueue& fetches = server.upstream_fetches;
  info.section("Upstream");
  info.field("upstream_address", server.config.upstream);
  info.field("upstream_fetches", fetches.counters().fetches);
  info.field("upstream_fetch_batches", fetches.counters().batches);
  info.field("upstream_fetch_errors", fetches.counters().errors);
  info.field("upstream_singleflight_joins", fetches.counters().joins);
  info.field("upstream_refused_busy", fetches.counters().refused);
  info.field("upstream_in_flight", fetches.pending());
  info.field("upstream_queued", fetches.queued());
  info.field("upstream_max_ttl_ms", server.config.upstream_max_ttl_ms);
  info.field("upstream_timeout_ms", server.config.upstream_timeout_ms);
  info.field("upstream_prefetch", server.upstream_model ? "yes" : "no");
  info.field("upstream_prefetches", fetches.counters().prefetches);
  info.field("upstream_prefetches_used", server.upstream_prefetches_used);
  info.field("upstream_prefetches_dropped", fetches.counters().prefetches_dropped);
}

unsigned section_bits(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct Named {
    std::string_view name;
    unsigned bits;
  };
  static constexpr Named kNames[] = {
      {"server", kServer},
      {"clients", kClients},
      {"memory", kMemory},
      {"persistence", kPersistence},
      {"stats", kStats},
      {"replication", kReplication},
      {"cpu", kCpu},
      {"modules", kModules},
      {"commandstats", kCommandstats},
      {"errorstats", kErrorstats},
      {"latencystats", kLatencystats},
      {"cluster", kCluster},
      {"keyspace", kKeyspace},
      {"upstream", kUpstream},
      {"default", kDefaultSections},
      {"all", kAllSections},
      {"everything", kAllSections},
  };
  for (const Named& n : kNames)
    if (n.name == lower) return n.bits;
  return 0;  // Redis answers an unknown section with nothing, not an error
}

}  // namespace

void info_command(CommandContext& ctx) {
  unsigned sections = ctx.argc() == 1 ? kDefaultSections : 0;
  for (std::size_t i = 1; i < ctx.argc(); ++i) sections |= section_bits(ctx.args[i]);
  InfoText info;
  if ((sections & kServer) != 0) server_section(info, ctx);
  if ((sections & kClients) != 0) clients_section(info, ctx.server, ctx.unix_ms);
  if ((sections & kMemory) != 0) memory_section(info, ctx.server);
  if ((sections & kPersistence) != 0) persistence_section(info, ctx.server, ctx.unix_ms);
  if ((sections & kStats) != 0) stats_section(info, ctx.server);
  if ((sections & kReplication) != 0) replication_section(info, ctx.server);
  if ((sections & kCpu) != 0) cpu_section(info);
  if ((sections & kModules) != 0) info.section("Modules");
  if ((sections & kCommandstats) != 0) commandstats_section(info, ctx.server);
  if ((sections & kErrorstats) != 0) errorstats_section(info, ctx.server);
  if ((sections & kLatencystats) != 0) latencystats_section(info, ctx.server);
  if ((sections & kCluster) != 0) {
    info.section("Cluster");
    info.field("cluster_enabled", ctx.server.cluster ? 1 : 0);
  }
  if ((sections & kUpstream) != 0 && !ctx.server.config.upstream.empty())
    upstream_section(info, ctx.server);
  if ((sections & kKeyspace) != 0) keyspace_section(info, ctx);
  ctx.reply.verbatim(info.text());
}

void reset_stats(ServerState& server) {
  ServerStats& stats = server.stats;
  const chronocache::CacheStats engine = engine_totals(server);
  stats.connections_received = 0;
  stats.rejected_connections = 0;
  stats.commands_processed = 0;
  for (const auto& loop : server.io) {
    loop->input.store(0, std::memory_order_relaxed);
    loop->output.store(0, std::memory_order_relaxed);
    loop->reads.store(0, std::memory_order_relaxed);
    loop->writes.store(0, std::memory_order_relaxed);
  }
  stats.total_error_replies = 0;
  stats.expire_cycle_ns = 0;
  stats.expire_time_cap_reached = 0;
  stats.lock_acquisitions = 0;
  stats.lock_held_cycles = 0;
  stats.lock_wait_cycles = 0;
  stats.keyspace_hits_reset = engine.hits;
  stats.keyspace_misses_reset = engine.misses;
  stats.expired_keys_reset = engine.expired;
  stats.evicted_keys_reset = server.memory.evicted();
  server.compactor.reset_stats(server.clock.now());
  server.memory.reset_exceeded();
  stats.commands.clear();
  stats.latency.clear();
  stats.errors.clear();
  server.snapshots.reset_saves();
  // The memory peak stays (MemoryBudget::peak): Redis's RESETSTAT keeps it too.
  server.restart_rates();  // after the counters: the rates count from zero
}

}  // namespace chronocached
