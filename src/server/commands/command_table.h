// The command table and dispatch: every command passes through execute(), which checks, once,
// what Redis checks for every command (known name, arity, authentication, transaction queueing),
// runs the handler, and counts it for INFO commandstats and MONITOR.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/command.h"

namespace chronocached {

// A command line matched to what runs it.
struct ResolvedCommand {
  const CommandSpec* spec = nullptr;  // what runs: a subcommand's spec for CONFIG GET
  const CommandSpec* top = nullptr;   // the top-level command (its flags rule auth and MULTI)
  std::uint32_t ordinal = 0;          // index of ServerStats::commands
};

// The command named `name` (any case), or nullptr.
const CommandSpec* find_command(std::string_view name);
// All top-level commands, for COMMAND and COMMAND COUNT.
std::span<const CommandSpec* const> all_commands();

// Runs one command from a client (args[0] is its name).
// Runs (or queues, or refuses) one command. False, with nothing run or answered, when CLIENT
// PAUSE holds it back: the caller keeps the command and calls again after the pause.
bool execute(CommandContext& ctx);
// Counts an error reply in INFO's total_error_replies and errorstats (by its first word): every
// error a client is sent passes here, a protocol error's too, as in Redis.
void count_error_reply(ServerState& server, std::string_view text);
// What execute() would run for these args; false when nothing can, with the reply in `error`.
bool resolve(std::span<const std::string_view> args, ResolvedCommand& out, std::string& error);
// Forgets the client's WATCHes (UNWATCH, EXEC, DISCARD, RESET).
void unwatch_all(CommandContext& ctx);
// Leaves MULTI: the queue, its error flag and the WATCHes go (Redis's discardTransaction).
void leave_multi(CommandContext& ctx);
// EXEC will not run the queue: a command failed to queue, or a WATCHed key was written
// (transaction.cc). A doomed transaction keeps no more commands.
bool transaction_doomed(CommandContext& ctx);
// Runs a resolved command without the queueing and auth checks: EXEC's queued commands.
void execute_now(CommandContext& ctx, const ResolvedCommand& command);

// Calls fn(ordinal, name, stats) for every command called since the last reset, by name ("get",
// "config|get"), in name order: INFO commandstats and latencystats, the metrics. The ordinal
// indexes ServerStats's per-command vectors (the latency histograms).
void for_each_command_stats(
    const ServerStats& stats,
    const std::function<void(std::uint32_t, std::string_view, const CommandStats&)>& fn);
// The stats ordinals LATENCY HISTOGRAM reports for `name` (any case): a command's, a
// subcommand's ("config|get"), or each subcommand's of a container ("config"); none if unknown.
std::vector<std::uint32_t> ordinals_named(std::string_view name);
// "get", "config|get": the name a stats ordinal is reported under.
const std::string& command_name(std::uint32_t ordinal);
// A command's time in microseconds.
std::uint64_t command_usec(const CommandStats& stats, const ServerStats& server_stats);

}  // namespace chronocached
