// Server commands: DBSIZE FLUSHDB FLUSHALL INFO CONFIG COMMAND TIME SHUTDOWN MONITOR LASTSAVE
// SAVE BGSAVE, and the diagnostics tools send to any Redis (LATENCY SLOWLOG FUNCTION SCRIPT).
// INFO, CONFIG, COMMAND and the diagnostics live in their own files; this one holds the table.
#include <cctype>
#include <chrono>
#include <string>

#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/command_docs.h"
#include "server/commands/config_command.h"
#include "server/commands/diagnostics.h"
#include "server/commands/errors.h"
#include "server/commands/info.h"
#include "server/persist/snapshots.h"

namespace chronocached {
namespace {

void dbsize(CommandContext& ctx) {
  // O(1) and, like Redis's, counting expired keys that expiry has not reclaimed yet.
  ctx.reply.integer(static_cast<long long>(ctx.db().stored_size()));
}

// FLUSHDB / FLUSHALL [ASYNC | SYNC]: both free at once (an engine clear is one pass).
bool flush_mode_ok(CommandContext& ctx) {
  if (ctx.argc() == 1) return true;
  if (ctx.argc() == 2 && (option_is(ctx.args[1], "ASYNC") || option_is(ctx.args[1], "SYNC")))
    return true;
  ctx.reply.error(errors::kSyntax);
  return false;
}

// Each removed key is a change, as Redis counts them (rdb_changes_since_last_save).
void flushdb(CommandContext& ctx) {
  if (!flush_mode_ok(ctx)) return;
  ctx.db().clear(ctx.now);
  ctx.reply.ok();
}

// With save rules set, FLUSHALL saves the emptied dataset at once, as Redis does, so that a
// restart does not bring the flushed keys back. A BGSAVE still running is abandoned first: it
// holds the keys of its earlier instant and would overwrite this save when it finished. (Without
// save rules a BGSAVE completes with its instant intact: see docs/design/server.md.)
void flushall(CommandContext& ctx) {
  if (!flush_mode_ok(ctx)) return;
  ServerState& server = ctx.server;
  const bool save_now = server.snapshots.has_save_points();
  if (save_now) server.snapshots.abandon_bgsave();
  server.keyspace.clear_all(ctx.now);
  if (save_now) server.snapshots.save(ctx.now, ctx.unix_ms);  // a failure is logged
  ctx.reply.ok();
}

// TIME: wall-clock seconds and microseconds, moved with the server's clock by DEBUG
// ADVANCE-CLOCK so that it agrees with EXPIREAT and TTL in tests.
void time_command(CommandContext& ctx) {
  using std::chrono::microseconds;
  const long long micros =
      std::chrono::duration_cast<microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count() +
      static_cast<long long>(ctx.server.debug.clock_offset_ms) * 1000;
  ctx.reply.array(2);
  ctx.reply.bulk(std::to_string(micros / 1'000'000));
  ctx.reply.bulk(std::to_string(micros % 1'000'000));
}

// SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]. SAVE saves first, NOSAVE does not, neither
// saves when save rules are configured (Redis); a running BGSAVE is abandoned. If the save fails
// the server keeps running and says so (FORCE exits anyway, as Redis). Redis sends no reply on
// success: the client sees the connection close. No shutdown is ever pending (no replicas to
// wait for), so NOW changes nothing and ABORT finds nothing to abort.
void shutdown(CommandContext& ctx) {
  bool save = false, nosave = false, now = false, force = false, abort = false;
  for (std::size_t i = 1; i < ctx.argc(); ++i) {
    const std::string_view opt = ctx.args[i];
    if (option_is(opt, "NOSAVE")) {
      nosave = true;
    } else if (option_is(opt, "SAVE")) {
      save = true;
    } else if (option_is(opt, "NOW")) {
      now = true;
    } else if (option_is(opt, "FORCE")) {
      force = true;
    } else if (option_is(opt, "ABORT")) {
      abort = true;
    } else {
      return ctx.reply.error(errors::kSyntax);
    }
  }
  if ((abort && (save || nosave || now || force)) || (save && nosave))
    return ctx.reply.error(errors::kSyntax);
  if (abort) return ctx.reply.error(errors::kNoShutdownInProgress);
  ServerState& server = ctx.server;
  server.logger.log("warning", "User requested shutdown...");
  const bool save_first = save || (!nosave && server.snapshots.has_save_points());
  if (!server.snapshots.prepare_shutdown(save_first, force, ctx.now, ctx.unix_ms))
    return ctx.reply.error(errors::kShutdownFailed);
  server.shutdown_requested = true;
}

// MONITOR: from now on this client receives every command the server runs (command_table.cc
// writes the lines). A second MONITOR is ignored without a reply, as in Redis.
void monitor(CommandContext& ctx) {
  if (ctx.client.in_exec) return ctx.reply.error(errors::kMonitorDenyBlocking);
  if (ctx.client.monitor) return;
  ctx.client.monitor = true;
  ctx.server.clients.monitors.push_back(&ctx.client);
  ctx.reply.ok();
}

void lastsave(CommandContext& ctx) {
  ctx.reply.integer(static_cast<long long>(ctx.server.snapshots.last_save_ms() / 1000));
}

// SAVE: blocking, as Redis's; refused while a BGSAVE runs (two writers, one file).
void save(CommandContext& ctx) {
  if (ctx.server.snapshots.bgsave_in_progress()) return ctx.reply.error(errors::kBgsaveRunning);
  if (!ctx.server.snapshots.save(ctx.now, ctx.unix_ms)) return ctx.reply.error(errors::kSaveFailed);
  ctx.reply.ok();
}

// BGSAVE [SCHEDULE]: the capture starts now and the event loop carries it on (snapshots.h).
// As Redis 7.0's: refused while one runs, SCHEDULE or not (SCHEDULE waits only for an AOF
// rewrite, which this server has not); inside EXEC it is scheduled, and the tick starts it once
// the transaction is over.
void bgsave(CommandContext& ctx) {
  const bool schedule = ctx.argc() == 2 && option_is(ctx.args[1], "SCHEDULE");
  if (ctx.argc() > 2 || (ctx.argc() == 2 && !schedule)) return ctx.reply.error(errors::kSyntax);
  Snapshots& snapshots = ctx.server.snapshots;
  if (snapshots.bgsave_in_progress()) return ctx.reply.error(errors::kBgsaveRunning);
  if (ctx.client.in_exec) {
    snapshots.schedule_bgsave();
    return ctx.reply.simple("Background saving scheduled");
  }
  switch (snapshots.start_bgsave(ctx.now, ctx.unix_ms)) {
    case Snapshots::Start::kStarted:
      return ctx.reply.simple("Background saving started");
    case Snapshots::Start::kAlreadyRunning:
      return ctx.reply.error(errors::kBgsaveRunning);
    case Snapshots::Start::kFailed:
      return ctx.reply.error(errors::kSaveFailed);
  }
}

// A container's own handler never runs (the dispatcher resolves its subcommands, and arity -2
// guarantees one); it answers like an unknown subcommand should that change.
void container(CommandContext& ctx) {
  std::string name(ctx.args[0]);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ctx.reply.error(errors::unknown_subcommand(ctx.argc() > 1 ? ctx.args[1] : "", name));
}

// Not constexpr: the containers' subcommand tables live in other files.
const CommandSpec kCommands[] = {
    {.name = "dbsize",
     .arity = 1,
     .flags = kReadOnly | kFast,
     .handler = dbsize,
     .group = "server",
     .summary = "Return the number of keys in the selected database",
     .complexity = "O(1)",
     .acl = "keyspace read fast",
     .tips = "request_policy:all_shards response_policy:agg_sum"},
    {.name = "flushdb",
     .arity = -1,
     .flags = kWrite,
     .handler = flushdb,
     .group = "server",
     .summary = "Remove all keys from the current database",
     .complexity = "O(N) where N is the number of keys in the selected database",
     .acl = "keyspace write slow dangerous",
     .arguments = "?flush-type(ASYNC|SYNC)",
     .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {.name = "flushall",
     .arity = -1,
     .flags = kWrite,
     .handler = flushall,
     .group = "server",
     .summary = "Remove all keys from all databases",
     .complexity = "O(N) where N is the total number of keys in all databases",
     .acl = "keyspace write slow dangerous",
     .arguments = "?flush-type(ASYNC|SYNC)",
     .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {.name = "info",
     .arity = -1,
     .flags = kLoading | kStale,
     .handler = info_command,
     .group = "server",
     .summary = "Get information and statistics about the server",
     .complexity = "O(1)",
     .acl = "slow dangerous",
     .arguments = "?section:string...",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {.name = "config",
     .arity = -2,
     .flags = 0,
     .handler = container,
     .group = "server",
     .summary = "A container for server configuration commands",
     .since = "2.0.0",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = config_subcommands()},
    {.name = "command",
     .arity = -1,
     .flags = kLoading | kStale,
     .handler = command_all,
     .group = "server",
     .summary = "Get array of Redis command details",
     .since = "2.8.13",
     .complexity = "O(N) where N is the total number of Redis commands",
     .acl = "slow connection",
     .subcommands = command_subcommands(),
     .tips = "nondeterministic_output_order"},
    {.name = "time",
     .arity = 1,
     .flags = kLoading | kStale | kFast,
     .handler = time_command,
     .group = "server",
     .summary = "Return the current server time",
     .since = "2.6.0",
     .complexity = "O(1)",
     .acl = "fast",
     .tips = "nondeterministic_output"},
    {.name = "shutdown",
     .arity = -1,
     .flags = kAdmin | kNoScript | kLoading | kStale | kRefusedInMulti | kAllowBusy,
     .handler = shutdown,
     .group = "server",
     .summary = "Synchronously save the dataset to disk and then shut down the server",
     .complexity = "O(N) when saving, where N is the total number of keys in all databases when "
                   "saving data, otherwise O(1)",
     .acl = "admin slow dangerous",
     .arguments = "?nosave-save(NOSAVE|SAVE) ?NOW ?FORCE ?ABORT"},
    {.name = "monitor",
     .arity = 1,
     .flags = kAdmin | kNoScript | kLoading | kStale,
     .handler = monitor,
     .group = "server",
     .summary = "Listen for all requests received by the server in real time",
     .acl = "admin slow dangerous"},
    {.name = "lastsave",
     .arity = 1,
     .flags = kLoading | kStale | kFast,
     .handler = lastsave,
     .group = "server",
     .summary = "Get the UNIX time stamp of the last successful save to disk",
     .complexity = "O(1)",
     .acl = "admin fast dangerous",
     .tips = "nondeterministic_output"},
    {.name = "save",
     .arity = 1,
     .flags = kAdmin | kNoScript | kNoAsyncLoading | kRefusedInMulti,
     .handler = save,
     .group = "server",
     .summary = "Synchronously save the dataset to disk",
     .complexity = "O(N) where N is the total number of keys in all databases",
     .acl = "admin slow dangerous"},
    {.name = "bgsave",
     .arity = -1,
     .flags = kAdmin | kNoScript | kNoAsyncLoading,
     .handler = bgsave,
     .group = "server",
     .summary = "Asynchronously save the dataset to disk",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "?SCHEDULE"},
    {.name = "latency",
     .arity = -2,
     .flags = 0,
     .handler = container,
     .group = "server",
     .summary = "A container for latency diagnostics commands",
     .since = "2.8.13",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = latency_subcommands()},
    {.name = "slowlog",
     .arity = -2,
     .flags = 0,
     .handler = container,
     .group = "server",
     .summary = "A container for slow log commands",
     .since = "2.2.12",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = slowlog_subcommands()},
    {.name = "function",
     .arity = -2,
     .flags = 0,
     .handler = container,
     .group = "scripting",
     .summary = "A container for function commands",
     .since = "7.0.0",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = function_subcommands()},
    {.name = "script",
     .arity = -2,
     .flags = 0,
     .handler = container,
     .group = "scripting",
     .summary = "A container for Lua scripts management commands",
     .since = "2.6.0",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = script_subcommands()},
};

}  // namespace

std::span<const CommandSpec> admin_commands() { return kCommands; }

}  // namespace chronocached
