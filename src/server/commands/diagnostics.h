// LATENCY, SLOWLOG, FUNCTION and SCRIPT: what monitoring and admin tools send to any Redis.
//
// SLOWLOG and LATENCY are Redis's: execute_now times every command and keeps the slow ones in
// ServerState::slow_log (store/slow_log.h), each command's times in a histogram
// (store/latency_histogram.h: LATENCY HISTOGRAM, INFO latencystats), and the latency monitor's
// samples of commands and background steps (store/latency_monitor.h: LATENCY LATEST, HISTORY,
// RESET, DOCTOR). LATENCY DOCTOR gives the first part of Redis's report, not its advice, and
// LATENCY GRAPH, Redis's ASCII art, is refused with an error that says so. chronocached runs no
// scripts, so FUNCTION and SCRIPT answer what Redis answers when there are none: empty lists,
// zero counts, OK to a flush. Subcommands that would need the machinery (FUNCTION LOAD, SCRIPT
// LOAD, ...) are not listed, so they get Redis's unknown-subcommand error instead of a pretend
// success.
#pragma once

#include <span>

#include "server/commands/command.h"

namespace chronocached {

std::span<const CommandSpec> latency_subcommands();
std::span<const CommandSpec> slowlog_subcommands();
std::span<const CommandSpec> function_subcommands();
std::span<const CommandSpec> script_subcommands();

}  // namespace chronocached
