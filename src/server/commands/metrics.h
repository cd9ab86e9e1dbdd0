// Prometheus metrics: the server's counters and gauges in the text exposition format 0.0.4, for
// GET /metrics on --metrics-port (server.cc serves it). Rendered from counters the server keeps
// anyway (ServerStats, the engines' CacheStats, MemoryBudget, Snapshots, the latency
// histograms): a scrape walks no key. Names follow Prometheus's conventions: chronocache_ prefix,
// base units (seconds, bytes), _total for counters.
#pragma once

#include <cstdint>
#include <string>

#include "server/server_state.h"

namespace chronocached {

// The exposition, with the state lock held by the caller.
std::string render_metrics(ServerState& server, std::int64_t unix_ms);

}  // namespace chronocached
