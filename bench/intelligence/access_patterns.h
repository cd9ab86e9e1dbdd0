// The four synthetic access patterns the prefetch model is tuned on (docs/design/prefetch.md),
// each an endless stream of integer keys over a key space of `keys` keys, seeded:
//
//   sequential  chains A -> B -> C -> D (chain_length consecutive keys), then a chain at random:
//               within a chain the next key is certain, between chains it is not
//   branching   units (A, B, C): A, then B (70 %) or C (30 %), then a unit at random
//   cyclic      cycles (A, B, C): laps times A -> B -> C -> A ..., then a cycle at random; so
//               C -> A holds laps - 1 times out of laps
//   random      every key uniformly at random: nothing to learn, and nothing may be prefetched
//
// A unit at random is drawn uniformly: over a large key space a unit comes back rarely, which is
// what makes learning it the model's job and not the cache's.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

namespace chronocache::bench {

enum class Pattern { kSequential, kBranching, kCyclic, kRandom };

inline constexpr Pattern kAllPatterns[] = {Pattern::kSequential, Pattern::kBranching,
                                           Pattern::kCyclic, Pattern::kRandom};

inline std::string_view pattern_name(Pattern pattern) {
  switch (pattern) {
    case Pattern::kSequential:
      return "sequential";
    case Pattern::kBranching:
      return "branching";
    case Pattern::kCyclic:
      return "cyclic";
    case Pattern::kRandom:
      return "random";
  }
  return "?";
}

struct PatternShape {
  std::uint64_t keys = 100'000;
  std::uint32_t chain_length = 4;  // sequential
  double branch_share = 0.7;       // branching: A -> B; A -> C otherwise
  std::uint32_t laps = 4;          // cyclic: laps around a cycle before the next
};

class AccessPattern {
 public:
  AccessPattern(Pattern pattern, const PatternShape& shape, std::uint64_t seed)
      : pattern_(pattern), shape_(shape), rng_(seed) {}

  std::uint64_t next() {
    switch (pattern_) {
      case Pattern::kSequential:
        return unit_step(shape_.chain_length, [&](std::uint32_t step) { return step; });
      case Pattern::kBranching:
        // Step 0 is A; step 1 is B or C; a unit has two reads.
        return unit_step(
            2,
            [&](std::uint32_t step) -> std::uint32_t {
              if (step == 0) return 0;
              return coin(rng_) < shape_.branch_share ? 1 : 2;
            },
            3);
      case Pattern::kCyclic:
        return unit_step(
            3 * shape_.laps, [&](std::uint32_t step) { return step % 3; }, 3);
      case Pattern::kRandom:
        return rng_() % shape_.keys;
    }
    return 0;
  }

 private:
  // Emits step `step_` of the current unit (a block of `width` keys, by default `steps` wide),
  // the key within the block chosen by `key_of(step)`; after `steps` steps a new unit at random.
  template <class KeyOf>
  std::uint64_t unit_step(std::uint32_t steps, KeyOf key_of, std::uint32_t width = 0) {
    if (width == 0) width = steps;
    if (step_ == 0) unit_ = rng_() % (shape_.keys / width);
    const std::uint64_t key = unit_ * width + key_of(step_);
    step_ = step_ + 1 == steps ? 0 : step_ + 1;
    return key;
  }

  Pattern pattern_;
  PatternShape shape_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> coin{0.0, 1.0};
  std::uint64_t unit_ = 0;
  std::uint32_t step_ = 0;
};

}  // namespace chronocache::bench
