// Transactions: MULTI EXEC DISCARD WATCH UNWATCH.
//
// Queueing is the dispatcher's (command_table.cc execute()): between MULTI and EXEC every
// command without kNoMulti is checked (name, arity, auth), copied into ClientState::queued and
// answered +QUEUED; one that fails those checks sets multi_error. Once the transaction is doomed
// (multi_error, or a WATCHed key written) commands are still answered +QUEUED but no longer
// kept, as in Redis: EXEC's own checks (maxmemory, a failed save, CLIENT PAUSE WRITE) then see
// nothing queued, and CLIENT LIST's multi= stops counting. EXEC runs the queue through
// execute_now() and answers one array with every reply, or:
//
//   EXECABORT   a command failed to queue (multi_error)
//   null array  a WATCHed key changed (WatchRegistry::dirty) or expired since WATCH
//
// Either way the client leaves MULTI and forgets its WATCHes, as in Redis.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/commands/command.h"
#include "server/commands/command_table.h"
#include "server/commands/errors.h"

namespace chronocached {

// Checked for each queued command, so O(1): a queueing error, or a write to a watched key (the
// registry's mark). A watched key that expired is found at EXEC (watched_key_changed), as Redis
// finds it there (isWatchedKeyExpired).
bool transaction_doomed(CommandContext& ctx) {
  return ctx.client.multi_error ||
         (ctx.client.watching && ctx.server.keyspace.watches().dirty(ctx.client.id));
}

namespace {

// A write to a watched key marks the registry; an expiry does not reach it (the engine expires
// silently), so a key that was live at WATCH and is gone now counts as changed too.
bool watched_key_changed(CommandContext& ctx) {
  if (!ctx.client.watching) return false;
  if (ctx.server.keyspace.watches().dirty(ctx.client.id)) return true;
  for (const auto& [db, key] : ctx.client.watched_live_keys)
    if (!ctx.server.keyspace.db(db).exists(key, ctx.now)) return true;
  return false;
}

void multi(CommandContext& ctx) {
  if (ctx.client.in_multi) return ctx.reply.error(errors::kMultiNested);
  ctx.client.in_multi = true;
  ctx.reply.ok();
}

void exec(CommandContext& ctx) {
  if (!ctx.client.in_multi) return ctx.reply.error(errors::kExecWithoutMulti);
  if (ctx.client.multi_error) {
    leave_multi(ctx);
    return ctx.reply.error(errors::kExecAbort);
  }
  if (watched_key_changed(ctx)) {
    leave_multi(ctx);
    return ctx.reply.null_array();
  }
  // The queue stays the client's while it runs, as Redis's does (CLIENT LIST inside it shows
  // flags=x multi=<n>): no queued command changes it (MULTI, EXEC, DISCARD, RESET are kNoMulti).
  std::vector<std::vector<std::string>>& queue = ctx.client.queued;
  ctx.client.in_multi = false;  // the transaction's own writes must not fail it
  ctx.client.multi_error = false;
  unwatch_all(ctx);
  ctx.reply.array(queue.size());
  ctx.client.in_exec = true;
  std::vector<std::string_view> args;
  for (const std::vector<std::string>& command : queue) {
    args.assign(command.begin(), command.end());
    std::string error;
    ResolvedCommand resolved;
    if (!resolve(args, resolved, error)) {  // checked when queued; kept should the table change
      ctx.reply.error(error);
      continue;
    }
    CommandContext step{args, ctx.reply, ctx.client, ctx.server, ctx.now, ctx.unix_ms};
    execute_now(step, resolved);
    // DEBUG ADVANCE-CLOCK inside the transaction moves the clock for the commands after it.
    ctx.now = step.now;
    ctx.unix_ms = step.unix_ms;
  }
  ctx.client.in_exec = false;
  queue.clear();
}

void discard(CommandContext& ctx) {
  if (!ctx.client.in_multi) return ctx.reply.error(errors::kDiscardWithoutMulti);
  leave_multi(ctx);
  ctx.reply.ok();
}

void watch(CommandContext& ctx) {
  if (ctx.client.in_multi) return ctx.reply.error(errors::kWatchInMulti);
  WatchRegistry& watches = ctx.server.keyspace.watches();
  Db& db = ctx.db();
  for (std::size_t i = 1; i < ctx.argc(); ++i) {
    const std::string_view key = ctx.args[i];
    watches.watch(ctx.client.id, ctx.client.db, key);
    if (!db.exists(key, ctx.now)) continue;
    bool known = false;
    for (const auto& [index, live] : ctx.client.watched_live_keys)
      known = known || (index == ctx.client.db && live == key);
    if (!known) ctx.client.watched_live_keys.emplace_back(ctx.client.db, std::string(key));
  }
  ctx.client.watching = true;
  ctx.reply.ok();
}

void unwatch(CommandContext& ctx) {
  unwatch_all(ctx);
  ctx.reply.ok();
}

constexpr std::uint32_t kControl = kNoScript | kLoading | kStale | kAllowBusy;

constexpr CommandSpec kCommands[] = {
    {.name = "multi",
     .arity = 1,
     .flags = kControl | kNoMulti | kFast,
     .handler = multi,
     .group = "transactions",
     .summary = "Mark the start of a transaction block",
     .since = "1.2.0",
     .complexity = "O(1)",
     .acl = "fast transaction"},
    {.name = "exec",
     .arity = 1,
     .flags = kNoScript | kLoading | kStale | kNoMulti | kSkipSlowlog,
     .handler = exec,
     .group = "transactions",
     .summary = "Execute all commands issued after MULTI",
     .since = "1.2.0",
     .complexity = "Depends on commands in the transaction",
     .acl = "slow transaction"},
    {.name = "discard",
     .arity = 1,
     .flags = kControl | kNoMulti | kFast,
     .handler = discard,
     .group = "transactions",
     .summary = "Discard all commands issued after MULTI",
     .since = "2.0.0",
     .complexity = "O(N), when N is the number of queued commands",
     .acl = "fast transaction"},
    {.name = "watch",
     .arity = -2,
     .flags = kControl | kNoMulti | kFast,
     .handler = watch,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .group = "transactions",
     .summary = "Watch the given keys to determine execution of the MULTI/EXEC block",
     .since = "2.2.0",
     .complexity = "O(1) for every key.",
     .acl = "fast transaction",
     .arguments = "key:key...",
     .key_flags = "RO"},
    // Queued inside MULTI like any command (Redis runs it at EXEC, where it changes nothing).
    {.name = "unwatch",
     .arity = 1,
     .flags = kControl | kFast,
     .handler = unwatch,
     .group = "transactions",
     .summary = "Forget about all watched keys",
     .since = "2.2.0",
     .complexity = "O(1)",
     .acl = "fast transaction"},
};

}  // namespace

std::span<const CommandSpec> transaction_commands() { return kCommands; }

}  // namespace chronocached
