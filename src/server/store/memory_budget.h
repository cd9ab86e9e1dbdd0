// MemoryBudget: Redis's maxmemory over chronocached's keyspace: what is counted, and which keys
// go when the count passes the budget.
//
// What is counted (used()):
//   * each database's Cache::memory_used(): its table (slots, control bytes, directory), its
//     eviction policy's nodes and sketches, and every record's heap block as malloc holds it
//     (malloc_usable_size + the 8-byte chunk header: Blob::heap_bytes). In-place edits report
//     their size change (Db::edit), so the sum is exact, not sampled;
//   * clients: each session and its query and output buffers' capacities, as Redis counts a
//     client's struct and buffers; a running sum the sessions keep exact as their buffers grow
//     and shrink (add_client_bytes; atomic: each loop adds outside the state lock, after its
//     writes to the socket);
//   * a baseline: the heap in use when the server started, minus its empty databases (the
//     command tables, config, the loop), fixed for the life of the process.
// Not counted: the allocator's free lists and fragmentation, and allocations after start that
// belong to none of the above (a session's parser and argument vectors, INFO's strings). INFO and
// MEMORY STATS report this figure as used_memory beside the RSS (commands/memory_report.h).
//
// Cost: summing 16 databases' memory_used() took ~620 instructions (callgrind, per SET), as much
// as the rest of a pipelined SET. So the budget keeps each database's last figure and their sum:
// the check before a write re-reads only the database the command works on (O(1)); all of them
// are re-read before any eviction, on every background_step() (the server tick), and for INFO.
// A command that changes another database (MOVE, COPY ... DB, SWAPDB) is seen at the latest by
// the next tick.
//
// Which keys go (Redis's names, plus ours):
//   allkeys-lru/-lfu/-sieve/-s3fifo/-wtinylfu: the engine's policy (exact LRU, LFU with LRU
//     ties, SIEVE, S3-FIFO, W-TinyLFU) names the victim: Cache::evict_one.
//   allkeys-random: a uniformly sampled key (Cache::sample_key).
//   volatile-lru/-lfu: the policy's victim if it has a TTL; a persistent victim is put back (a
//     copy, at the young end of the order) and the next one is tried, at most
//     kMaxPersistentSkips per key evicted, then a sampled volatile key instead (below). Putting
//     back moves persistent keys out of the way, so each is skipped about once per pass over
//     the order.
//   volatile-random/-ttl: maxmemory-samples sampled keys, of which those with a TTL are the
//     candidates (-ttl: the nearest deadline goes); when sampling finds none (few keys have a
//     TTL), a resumable scan walks on until it finds one or has seen the whole table. A database
//     a whole walk found without volatile keys is not walked again until a write gives some key
//     a deadline (Db::deadline_writes), so a full server refuses writes without rescanning.
//   When no candidate is found, nothing is evicted and evict() reports kFail: Redis then refuses
//     commands that may grow memory with -OOM.
// Each eviction tells WATCHing clients (the key changed) and counts evicted_keys; an expired
// victim is only reclaimed (counted by the engine as expired).
//
// Stalls: evict() stops after the time maxmemory-eviction-tenacity allows (Redis's formula: 50 us
// per point up to 10, 500 us by default) and reports kRunning (pending() turns true); the server
// tick calls background_step(), every millisecond while pending(), and reads arriving meanwhile
// continue it too, until the budget is met. So CONFIG SET maxmemory <smaller> shrinks the data
// in slices while other clients are served (1 M keys halved: 182 ms, PING at most 3 ms).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "server/config/maxmemory_policy.h"
#include "server/store/keyspace.h"

namespace chronocached {

// The order the engine keeps for a policy (kNone: sampled, or no eviction at all).
EnginePolicy engine_policy_of(MaxmemoryPolicy policy);

class MemoryBudget {
 public:
  struct Settings {
    std::size_t maxmemory = 0;  // bytes; 0: no limit
    MaxmemoryPolicy policy = MaxmemoryPolicy::kNoEviction;
    std::size_t samples = 5;  // maxmemory-samples
    unsigned tenacity = 10;   // maxmemory-eviction-tenacity, 0..100
  };
  enum class EvictResult : std::uint8_t {
    kOk,       // within the budget (or no budget)
    kRunning,  // still over, the time slice ran out: background_step() continues
    kFail,     // still over, and nothing can be evicted
  };

  explicit MemoryBudget(Keyspace& keyspace) : keyspace_(&keyspace) {}

  // Applies new settings; a policy with another engine order re-registers every key (O(n)).
  void configure(const Settings& settings);
  const Settings& settings() const { return settings_; }

