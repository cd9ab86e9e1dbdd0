// MemoryReport: the server's memory as Redis's getMemoryOverheadData splits it, read in one
// place for INFO's memory section, MEMORY STATS and MEMORY DOCTOR, so the three agree.
//
//   total (used_memory) = overhead { startup │ clients │ every database's table and policy order }
//                       + dataset  { records }
//
// The allocator's own figures: Redis built with libc malloc gets none from it and takes
// used_memory as allocated and the RSS as active and resident, so that its ratios still say how
// far the RSS is above the data; we do the same. glibc's mallinfo2 would give an allocated count,
// but it walks the free lists (~25 ms with 2 M keys freed and allocated, measured by the expiry
// benchmark, which polls INFO) and misses the records' arena and the tables' pages, which are
// mapped apart from the heap. What the arena holds is INFO's arena_* lines.
#pragma once

#include <cstddef>
#include <vector>

#include "server/server_state.h"

namespace chronocached {

struct MemoryReport {
  struct DbTable {
    std::size_t index;
    std::size_t bytes;  // the engine's own: table (slots, control bytes, directory), policy order
  };
  std::size_t total = 0;        // used_memory: what maxmemory compares (store/memory_budget.h)
  std::size_t peak = 0;         // the highest total read so far
  std::size_t startup = 0;      // the baseline fixed at start
  std::size_t clients = 0;      // the sessions and their buffers' capacities
  std::vector<DbTable> tables;  // the databases that hold keys, as Redis lists them
  std::size_t overhead = 0;     // startup + clients + the engines of every database
  std::size_t dataset = 0;      // total - overhead
  std::size_t keys = 0;         // stored, as DBSIZE counts them
  std::size_t rss = 0;

  std::size_t allocator_allocated() const { return total; }
  std::size_t allocator_active() const { return rss; }
  std::size_t allocator_resident() const { return rss; }
  // Redis computes its ratios in float and prints or replies the float.
  float peak_percent() const;
  float dataset_percent() const;  // of the memory above startup
  std::size_t bytes_per_key() const;
  float fragmentation() const;  // RSS over used_memory
  long long fragmentation_bytes() const;
  float allocator_fragmentation() const;  // active over allocated: the same as fragmentation()
  long long allocator_fragmentation_bytes() const;
};

// Reads every figure now (O(databases) and /proc/self/statm), raising the peak to the total.
MemoryReport memory_report(ServerState& server);

// The process's resident set in bytes (/proc/self/statm); 0 if it cannot be read.
std::size_t resident_bytes();

}  // namespace chronocached
