// PrefetchMeter: scores a prefetcher's predictions against the reads that follow them.
//
// After each read the prefetcher names up to kMaxPerRead keys to load. Three definitions:
//   next      a prediction is used if its key is the very next read (capped by the pattern: 70 %
//             on branching when only the likely side is predicted)
//   window    ... if its key is read within the next `window` reads (a prefetched key stays in
//             the cache that long at least, so a slightly late use still saves a miss)
//   top-k hit rate  the share of reads (but the first) that were among the predictions made
//             after the read before them: how many misses prefetching could have saved
// Accuracy is used / issued for the first two. Predictions per read says how often prefetching
// fires at all: on random keys it must stay near zero, since every wrong prefetch is a wasted load.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace chronocache::bench {

struct PrefetchScore {
  std::uint64_t reads = 0;
  std::uint64_t issued = 0;
  std::uint64_t used_next = 0;
  std::uint64_t used_window = 0;
  std::uint64_t reads_predicted = 0;  // reads that were among the previous read's predictions

  static double share(std::uint64_t part, std::uint64_t whole) {
    return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
  }
  double accuracy_next() const { return share(used_next, issued); }
  double accuracy_window() const { return share(used_window, issued); }
  double top_k_hit_rate() const { return share(reads_predicted, reads > 0 ? reads - 1 : 0); }
  double issued_per_read() const { return share(issued, reads); }
};

template <std::size_t kMaxPerRead>
class PrefetchMeter {
 public:
  explicit PrefetchMeter(std::size_t window) : pending_(window < 1 ? 1 : window) {}

  // A read of `key`: settles the predictions it uses. Call before predictions_after(key).
  void read(std::uint64_t key) {
    ++score_.reads;
    const std::size_t w = pending_.size();
    for (std::size_t age = 0; age < w && age < score_.reads - 1; ++age) {
      Pending& p = pending_[(newest_ + w - age) % w];
      for (std::size_t i = 0; i < p.n; ++i) {
        if (p.keys[i] != key) continue;
        if (age == 0 && !p.used[i]) {
          ++score_.used_next;
          ++score_.reads_predicted;
        }
        if (!p.used[i]) ++score_.used_window;
        p.used[i] = true;
      }
    }
  }

  // The predictions made after the read just recorded.
  void predictions_after(std::span<const std::uint64_t> keys) {
    newest_ = (newest_ + 1) % pending_.size();
    Pending& p = pending_[newest_];
    p.n = keys.size() < kMaxPerRead ? keys.size() : kMaxPerRead;
    for (std::size_t i = 0; i < p.n; ++i) {
      p.keys[i] = keys[i];
      p.used[i] = false;
    }
    score_.issued += p.n;
  }

  const PrefetchScore& score() const { return score_; }

 private:
  struct Pending {
    std::array<std::uint64_t, kMaxPerRead> keys{};
    std::array<bool, kMaxPerRead> used{};
    std::size_t n = 0;
  };
  std::vector<Pending> pending_;  // a ring of the last `window` reads' predictions
  std::size_t newest_ = 0;
  PrefetchScore score_;
};

}  // namespace chronocache::bench
