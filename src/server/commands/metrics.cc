#include "server/commands/metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <string_view>
#include <vector>

#include "server/base/version.h"
#include "server/commands/command_table.h"
#include "server/commands/info.h"
#include "server/commands/memory_report.h"

namespace chronocached {
namespace {

// One metric family: its HELP and TYPE lines, then samples.
class Exposition {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    name_ = name;
    text_.append("# HELP ").append(name).append(" ").append(help).append("\n");
    text_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }
  // A sample of the current family; `suffix` for a histogram's _bucket, _sum, _count; `labels`
  // already rendered (name="value",...), empty for none.
  void sample(double value, std::string_view labels = "", std::string_view suffix = "") {
    text_.append(name_).append(suffix);
    if (!labels.empty()) text_.append("{").append(labels).append("}");
    char number[32];  // the shortest text that reads back as `value`
    const auto [end, ec] = std::to_chars(number, number + sizeof(number), value);
    text_.append(" ").append(number, ec == std::errc() ? end : number).append("\n");
  }
  std::string take() { return std::move(text_); }

 private:
  std::string name_;
  std::string text_;
};

// label="value", with the value escaped as the format asks (\\, \", \n).
std::string label(std::string_view name, std::string_view value) {
  std::string text(name);
  text += "=\"";
  for (char c : value) {
    if (c == '\\' || c == '"') {
      text += '\\';
      text += c;
    } else if (c == '\n') {
      text += "\\n";
    } else {
      text += c;
    }
  }
  text += '"';
  return text;
}

// Command latency buckets: 1 µs to ~1 s by powers of two (the histograms' own range).
constexpr auto kLatencyBoundsNs = [] {
  std::array<std::int64_t, 21> bounds{};
  for (std::size_t k = 0; k < bounds.size(); ++k) bounds[k] = std::int64_t{1000} << k;
  return bounds;
}();

}  // namespace

