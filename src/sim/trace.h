// Trace: a request stream decoded once into memory, then replayed many times.
//
// A request is a lookup of one 64-bit key (the sample traces' README: a miss is followed
// by an insert; there are no separate sets or deletes). Every (policy, size) run reads the same
// Trace, read-only, from several threads at once, which is why decoding happens exactly once and
// nothing here is mutable after reading.
//
// Memory: 8 bytes per request for the key. Traces with a TTL column also keep 4-byte timestamps
// and TTLs (seconds) per request, since expiry is the only thing that needs time; other traces
// keep no time at all. Object sizes are parsed and dropped: cache sizes here count objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chronocache::sim {

struct Trace {
  std::vector<std::uint64_t> keys;
  // Filled only when the trace has TTLs (CSV with a ttl column); then both have keys.size()
  // elements. times_s are the trace's timestamps in seconds, ttls_s 0 for "no expiry".
  std::vector<std::uint32_t> times_s;
  std::vector<std::uint32_t> ttls_s;

  std::size_t requests() const noexcept { return keys.size(); }
  bool has_ttls() const noexcept { return !ttls_s.empty(); }
};

// Distinct keys in the trace (the base of --size-fractions). O(n log n) time, one copy of keys.
std::size_t count_unique_keys(const Trace& trace);

}  // namespace chronocache::sim
