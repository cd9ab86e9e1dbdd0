// Server commands: DBSIZE FLUSHDB FLUSHALL (and, as they land: INFO CONFIG COMMAND TIME SHUTDOWN
// MONITOR LATENCY and the admin no-ops tools send to any Redis).
#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"

namespace chronocached {
namespace {

void dbsize(CommandContext& ctx) {
  ctx.reply.integer(static_cast<long long>(ctx.db().size(ctx.now)));
}

// FLUSHDB / FLUSHALL [ASYNC | SYNC]: both free at once (an engine clear is one pass).
bool flush_mode_ok(CommandContext& ctx) {
  if (ctx.argc() == 1) return true;
  if (ctx.argc() == 2 && (iequals(ctx.args[1], "ASYNC") || iequals(ctx.args[1], "SYNC")))
    return true;
  ctx.reply.error(errors::kSyntax);
  return false;
}

void flushdb(CommandContext& ctx) {
  if (!flush_mode_ok(ctx)) return;
  ctx.db().clear();
  ++ctx.server.dirty;
  ctx.reply.ok();
}

void flushall(CommandContext& ctx) {
  if (!flush_mode_ok(ctx)) return;
  ctx.server.keyspace.clear_all();
  ++ctx.server.dirty;
  ctx.reply.ok();
}

constexpr CommandSpec kCommands[] = {
    {.name = "dbsize", .arity = 1, .flags = kReadOnly | kFast, .handler = dbsize,
     .group = "server", .summary = "Returns the number of keys in the database.",
     .complexity = "O(1)", .acl = "keyspace read fast"},
    {.name = "flushdb", .arity = -1, .flags = kWrite, .handler = flushdb, .group = "server",
     .summary = "Remove all keys from the current database.",
     .complexity = "O(N) where N is the number of keys in the selected database",
     .acl = "keyspace write slow dangerous"},
    {.name = "flushall", .arity = -1, .flags = kWrite, .handler = flushall, .group = "server",
     .summary = "Removes all keys from all databases.",
     .complexity = "O(N) where N is the total number of keys in all databases",
     .acl = "keyspace write slow dangerous"},
};

}  // namespace

std::span<const CommandSpec> admin_commands() { return kCommands; }

}  // namespace chronocached
