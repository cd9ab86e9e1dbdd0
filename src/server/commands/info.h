// INFO: the server's state as Redis 7.0's INFO text, with Redis's section and field names so
// dashboards, exporters and redis-py's info() read it unchanged.
//
//   # Server\r\n
//   redis_version:7.0.15\r\n        one "name:value" line per field
//   ...\r\n
//   \r\n                            a blank line between sections
//   # Clients\r\n
//
// Fields that describe machinery chronocached does not have (forks, AOF, replicas) are reported
// as Redis reports them when that machinery is idle, so parsers find every field they expect.
#pragma once

#include <cstddef>

#include "chronocache/stats.h"
#include "server/commands/command.h"

namespace chronocached {

// INFO [section ...]
void info_command(CommandContext& ctx);

// Hits, misses and expirations summed over every database's engine, since start.
chronocache::CacheStats engine_totals(const ServerState& server);

// CONFIG RESETSTAT: zeroes the counters INFO reports (the engine's counters cannot be reset,
// so their current values become the new zero).
void reset_stats(ServerState& server);

}  // namespace chronocached
