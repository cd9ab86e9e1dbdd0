// LATENCY, SLOWLOG, FUNCTION and SCRIPT: what monitoring and admin tools send to any Redis.
//
// SLOWLOG is Redis's: commands that ran at least slowlog-log-slower-than microseconds, kept in
// ServerState::slow_log (store/slow_log.h) by execute_now. chronocached records no latency
// events and runs no scripts, so LATENCY, FUNCTION and SCRIPT answer what Redis answers when
// there is nothing of the kind: empty lists, zero counts, OK to a flush. Subcommands that would
// need the machinery (FUNCTION LOAD, SCRIPT LOAD, ...) are not listed, so they get Redis's
// unknown-subcommand error instead of a pretend success.
#pragma once

#include <span>

#include "server/commands/command.h"

namespace chronocached {

std::span<const CommandSpec> latency_subcommands();
std::span<const CommandSpec> slowlog_subcommands();
std::span<const CommandSpec> function_subcommands();
std::span<const CommandSpec> script_subcommands();

}  // namespace chronocached
