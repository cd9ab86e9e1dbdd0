// Drawing of the progress line (see progress_bar.h).
#include "sim/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace chronocache::sim {
namespace {

constexpr int kBarWidth = 30;  // characters between the brackets

}  // namespace

ProgressBar::ProgressBar(std::string label, std::uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

bool ProgressBar::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

std::string ProgressBar::render(std::string_view label, std::uint64_t done, std::uint64_t total,
                                double elapsed_s) {
  const double fraction =
      total == 0 ? 1.0 : std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  const int filled = static_cast<int>(fraction * kBarWidth);
  std::string line(label);
  line.append(" [");
  line.append(static_cast<std::size_t>(filled), '#');
  line.append(static_cast<std::size_t>(kBarWidth - filled), '.');
  char tail[48];
  std::snprintf(tail, sizeof tail, "] %3d%% %.1f s", static_cast<int>(fraction * 100), elapsed_s);
  line.append(tail);
  return line;
}

void ProgressBar::update(std::uint64_t done) {
  if (!enabled_ || finished_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string line = render(label_, done, total_, elapsed);
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  update(total_);
  finished_ = true;
  std::fputc('\n', stderr);
}

}  // namespace chronocache::sim
