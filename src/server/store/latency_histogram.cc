#include "server/store/latency_histogram.h"

#include <cmath>
#include <cstdint>

namespace chronocached {

std::int64_t LatencyHistogram::value_at_percentile(double percentile) const noexcept {
  const double requested = percentile < 100.0 ? percentile : 100.0;
  auto wanted =
      static_cast<std::uint64_t>(std::llround(requested / 100.0 * static_cast<double>(total())));
  if (wanted == 0) wanted = 1;
  std::uint64_t counted = 0;
  for (std::size_t i = 0; i < kCounts; ++i) {
    counted += counts_[i];
    if (counted >= wanted) {
      const std::int64_t value = value_of(i);
      return percentile == 0.0 ? value : highest_equivalent(value);
    }
  }
  return 0;
}

}  // namespace chronocached
