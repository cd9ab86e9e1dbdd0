// LatencyHistogram: a command's latencies in nanoseconds, as Redis 7 keeps them for INFO
// latencystats and LATENCY HISTOGRAM: an HdrHistogram from 1 ns to 1 s with two significant
// digits, so any value it reports is within 1 % of one recorded (Gil Tene's HdrHistogram, the
// layout of its C port, which Redis embeds).
//
//   LatencyHistogram h;
//   h.record(8'000);                         // ns; above 1 s: counted as 1 s, as Redis
//   h.value_at_percentile(99.0);             // 8031: the top of 8000's bucket
//   h.for_each_power_of_two_usec([](std::int64_t usec, std::uint64_t cumulative) { ... });
//
// Layout: values below 256 ns are counted one per bucket; above that, each doubling of the range
// is split into 128 buckets, so a bucket is at most 1/128 of its values wide (< 0.8 %). 23
// doublings cover 1 s: 3072 counters, 24 KiB, allocated for a command when it is first timed.
// Recording is a count leading zeros, two shifts and an increment.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace chronocached {

class LatencyHistogram {
 public:
  static constexpr std::int64_t kLowest = 1;               // ns
  static constexpr std::int64_t kHighest = 1'000'000'000;  // ns: 1 s

  // One increment of one counter, nothing else: the total and the sum are summed when read
  // (make bench-observability: a total and a sum kept here too put tracking's cost above 3 %).
  // Above 1 s: counted as 1 s, as Redis clamps. (0 ns, which no command takes, counts as 0.)
  void record(std::uint64_t ns) noexcept {
    ++counts_[index_of(static_cast<std::int64_t>(std::min<std::uint64_t>(ns, kHighest)))];
  }

  // The values recorded. O(buckets): for readers (INFO, LATENCY HISTOGRAM, a scrape), not for
  // every command.
  std::uint64_t total() const noexcept {
    std::uint64_t total = 0;
    for (std::uint64_t count : counts_) total += count;
    return total;
  }
  // Their sum, each taken at the middle of its bucket: within 0.4 % of the exact sum.
  std::uint64_t sum_ns() const noexcept {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < kCounts; ++i) {
      if (counts_[i] == 0) continue;
      const std::int64_t low = value_of(i);
      sum += counts_[i] * static_cast<std::uint64_t>(low + (highest_equivalent(low) - low) / 2);
    }
    return sum;
  }

  // fn(ns, count) for each bound of `ascending_ns`: the values recorded up to it (those in its
  // bucket included), a Prometheus bucket's count. One pass over the counters.
  template <class Fn>
  void for_each_count_at_or_below(std::span<const std::int64_t> ascending_ns, Fn&& fn) const {
    std::uint64_t count = 0;
    std::size_t next = 0;
    for (std::int64_t ns : ascending_ns) {
      const std::size_t last = index_of(ns < kLowest ? kLowest : (ns > kHighest ? kHighest : ns));
      for (; next <= last; ++next) count += counts_[next];
      fn(ns, count);
    }
  }

  // The smallest recorded value v such that `percentile` % of the values are at or below v, as
  // the top of v's bucket (HdrHistogram's value_at_percentile); 0 when nothing was recorded.
  std::int64_t value_at_percentile(double percentile) const noexcept;

  // fn(usec, cumulative) at 1, 2, 4, 8, ... µs: the values recorded up to that bound (the top
  // of the bucket of 1024 ns, 2048 ns, ...), only where the count grew, until every value is
  // counted: LATENCY HISTOGRAM's histogram_usec.
  template <class Fn>
  void for_each_power_of_two_usec(Fn&& fn) const {
    std::uint64_t cumulative = 0;
    std::uint64_t reported = 0;
    std::size_t next_index = 0;
    const std::uint64_t total = this->total();
    for (std::int64_t level = 1024; reported < total; level *= 2) {
      const std::size_t last = index_of(level > kHighest ? kHighest : level);
      for (; next_index <= last; ++next_index) cumulative += counts_[next_index];
      if (cumulative > reported) {
        fn(highest_equivalent(level) / 1000, cumulative);
        reported = cumulative;
      }
      if (level > kHighest) break;
    }
  }

  // The top of the bucket holding `v` (kLowest <= v <= kHighest).
  static std::int64_t highest_equivalent(std::int64_t v) noexcept {
    const int bucket = bucket_of(v);
    const std::int64_t unit = std::int64_t{1} << bucket;
    return ((v >> bucket) << bucket) + unit - 1;
  }

 private:
  // HdrHistogram's parameters for 2 significant digits: 2 * 10^2 values kept apart, rounded up
  // to a power of two.
  static constexpr int kSubBucketBits = 8;  // 256 sub-buckets
  static constexpr std::int64_t kSubBucketMask = (std::int64_t{1} << kSubBucketBits) - 1;
  static constexpr int kHalfBits = kSubBucketBits - 1;  // 128 new sub-buckets per doubling
  static constexpr int kBuckets = 23;                   // 256 << 22 > 1 s
  static constexpr std::size_t kCounts = (kBuckets + 1) << kHalfBits;

  // The doubling `v` falls in: 0 below 256, then 1, 2, ... (each doubling's unit is 2^bucket).
  static int bucket_of(std::int64_t v) noexcept {
    return 64 - std::countl_zero(static_cast<std::uint64_t>(v | kSubBucketMask)) - kSubBucketBits;
  }
  static std::size_t index_of(std::int64_t v) noexcept {
    const int bucket = bucket_of(v);
    const auto sub = static_cast<std::size_t>(v >> bucket);  // 128..255 (0..255 in bucket 0)
    return (static_cast<std::size_t>(bucket + 1) << kHalfBits) + sub -
           (std::size_t{1} << kHalfBits);
  }
  // The lowest value counted at `index`.
  static std::int64_t value_of(std::size_t index) noexcept {
    std::size_t bucket = (index >> kHalfBits);
    std::size_t sub = (index & ((std::size_t{1} << kHalfBits) - 1)) + (std::size_t{1} << kHalfBits);
    if (bucket == 0) {  // bucket 0's lower half: 0..127
      sub -= std::size_t{1} << kHalfBits;
    } else {
      --bucket;
    }
    return static_cast<std::int64_t>(sub) << bucket;
  }

  std::array<std::uint64_t, kCounts> counts_{};
};

}  // namespace chronocached
