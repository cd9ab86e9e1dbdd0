// Table and CSV writers (see report.h).
#include "sim/report.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <vector>

namespace chronocache::sim {
namespace {

// Values in first-seen order: results come policy-major, and the table keeps the caller's order.
template <class T, class Get>
std::vector<T> distinct_in_order(std::span<const RunResult> results, Get get) {
  std::vector<T> values;
  for (const RunResult& r : results)
    if (std::find(values.begin(), values.end(), get(r)) == values.end()) values.push_back(get(r));
  return values;
}

std::string format_double(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

void print_table(std::ostream& out, const TraceSummary& trace, std::span<const RunResult> results) {
  const auto policies =
      distinct_in_order<std::string_view>(results, [](const RunResult& r) { return r.policy; });
  const auto sizes =
      distinct_in_order<std::size_t>(results, [](const RunResult& r) { return r.cache_size; });
  const double max_hit = trace.requests == 0
                             ? 0.0
                             : 100.0 * (1.0 - static_cast<double>(trace.unique_keys) /
                                                  static_cast<double>(trace.requests));
  out << "# " << trace.name << ": " << trace.format << ", " << trace.requests << " requests, "
      << trace.unique_keys << " unique keys (max hit " << format_double("%.2f", max_hit) << " %)\n";
  out << "# hit % per cache size (objects) and policy\n";

  constexpr int kColumn = 10;
  char cell[32];
  std::snprintf(cell, sizeof cell, "%12s", "size");
  std::string header = cell;
  for (const std::string_view policy : policies) {
    std::snprintf(cell, sizeof cell, "%*.*s", kColumn, static_cast<int>(policy.size()),
                  policy.data());
    header.append(cell);
  }
  out << header << '\n';
  for (const std::size_t size : sizes) {
    std::snprintf(cell, sizeof cell, "%12zu", size);
    std::string row = cell;
    for (const std::string_view policy : policies) {
      const auto it = std::find_if(results.begin(), results.end(), [&](const RunResult& r) {
        return r.policy == policy && r.cache_size == size;
      });
      std::snprintf(cell, sizeof cell, "%*.2f", kColumn, 100.0 * it->hit_ratio());
      row.append(cell);
    }
    out << row << '\n';
  }
}

void write_csv(std::ostream& out, const TraceSummary& trace, std::span<const RunResult> results) {
  out << "trace,policy,cache_size,requests,hits,hit_ratio,miss_ratio\n";
  for (const RunResult& r : results) {
    out << trace.name << ',' << r.policy << ',' << r.cache_size << ',' << r.replay.requests << ','
        << r.replay.hits << ',' << format_double("%.6f", r.hit_ratio()) << ','
        << format_double("%.6f", r.miss_ratio()) << '\n';
  }
}

}  // namespace chronocache::sim