  // ---- Accounting ----------------------------------------------------------------------------
  // Exact: re-reads every database (O(databases)).
  std::size_t used() const { return dataset_bytes() + client_bytes() + baseline_; }
  // The databases' part of used(): tables, policies, records. O(databases).
  std::size_t dataset_bytes() const;
  std::size_t baseline() const { return baseline_; }
  std::size_t client_bytes() const { return client_bytes_.load(std::memory_order_relaxed); }
  // The highest used() read so far: by loop 0's housekeeping tick (hz times a second), an
  // eviction step, INFO or MEMORY. Redis's used_memory_peak, which Redis also raises after
  // every command, so a peak that comes and goes between two readings is missed here. CONFIG
  // RESETSTAT keeps it, as Redis's does.
  std::size_t peak() const { return peak_; }
  // used(), raising peak() to it.
  std::size_t read_used() {
    const std::size_t bytes = used();
    peak_ = std::max(peak_, bytes);
    return bytes;
  }
  // Fixes the baseline: the heap in use now (mallinfo2) less the databases. Called once at start,
  // with the databases empty. Sanitizer builds hide the allocator's count: the baseline is 0.
  void measure_baseline();
  // `delta` may be "negative" (unsigned wrap-around): the sum stays exact.
  void add_client_bytes(std::size_t delta) {
    client_bytes_.fetch_add(delta, std::memory_order_relaxed);
  }
  bool over_budget() const { return settings_.maxmemory != 0 && used() > settings_.maxmemory; }

  // ---- Eviction ------------------------------------------------------------------------------
  // Redis's performEvictions, before a command that works on database `db`: re-reads that
  // database's bytes (O(1)); if the total passes maxmemory, re-reads all and evicts until within
  // it or the time slice ends.
  EvictResult evict(TimePoint now, std::size_t db);
  // For the server tick (and reads while an eviction is under way): re-reads every database
  // and evicts if the total passes maxmemory, within the same time slice. O(databases) when
  // there is nothing to do.
  EvictResult background_step(TimePoint now);
  // True while an eviction is under way: the event loop should not sleep.
  bool pending() const { return pending_; }
  // Keys evicted since start (CONFIG RESETSTAT keeps its own offset).
  std::uint64_t evicted() const { return evicted_; }
  // Redis's total_eviction_exceeded_time and current_eviction_exceeded_time, in microseconds:
  // the time from an eviction call that left memory over the budget (its time slice ran out, or
  // nothing could be evicted) to the first call, or configure(), that found it within. A call
  // that evicts its way back within the budget at once opens no span. The total includes the
  // current span (one clock reading for both).
  struct ExceededTime {
    std::uint64_t total_usec = 0;
    std::uint64_t current_usec = 0;
  };
  ExceededTime exceeded_time() const;
  // CONFIG RESETSTAT: both 0, and a span under way starts again at the next call over budget.
  void reset_exceeded() {
    exceeded_total_usec_ = 0;
    exceeded_since_usec_ = 0;
  }

  // Most persistent victims put back per key evicted under volatile-lru/-lfu.
  static constexpr int kMaxPersistentSkips = 64;
  // Slots the volatile fallback scan examines per step.
  static constexpr std::size_t kScanSlotsPerStep = 128;

 private:
  // Evicts one key (or reclaims one expired entry) somewhere and re-reads that database; false
  // when nothing could go.
  bool evict_one(TimePoint now);
  EvictResult evict_until_within(TimePoint now);
  // Every eviction call's result passes here: it opens or closes the exceeded span.
  EvictResult noted(EvictResult result);
  void refresh(std::size_t db);
  void refresh_all();
  bool over_cached() const {
    return settings_.maxmemory != 0 &&
           cached_dataset_ + client_bytes() + baseline_ > settings_.maxmemory;
  }
  bool evict_by_policy(Db& db, TimePoint now);
  bool evict_volatile_by_policy(Db& db, TimePoint now);
  bool evict_random(Db& db, TimePoint now);
  bool evict_sampled_volatile(Db& db, TimePoint now, bool nearest_deadline);
  void evicted_key(Db& db, std::string_view key);
  std::uint64_t next_random();
  std::uint64_t time_limit_usec() const;

  Keyspace* keyspace_;
  Settings settings_;
  std::size_t baseline_ = 0;
  std::size_t peak_ = 0;
  std::vector<std::size_t> cached_db_bytes_;  // each database's memory_used() when last read
  std::size_t cached_dataset_ = 0;            // their sum
  std::atomic<std::size_t> client_bytes_{0};
  std::uint64_t evicted_ = 0;
  std::uint64_t exceeded_total_usec_ = 0;  // spans that ended
  std::uint64_t exceeded_since_usec_ = 0;  // the open span's start (monotonic); 0: none
  bool pending_ = false;
  std::size_t next_db_ = 0;  // round robin over databases
  // Per database, the volatile fallback scan's progress.
  struct VolatileScan {
    std::uint64_t cursor = 0;
    bool found_in_pass = false;            // a volatile key was met since the cursor last wrapped
    std::uint64_t none_at_writes = ~0ull;  // deadline_writes() when a whole pass found none
  };
  std::vector<VolatileScan> scans_;
  std::uint64_t random_state_ = 0x9e3779b97f4a7c15ULL;
};

}  // namespace chronocached
