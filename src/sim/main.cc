// chronocache-sim: replays a cache trace through the engine's eviction policies and reports the
// hit ratio per policy and cache size (table on stdout, --csv). Wiring only: each step is its own
// file (sim_options, trace_reader, experiment, report). bench/report/plot_sim.py draws the CSV.
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/experiment.h"
#include "sim/progress_bar.h"
#include "sim/report.h"
#include "sim/sim_options.h"
#include "sim/trace_reader.h"

namespace {

using namespace chronocache::sim;

// Below these, a run finishes before a progress bar would be worth reading.
constexpr std::uint64_t kLongReadBytes = 4 << 20;          // compressed bytes of the trace file
constexpr std::uint64_t kLongReplayRequests = 20'000'000;  // requests x runs

bool show_progress(ProgressMode mode, bool long_work) {
  if (mode == ProgressMode::kNever) return false;
  if (mode == ProgressMode::kAlways) return true;
  return long_work && ProgressBar::stderr_is_terminal();
}

int run(const SimOptions& options) {
  if (options.help) {
    std::cout << sim_usage();
    return 0;
  }
  if (options.list_policies) {
    for (const PolicyEntry& entry : all_policies())
      std::cout << entry.name << '\t' << entry.engine_name << '\n';
    return 0;
  }
  const std::vector<const PolicyEntry*> policies = resolve_policies(options);

  std::unique_ptr<ProgressBar> read_bar;
  const TraceFile file = read_trace(
      options.trace_path, options.format, [&](std::uint64_t consumed, std::uint64_t total) {
        if (!read_bar) {
          read_bar = std::make_unique<ProgressBar>(
              "reading  ", total, show_progress(options.progress, total >= kLongReadBytes));
        }
        read_bar->update(consumed);
      });
  read_bar.reset();

  const Trace& trace = file.trace;
  TraceSummary summary{trace_display_name(options), std::string(trace_format_name(file.format)),
                       trace.requests(), count_unique_keys(trace)};
  const std::vector<std::size_t> sizes = resolve_sizes(options, summary.unique_keys);

  const std::uint64_t total = trace.requests() * policies.size() * sizes.size();
  std::vector<RunResult> results;
  {
    ProgressBar bar("replaying", total,
                    show_progress(options.progress, total >= kLongReplayRequests));
    results = run_experiment(trace, policies, sizes, options.threads,
                             [&](std::uint64_t done) { bar.update(done); });
  }

  print_table(std::cout, summary, results);
  if (!options.csv_path.empty()) {
    std::ofstream csv(options.csv_path);
    write_csv(csv, summary, results);
    if (!csv) {
      std::string message = "cannot write ";
      message.append(options.csv_path);
      throw std::runtime_error(message);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  SimOptions options;
  try {
    options = parse_sim_options(args);
  } catch (const std::invalid_argument& error) {
    std::cerr << "chronocache-sim: " << error.what() << "\n\n" << sim_usage();
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::cerr << "chronocache-sim: " << error.what() << '\n';
    return 1;
  }
}
