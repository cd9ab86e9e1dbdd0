// The policies chronocache-sim can replay: the one list that maps a command-line name to the
// engine's policy class (see policy_registry.cc for the list itself).
//
// Each entry carries a plain function pointer to replay<Policy> (replay.h) instantiated for its
// class: a run picks its policy once, and the per-request loop inside replay<Policy> is fully
// inlined with no virtual or indirect call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "sim/replay.h"
#include "sim/trace.h"

namespace chronocache::sim {

using ReplayFn = ReplayResult (*)(const Trace& trace, std::size_t cache_size,
                                  std::atomic<std::uint64_t>* progress);

struct PolicyEntry {
  std::string_view name;         // on the command line and in the CSV: "lru", "s3fifo", ...
  std::string_view engine_name;  // the class: "chronocache::Lru"
  ReplayFn replay;
};

// Every policy compiled in, in the order reports print them.
std::span<const PolicyEntry> all_policies();

// nullptr when `name` is not compiled in.
const PolicyEntry* find_policy(std::string_view name);

}  // namespace chronocache::sim