std::string render_metrics(ServerState& server, std::int64_t unix_ms) {
  Exposition out;
  const ServerStats& stats = server.stats;
  const chronocache::CacheStats engine = engine_totals(server);

  out.family("chronocache_build_info", "gauge", "Always 1; the labels name the build.");
  out.sample(1, label("version", kVersion) + "," + label("redis_version", kRedisVersion));
  out.family("chronocache_uptime_seconds", "gauge", "Seconds since the server started.");
  out.sample(static_cast<double>(unix_ms - server.process.start_ms) / 1000.0);

  out.family("chronocache_connected_clients", "gauge", "Client connections open now.");
  out.sample(static_cast<double>(server.clients.by_id.size()));
  out.family("chronocache_connections_received_total", "counter", "Connections accepted.");
  out.sample(static_cast<double>(stats.connections_received));
  out.family("chronocache_connections_rejected_total", "counter",
             "Connections refused (maxclients).");
  out.sample(static_cast<double>(stats.rejected_connections));
  const ServerState::IoTotals io = server.io_totals();
  out.family("chronocache_net_input_bytes_total", "counter", "Bytes read from clients.");
  out.sample(static_cast<double>(io.input));
  out.family("chronocache_net_output_bytes_total", "counter", "Bytes written to clients.");
  out.sample(static_cast<double>(io.output));

  // Commands, in name order (as INFO commandstats); counters restart at CONFIG RESETSTAT. One
  // pass per family, so the ordinals are kept.
  std::vector<std::uint32_t> called;
  for_each_command_stats(
      stats, [&](std::uint32_t i, std::string_view, const CommandStats&) { called.push_back(i); });
  out.family("chronocache_commands_total", "counter", "Commands run, by command.");
  for (std::uint32_t i : called)
    out.sample(static_cast<double>(stats.commands[i].calls), label("command", command_name(i)));
  out.family("chronocache_command_failures_total", "counter",
             "Commands that ran and answered an error, by command.");
  for (std::uint32_t i : called)
    out.sample(static_cast<double>(stats.commands[i].failed_calls),
               label("command", command_name(i)));
  out.family("chronocache_command_rejections_total", "counter",
             "Commands refused before running (arity, authentication, memory), by command.");
  for (std::uint32_t i : called)
    out.sample(static_cast<double>(stats.commands[i].rejected_calls),
               label("command", command_name(i)));
  out.family("chronocache_error_replies_total", "counter", "Error replies of any kind.");
  out.sample(static_cast<double>(stats.total_error_replies));

  out.family("chronocache_command_duration_seconds", "histogram",
             "Time in each command's handler while latency-tracking is on, by command.");
  for (std::uint32_t i : called) {
    if (i >= stats.latency.size() || stats.latency[i] == nullptr) continue;
    const LatencyHistogram& h = *stats.latency[i];
    const std::string command = label("command", command_name(i));
    h.for_each_count_at_or_below(kLatencyBoundsNs, [&](std::int64_t ns, std::uint64_t count) {
      char le[32];
      std::snprintf(le, sizeof(le), "%g", static_cast<double>(ns) / 1e9);
      out.sample(static_cast<double>(count), command + "," + label("le", le), "_bucket");
    });
    const auto total = static_cast<double>(h.total());
    out.sample(total, command + "," + label("le", "+Inf"), "_bucket");
    out.sample(static_cast<double>(h.sum_ns()) / 1e9, command, "_sum");
    out.sample(total, command, "_count");
  }

  out.family("chronocache_keyspace_hits_total", "counter", "Reads that found a live key.");
  out.sample(static_cast<double>(engine.hits));
  out.family("chronocache_keyspace_misses_total", "counter", "Reads that found no live key.");
  out.sample(static_cast<double>(engine.misses));
  out.family("chronocache_keyspace_hit_ratio", "gauge",
             "Hits over hits and misses since start (for alerts, prefer a rate of the counters).");
  const double reads = static_cast<double>(engine.hits + engine.misses);
  out.sample(reads == 0 ? 0.0 : static_cast<double>(engine.hits) / reads);
  out.family("chronocache_expired_keys_total", "counter",
             "Keys removed because their TTL ran out.");
  out.sample(static_cast<double>(engine.expired));
  out.family("chronocache_evicted_keys_total", "counter",
             "Keys evicted under maxmemory, by the policy in force.");
  out.sample(static_cast<double>(server.memory.evicted()),
             label("policy", server.config.maxmemory_policy));
  out.family("chronocache_keys", "gauge", "Keys stored (live or not yet removed), by database.");
  for (std::size_t db = 0; db < server.keyspace.count(); ++db) {
    const std::size_t keys = server.keyspace.db(db).stored_size();
    if (keys != 0) out.sample(static_cast<double>(keys), label("db", std::to_string(db)));
  }
  out.family("chronocache_expire_cycle_seconds_total", "counter", "Time spent in active expiry.");
  out.sample(static_cast<double>(stats.expire_cycle_ns) / 1e9);

  const MemoryReport memory = memory_report(server);  // INFO memory's figures
  out.family("chronocache_memory_used_bytes", "gauge", "Memory counted against maxmemory.");
  out.sample(static_cast<double>(memory.total));
  out.family("chronocache_memory_dataset_bytes", "gauge",
             "Memory the records take (used less startup, clients, tables and policy orders).");
  out.sample(static_cast<double>(memory.dataset));
  out.family("chronocache_memory_rss_bytes", "gauge", "Resident set of the process.");
  out.sample(static_cast<double>(memory.rss));
  out.family("chronocache_memory_max_bytes", "gauge", "maxmemory (0: no limit).");
  out.sample(static_cast<double>(server.config.maxmemory));

  const Snapshots& snapshots = server.snapshots;
  out.family("chronocache_snapshot_in_progress", "gauge", "1 while a BGSAVE runs.");
  out.sample(snapshots.bgsave_in_progress() ? 1 : 0);
  out.family("chronocache_snapshot_last_status", "gauge",
             "1 if the last BGSAVE succeeded, else 0.");
  out.sample(snapshots.last_bgsave_ok() ? 1 : 0);
  out.family("chronocache_snapshot_last_duration_seconds", "gauge", "The last BGSAVE's duration.");
  out.sample(static_cast<double>(std::max<std::int64_t>(snapshots.last_bgsave_seconds(), 0)));
  out.family("chronocache_snapshot_last_success_timestamp_seconds", "gauge",
             "Unix time of the last successful save.");
  out.sample(static_cast<double>(snapshots.last_save_ms()) / 1000.0);
  out.family("chronocache_snapshots_total", "counter", "Saves completed (SAVE and BGSAVE).");
  out.sample(static_cast<double>(snapshots.saves()));
  out.family("chronocache_changes_since_last_snapshot", "gauge", "Writes since the last save.");
  out.sample(static_cast<double>(server.keyspace.changes()));

  // The eviction policy's own state, where it has one: W-TinyLFU's segments and its adaptive
  // window (allkeys-wtinylfu).
  struct Segment {
    const char* name;
    std::size_t (chronocache::WTinyLfu::*size)() const noexcept;
  };
  static constexpr Segment kSegments[] = {{"window", &chronocache::WTinyLfu::window_size},
                                          {"probation", &chronocache::WTinyLfu::probation_size},
                                          {"protected", &chronocache::WTinyLfu::protected_size}};
  out.family("chronocache_wtinylfu_entries", "gauge",
             "Entries in each W-TinyLFU segment, by database (allkeys-wtinylfu only).");
  for (std::size_t db = 0; db < server.keyspace.count(); ++db) {
    const chronocache::WTinyLfu* policy = server.keyspace.db(db).wtinylfu();
    if (policy == nullptr || policy->size() == 0) continue;
    for (const Segment& segment : kSegments)
      out.sample(static_cast<double>((policy->*segment.size)()),
                 label("db", std::to_string(db)) + "," + label("segment", segment.name));
  }
  out.family("chronocache_wtinylfu_window_share", "gauge",
             "The share of W-TinyLFU's capacity its adaptive window holds, by database.");
  for (std::size_t db = 0; db < server.keyspace.count(); ++db) {
    const chronocache::WTinyLfu* policy = server.keyspace.db(db).wtinylfu();
    if (policy != nullptr && policy->size() != 0)
      out.sample(policy->window_share(), label("db", std::to_string(db)));
  }

  out.family("chronocache_slowlog_length", "gauge", "Entries in SLOWLOG.");
  out.sample(static_cast<double>(server.slow_log.size()));
  return out.take();
}

}  // namespace chronocached
