// The command table and dispatch: every command passes through execute(), which checks, once,
// what Redis checks for every command (known name, arity, authentication, transaction queueing),
// runs the handler, and counts it for INFO commandstats and MONITOR.
#pragma once

#include <span>
#include <string_view>

#include "server/commands/command.h"

namespace chronocached {

// The command named `name` (any case), or nullptr.
const CommandSpec* find_command(std::string_view name);
// All top-level commands, for COMMAND and COMMAND COUNT.
std::span<const CommandSpec* const> all_commands();

// Runs one command from a client (args[0] is its name).
void execute(CommandContext& ctx);
// Runs a command without the queueing and auth checks: EXEC's queued commands.
void execute_now(CommandContext& ctx, const CommandSpec& spec);
// The spec execute() would run for these args: a subcommand's when the command has them.
// nullptr when unknown; `error` then holds the reply.
const CommandSpec* resolve(std::span<const std::string_view> args, std::string& error);

}  // namespace chronocached
