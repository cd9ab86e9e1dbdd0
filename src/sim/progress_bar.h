// ProgressBar: one redrawn line on stderr for long traces ("replaying [#####.....] 52% 3.1 s").
//
// Only drawn when stderr is a terminal (a log file or a pipe gets no carriage-return noise) and the
// work is long enough to be worth watching; otherwise every call is a no-op. Redraws are rate-
// limited by the caller (experiment.h ticks every 100 ms), not here.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace chronocache::sim {

class ProgressBar {
 public:
  // `enabled` false: nothing is ever printed.
  ProgressBar(std::string label, std::uint64_t total, bool enabled);
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar();

  void update(std::uint64_t done);
  // Draws 100 % and ends the line (also done by the destructor).
  void finish();

  // The bar's text for `done` of `total` (no carriage return): what update() prints, for tests.
  static std::string render(std::string_view label, std::uint64_t done, std::uint64_t total,
                            double elapsed_s);

  // True when stderr is a terminal.
  static bool stderr_is_terminal();

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace chronocache::sim
