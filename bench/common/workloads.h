// Workload generators shared by every benchmark scenario: uniform random keys and a Zipf(0.99)
// get/put operation stream.
//
// Why our own generators and not <random>: std::uniform_int_distribution and friends are
// implementation-defined, so the same seed gives different streams under libstdc++ and libc++.
// SplitMix64 plus Lemire's multiply-shift bound are fully specified here, so a seed names one
// workload on every toolchain, and a table's `seed=42` reproduces exactly.
//
// Streams are precomputed into arrays (a power-of-two length, cycled by masking) before a
// benchmark's timed loop, so the timed region measures the cache and not the generator.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace chronocache::bench {

// The one seed every workload uses unless a scenario says otherwise (printed in the table header).
inline constexpr std::uint64_t kDefaultSeed = 42;

// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", OOPSLA'14).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) noexcept : state_(seed) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound), bound > 0 (Lemire's multiply-shift; its bias is below 2^-32 for the
  // bounds used here, far under any measurable effect).
  std::uint64_t next_below(std::uint64_t bound) noexcept {
    __extension__ using U128 = unsigned __int128;  // GCC/Clang builtin
    return static_cast<std::uint64_t>((static_cast<U128>(next()) * bound) >> 64);
  }

  // Uniform in [0, 1) with 53 random bits.
  double next_unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

// `count` keys drawn uniformly from [0, key_space). `count` should be a power of two so the
// caller can cycle with `keys[i & (count - 1)]`.
inline std::vector<int> uniform_keys(std::size_t count, int key_space,
                                     std::uint64_t seed = kDefaultSeed) {
  SplitMix64 rng(seed);
  std::vector<int> keys(count);
  for (int& key : keys) {
    key = static_cast<int>(rng.next_below(static_cast<std::uint64_t>(key_space)));
  }
  return keys;
}

// A random permutation of [0, n) (Fisher-Yates).
inline std::vector<int> shuffled_range(int n, std::uint64_t seed) {
  std::vector<int> values(static_cast<std::size_t>(n));
  std::iota(values.begin(), values.end(), 0);
  SplitMix64 rng(seed);
  for (std::size_t i = values.size(); i > 1; --i) {
    std::swap(values[i - 1], values[rng.next_below(i)]);
  }
  return values;
}

// Zipf-distributed ranks in [0, n): rank r has probability proportional to 1 / (r + 1)^theta.
// The algorithm of Gray et al., "Quickly generating billion-record synthetic databases"
// (SIGMOD'94), as YCSB's ZipfianGenerator uses it: O(n) setup (the zeta sum), O(1) per draw.
// theta must be in (0, 1); YCSB's default and ours is 0.99.
class ZipfGenerator {
 public:
  ZipfGenerator(std::uint64_t n, double theta, std::uint64_t seed) : n_(n), rng_(seed) {
    const double zeta2 = zeta(2, theta);
    zeta_n_ = zeta(n, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / static_cast<double>(n), 1.0 - theta)) / (1.0 - zeta2 / zeta_n_);
    half_pow_theta_ = 1.0 + std::pow(0.5, theta);
  }

  std::uint64_t next() noexcept {
    const double u = rng_.next_unit();
    const double uz = u * zeta_n_;
    if (uz < 1.0) return 0;
    if (uz < half_pow_theta_) return 1;
    const auto rank = static_cast<std::uint64_t>(static_cast<double>(n_) *
                                                 std::pow(eta_ * u - eta_ + 1.0, alpha_));
    return rank < n_ ? rank : n_ - 1;
  }

 private:
  static double zeta(std::uint64_t n, double theta) {
    double sum = 0;
    for (std::uint64_t i = 1; i <= n; ++i) sum += 1.0 / std::pow(static_cast<double>(i), theta);
    return sum;
  }

  std::uint64_t n_;
  SplitMix64 rng_;
  double zeta_n_ = 0;
  double alpha_ = 0;
  double eta_ = 0;
  double half_pow_theta_ = 0;
};

struct CacheOp {
  int key;
  bool is_put;  // else a get
};

struct ZipfStreamSpec {
  std::size_t ops = std::size_t{1} << 20;  // a power of two: cycled by masking
  int key_space = 1'000'000;               // keys are [0, key_space)
  double theta = 0.99;                     // YCSB's default skew
  double put_fraction = 0.10;              // the rest are gets
  std::uint64_t seed = kDefaultSeed;
};

// A get/put stream whose keys follow Zipf(theta) over [0, key_space). Ranks are mapped to keys
// through a fixed random permutation (YCSB's "scrambled" Zipfian), so the hot keys are scattered
// over the key space instead of being 0, 1, 2...: an identity-hashed peer (std::unordered_map)
// would otherwise find its hottest entries in adjacent buckets and gain locality no real key
// set gives it.
inline std::vector<CacheOp> zipf_op_stream(const ZipfStreamSpec& spec) {
  const std::vector<int> rank_to_key = shuffled_range(spec.key_space, spec.seed + 1);
  ZipfGenerator zipf(static_cast<std::uint64_t>(spec.key_space), spec.theta, spec.seed);
  SplitMix64 op_rng(spec.seed + 2);
  std::vector<CacheOp> ops(spec.ops);
  for (CacheOp& op : ops) {
    op.key = rank_to_key[zipf.next()];
    op.is_put = op_rng.next_unit() < spec.put_fraction;
  }
  return ops;
}

}  // namespace chronocache::bench
