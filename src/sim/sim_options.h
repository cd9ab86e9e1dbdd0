// SimOptions: chronocache-sim's command line, parsed into a plain struct (the usage text in
// sim_options.cc lists every flag).
//
// Parsing is separate from main() so the tests can check it, and so the rules that turn options
// into a run (cache sizes from fractions of the unique keys, policy names to engine classes) live
// in one place.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/policy_registry.h"
#include "sim/trace_format.h"

namespace chronocache::sim {

enum class ProgressMode { kAuto, kAlways, kNever };

struct SimOptions {
  std::string trace_path;
  std::optional<TraceFormat> format;   // nullopt: from the name or the first bytes
  std::vector<std::string> policies;   // empty: every compiled-in policy
  std::vector<std::size_t> sizes;      // in objects
  std::vector<double> size_fractions;  // of the unique keys
  std::string csv_path;                // empty: no CSV
  std::string name;                    // the trace's name in reports; empty: the file name
  unsigned threads = 0;                // 0: one per hardware thread
  ProgressMode progress = ProgressMode::kAuto;
  bool list_policies = false;
  bool help = false;
};

// The fractions used when neither --sizes nor --size-fractions is given: the README's sizes.
inline constexpr std::array<double, 4> kDefaultSizeFractions = {0.01, 0.05, 0.10, 0.25};

// Throws std::invalid_argument with a message for the user on a bad flag or value.
SimOptions parse_sim_options(std::span<const std::string_view> args);

std::string_view sim_usage();

// The cache sizes of the run, ascending and distinct: --sizes plus each fraction of
// `unique_keys`, rounded half to even as the reference tables were (704.5 -> 704, 1868.8 -> 1869).
std::vector<std::size_t> resolve_sizes(const SimOptions& options, std::size_t unique_keys);

// The policies of the run in registry order; throws std::invalid_argument naming an unknown one.
std::vector<const PolicyEntry*> resolve_policies(const SimOptions& options);

// The trace's name for reports: --name, else the file name without directories.
std::string trace_display_name(const SimOptions& options);

}  // namespace chronocache::sim
