#include "server/commands/diagnostics.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "server/commands/arguments.h"
#include "server/commands/command_table.h"
#include "server/commands/errors.h"
#include "server/server_state.h"

namespace chronocached {
namespace {

// ---- LATENCY ---------------------------------------------------------------------------------

// Redis's report, its first part: whether monitoring is on, and for each event its spikes'
// count, average, mean deviation, period and worst. (Redis goes on with advice, tuned to its
// own internals; this report stops before it.)
void latency_doctor(CommandContext& ctx) {
  const LatencyMonitor& monitor = ctx.server.latency_monitor;
  const std::size_t events = monitor.events();
  if (events == 0 && monitor.threshold_ms() == 0) {
    return ctx.reply.verbatim(
        "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "
        "You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable "
        "it. If we weren't in a deep space mission I'd suggest to take a look at "
        "https://redis.io/topics/latency-monitor.\n");
  }
  if (events == 0) {
    return ctx.reply.verbatim(
        "Dave, no latency spike was observed during the lifetime of this Redis instance, not in "
        "the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and "
        "think things over.\n");
  }
  std::string report =
      "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about "
      "it, do you Dave?\n\n";
  std::size_t number = 0;
  monitor.for_each([&](std::string_view event, const LatencyMonitor::Series& series) {
    std::uint64_t count = 0, sum = 0;
    std::int64_t oldest = 0;
    series.for_each_sample([&](const LatencyMonitor::Sample& s) {
      if (count++ == 0 || s.unix_seconds < oldest) oldest = s.unix_seconds;
      sum += s.ms;
    });
    // Redis's period: the seconds from the oldest spike to now (at least 1), per spike.
    const std::int64_t span = std::max<std::int64_t>(1, ctx.unix_ms / 1000 - oldest);
    const std::uint64_t average = sum / count;
    std::uint64_t deviation = 0;
    series.for_each_sample([&](const LatencyMonitor::Sample& s) {
      deviation += s.ms > average ? s.ms - average : average - s.ms;
    });
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%zu. %.*s: %llu latency spikes (average %llums, mean deviation %llums, period "
                  "%.2f sec). Worst all time event %llums.\n",
                  ++number, static_cast<int>(event.size()), event.data(),
                  static_cast<unsigned long long>(count), static_cast<unsigned long long>(average),
                  static_cast<unsigned long long>(deviation / count),
                  static_cast<double>(span) / static_cast<double>(count),
                  static_cast<unsigned long long>(series.max_ms));
    report += line;
  });
  ctx.reply.verbatim(report);
}

// Redis draws the series as ASCII art; chronocached does not, and says so when there is a
// series to draw (LATENCY HISTORY gives its samples).
void latency_graph(CommandContext& ctx) {
  if (ctx.server.latency_monitor.find(ctx.args[2]) == nullptr)
    return ctx.reply.error(errors::no_latency_samples(ctx.args[2]));
  ctx.reply.error(errors::kLatencyGraph);
}

// LATENCY LATEST: per event, the latest sample's time and milliseconds, and the largest ever.
void latency_latest(CommandContext& ctx) {
  ctx.reply.array(ctx.server.latency_monitor.events());
  ctx.server.latency_monitor.for_each([&](std::string_view event, const LatencyMonitor::Series& s) {
    ctx.reply.array(4);
    ctx.reply.bulk(event);
    ctx.reply.integer(s.latest().unix_seconds);
    ctx.reply.integer(static_cast<long long>(s.latest().ms));
    ctx.reply.integer(static_cast<long long>(s.max_ms));
  });
}

// LATENCY HISTORY event: its samples, oldest first, as [time, milliseconds].
void latency_history(CommandContext& ctx) {
  const LatencyMonitor::Series* series = ctx.server.latency_monitor.find(ctx.args[2]);
  if (series == nullptr) return ctx.reply.array(0);
  std::size_t samples = 0;
  series->for_each_sample([&](const LatencyMonitor::Sample&) { ++samples; });
  ctx.reply.array(samples);
  series->for_each_sample([&](const LatencyMonitor::Sample& s) {
    ctx.reply.array(2);
    ctx.reply.integer(s.unix_seconds);
    ctx.reply.integer(static_cast<long long>(s.ms));
  });
}

// LATENCY RESET [event ...]: how many events it forgot.
void latency_reset(CommandContext& ctx) {
  ctx.reply.integer(static_cast<long long>(ctx.server.latency_monitor.reset(ctx.args.subspan(2))));
}

// LATENCY HISTOGRAM [command ...]: for each command timed (all, or those named, a container
// standing for its subcommands), its calls and the cumulative count at 1, 2, 4, ... µs.
void latency_histogram(CommandContext& ctx) {
  const std::vector<std::unique_ptr<LatencyHistogram>>& timings = ctx.server.stats.latency;
  std::vector<std::uint32_t> chosen;
  const auto timed = [&](std::uint32_t i) { return i < timings.size() && timings[i]; };
  if (ctx.argc() == 2) {
    for (std::uint32_t i = 0; i < timings.size(); ++i)
      if (timed(i)) chosen.push_back(i);
  } else {
    for (std::size_t a = 2; a < ctx.argc(); ++a)
      for (std::uint32_t i : ordinals_named(ctx.args[a]))
        if (timed(i)) chosen.push_back(i);
  }
  ctx.reply.map(chosen.size());
  for (std::uint32_t i : chosen) {
    const LatencyHistogram& h = *timings[i];
    ctx.reply.bulk(command_name(i));
    ctx.reply.map(2);
    ctx.reply.bulk("calls");
    ctx.reply.integer(static_cast<long long>(h.total()));
    ctx.reply.bulk("histogram_usec");
    std::size_t points = 0;
    h.for_each_power_of_two_usec([&](std::int64_t, std::uint64_t) { ++points; });
    ctx.reply.map(points);
    h.for_each_power_of_two_usec([&](std::int64_t usec, std::uint64_t cumulative) {
      ctx.reply.integer(usec);
      ctx.reply.integer(static_cast<long long>(cumulative));
    });
  }
}

void latency_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      // One help line split at 100 columns.
      // NOLINTNEXTLINE(bugprone-suspicious-missing-comma)
      "    Return a cumulative distribution of latencies in the format of a histogram for the "
      "specified command names.",
      "    If no commands are specified then all histograms are replied.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

constexpr std::uint32_t kLatencyFlags = kAdmin | kNoScript | kLoading | kStale;

constexpr CommandSpec kLatency[] = {
    {.name = "doctor",
     .arity = 2,
     .flags = kLatencyFlags,
     .handler = latency_doctor,
     .summary = "Return a human readable latency analysis report.",
     .since = "2.8.13",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {.name = "graph",
     .arity = 3,
     .flags = kLatencyFlags,
     .handler = latency_graph,
     .summary = "Return a latency graph for the event.",
     .since = "2.8.13",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "event:string",
     .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = latency_help,
     .summary = "Show helpful text about the different subcommands.",
     .since = "2.8.13",
     .complexity = "O(1)",
     .acl = "slow"},
    {.name = "histogram",
     .arity = -2,
     .flags = kLatencyFlags,
     .handler = latency_histogram,
     .summary = "Return the cumulative distribution of latencies of a subset of commands or all.",
     .since = "7.0.0",
     .complexity = "O(N) where N is the number of commands with latency information being "
                   "retrieved.",
     .acl = "admin slow dangerous",
     .arguments = "?command:string...",
     .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {.name = "history",
     .arity = 3,
     .flags = kLatencyFlags,
     .handler = latency_history,
     .summary = "Return timestamp-latency samples for the event.",
     .since = "2.8.13",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "event:string",
     .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {.name = "latest",
     .arity = 2,
     .flags = kLatencyFlags,
     .handler = latency_latest,
     .summary = "Return the latest latency samples for all events.",
     .since = "2.8.13",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .tips = "nondeterministic_output request_policy:all_nodes response_policy:special"},
    {.name = "reset",
     .arity = -2,
     .flags = kLatencyFlags,
     .handler = latency_reset,
     .summary = "Reset latency data for one or more events.",
     .since = "2.8.13",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "?event:string...",
     .tips = "request_policy:all_nodes response_policy:all_succeeded"},
};

// ---- SLOWLOG ---------------------------------------------------------------------------------

// SLOWLOG GET [count]: the newest `count` entries (10 by default, -1 all), each as Redis gives
// it: id, unix time, microseconds, the arguments, the client's address and name.
void slowlog_get(CommandContext& ctx) {
  if (ctx.argc() > 3) return ctx.reply.error(errors::subcommand_syntax(ctx.args[1], "SLOWLOG"));
  const SlowLog& log = ctx.server.slow_log;
  std::size_t count = 10;
  if (ctx.argc() == 3) {
    const auto asked = parse_int64(ctx.args[2]);
    if (!asked || *asked < -1) return ctx.reply.error(errors::kSlowlogCount);
    count = *asked == -1 ? log.size() : static_cast<std::size_t>(*asked);
  }
  ctx.reply.array(std::min(count, log.size()));
  log.for_each_newest(count, [&](const SlowLog::Entry& entry) {
    ctx.reply.array(6);
    ctx.reply.integer(static_cast<long long>(entry.id));
    ctx.reply.integer(entry.unix_seconds);
    ctx.reply.integer(static_cast<long long>(entry.usec));
    ctx.reply.array(entry.args.size());
    for (const std::string& arg : entry.args) ctx.reply.bulk(arg);
    ctx.reply.bulk(entry.peer);
    ctx.reply.bulk(entry.client_name);
  });
}

void slowlog_len(CommandContext& ctx) {
  ctx.reply.integer(static_cast<long long>(ctx.server.slow_log.size()));
}

void slowlog_reset(CommandContext& ctx) {
  ctx.server.slow_log.reset();
  ctx.reply.ok();
}

void slowlog_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

constexpr std::uint32_t kSlowlogFlags = kAdmin | kLoading | kStale;

constexpr CommandSpec kSlowlog[] = {
    {.name = "get",
     .arity = -2,
     .flags = kSlowlogFlags,
     .handler = slowlog_get,
     .summary = "Get the slow log's entries",
     .since = "2.2.12",
     .complexity = "O(N) where N is the number of entries returned",
     .acl = "admin slow dangerous",
     .arguments = "?count:integer",
     .tips = "request_policy:all_nodes nondeterministic_output"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = slowlog_help,
     .summary = "Show helpful text about the different subcommands",
     .since = "6.2.0",
     .complexity = "O(1)",
     .acl = "slow"},
    {.name = "len",
     .arity = 2,
     .flags = kSlowlogFlags,
     .handler = slowlog_len,
     .summary = "Get the slow log's length",
     .since = "2.2.12",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .tips = "request_policy:all_nodes response_policy:agg_sum nondeterministic_output"},
    {.name = "reset",
     .arity = 2,
     .flags = kSlowlogFlags,
     .handler = slowlog_reset,
     .summary = "Clear all entries from the slow log",
     .since = "2.2.12",
     .complexity = "O(N) where N is the number of entries in the slowlog",
     .acl = "admin slow dangerous",
     .tips = "request_policy:all_nodes response_policy:all_succeeded"},
};

// ---- FUNCTION --------------------------------------------------------------------------------

void function_flush(CommandContext& ctx) {
  if (ctx.argc() > 3) return ctx.reply.error(errors::subcommand_syntax(ctx.args[1], "FUNCTION"));
  if (ctx.argc() == 3 && !option_is(ctx.args[2], "SYNC") && !option_is(ctx.args[2], "ASYNC"))
    return ctx.reply.error(errors::kFunctionFlushMode);
  ctx.reply.ok();
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: there are no libraries to list.
void function_list(CommandContext& ctx) {
  bool with_code = false;
  bool has_pattern = false;
  for (std::size_t i = 2; i < ctx.argc(); ++i) {
    if (!with_code && option_is(ctx.args[i], "WITHCODE")) {
      with_code = true;
    } else if (!has_pattern && option_is(ctx.args[i], "LIBRARYNAME")) {
      if (i + 1 >= ctx.argc()) return ctx.reply.error(errors::kLibraryNameMissing);
      has_pattern = true;
      ++i;
    } else {
      return ctx.reply.error(errors::unknown_argument(ctx.args[i]));
    }
  }
  ctx.reply.array(0);
}

void function_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      // One help line split at 100 columns.
      // NOLINTNEXTLINE(bugprone-suspicious-missing-comma)
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored "
      "using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

constexpr CommandSpec kFunction[] = {
    {.name = "flush",
     .arity = -2,
     .flags = kWrite | kNoScript,
     .handler = function_flush,
     .summary = "Deleting all functions",
     .since = "7.0.0",
     .complexity = "O(N) where N is the number of functions deleted",
     .acl = "write slow scripting",
     .arguments = "?flush-type(ASYNC|SYNC)",
     .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = function_help,
     .summary = "Show helpful text about the different subcommands",
     .since = "7.0.0",
     .complexity = "O(1)",
     .acl = "slow scripting"},
    {.name = "list",
     .arity = -2,
     .flags = kNoScript,
     .handler = function_list,
     .summary = "List information about all the functions",
     .since = "7.0.0",
     .complexity = "O(N) where N is the number of functions",
     .acl = "slow scripting",
     .arguments = "?LIBRARYNAME=library-name-pattern:string ?WITHCODE",
     .tips = "nondeterministic_output_order"},
};

// ---- SCRIPT ----------------------------------------------------------------------------------

void script_flush(CommandContext& ctx) {
  if (ctx.argc() > 3 ||
      (ctx.argc() == 3 && !option_is(ctx.args[2], "SYNC") && !option_is(ctx.args[2], "ASYNC")))
    return ctx.reply.error(errors::kScriptFlushMode);
  ctx.reply.ok();
}

// SCRIPT EXISTS sha1 [sha1 ...]: the script cache is always empty.
void script_exists(CommandContext& ctx) {
  ctx.reply.array(ctx.argc() - 2);
  for (std::size_t i = 2; i < ctx.argc(); ++i) ctx.reply.integer(0);
}

void script_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DEBUG (YES|SYNC|NO)",
      "    Set the debug mode for subsequent scripts executed.",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

constexpr CommandSpec kScript[] = {
    {.name = "exists",
     .arity = -3,
     .flags = kNoScript,
     .handler = script_exists,
     .summary = "Check existence of scripts in the script cache.",
     .since = "2.6.0",
     .complexity = "O(N) with N being the number of scripts to check (so checking a single "
                   "script is an O(1) operation).",
     .acl = "slow scripting",
     .arguments = "sha1:string...",
     .tips = "request_policy:all_shards response_policy:agg_logical_and"},
    {.name = "flush",
     .arity = -2,
     .flags = kNoScript,
     .handler = script_flush,
     .summary = "Remove all the scripts from the script cache.",
     .since = "2.6.0",
     .complexity = "O(N) with N being the number of scripts in cache",
     .acl = "slow scripting",
     .arguments = "?flush-type(ASYNC|SYNC)",
     .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = script_help,
     .summary = "Show helpful text about the different subcommands",
     .since = "5.0.0",
     .complexity = "O(1)",
     .acl = "slow scripting"},
};

}  // namespace

std::span<const CommandSpec> latency_subcommands() { return kLatency; }
std::span<const CommandSpec> slowlog_subcommands() { return kSlowlog; }
std::span<const CommandSpec> function_subcommands() { return kFunction; }
std::span<const CommandSpec> script_subcommands() { return kScript; }

}  // namespace chronocached
