// Reports of an experiment: a hit-ratio table for people (stdout) and a CSV for scripts
// (--csv FILE; bench/hitratio/run_hitratio.py reads it).
//
// Table: one row per cache size, one column per policy, hit % with two decimals (the precision
// of the reference tables in the sample traces' README, so numbers can be compared by eye).
// CSV: one row per run with exact counts, so a reader can recompute any ratio:
//   trace,policy,cache_size,requests,hits,hit_ratio,miss_ratio
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>

#include "sim/experiment.h"

namespace chronocache::sim {

struct TraceSummary {
  std::string name;  // what the CSV's trace column says (the file's name unless --name)
  std::string format;
  std::uint64_t requests = 0;
  std::uint64_t unique_keys = 0;
};

void print_table(std::ostream& out, const TraceSummary& trace, std::span<const RunResult> results);
void write_csv(std::ostream& out, const TraceSummary& trace, std::span<const RunResult> results);

}  // namespace chronocache::sim
