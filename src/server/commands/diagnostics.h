// LATENCY, SLOWLOG, FUNCTION and SCRIPT: what monitoring and admin tools send to any Redis.
//
// chronocached records no latency events or slow commands and runs no scripts, so these answer
// what Redis answers when there is nothing of the kind: empty lists, zero counts, OK to a flush.
// Subcommands that would need the machinery (FUNCTION LOAD, SCRIPT LOAD, ...) are not listed, so
// they get Redis's unknown-subcommand error instead of a pretend success.
#pragma once

#include <span>

#include "server/commands/command.h"

namespace chronocached {

std::span<const CommandSpec> latency_subcommands();
std::span<const CommandSpec> slowlog_subcommands();
std::span<const CommandSpec> function_subcommands();
std::span<const CommandSpec> script_subcommands();

}  // namespace chronocached
