// The stream prefetch_model_bench and prefetch_model_ops replay, so that the two measure the
// same loop: kWorkingSet keys read in chains of four (A -> B -> C -> D, then another chain at
// random), long enough that the model has learned it (rows full, counts decaying) when timing
// starts. Integer keys and strings of two lengths: 11 bytes (inside libstdc++'s 15-byte
// small-string buffer) and 40 bytes (on the heap).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace chronocache::bench {

inline constexpr std::size_t kPrefetchWorkingSet = 4096;  // 256 KiB of rows: L2-resident
inline constexpr std::size_t kPrefetchStreamLength = std::size_t{1} << 16;  // cycled by masking

// Key indices in [0, kPrefetchWorkingSet): chains of 4 consecutive indices, chains in random order.
inline std::vector<std::uint32_t> prefetch_stream(std::uint64_t seed = 42) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> stream;
  stream.reserve(kPrefetchStreamLength + 1);
  while (stream.size() < kPrefetchStreamLength + 1) {
    const auto chain = static_cast<std::uint32_t>(rng() % (kPrefetchWorkingSet / 4));
    for (std::uint32_t i = 0; i < 4 && stream.size() < kPrefetchStreamLength + 1; ++i) {
      stream.push_back(chain * 4 + i);
    }
  }
  return stream;
}

inline std::vector<std::uint64_t> prefetch_int_keys() {
  std::vector<std::uint64_t> keys;
  for (std::size_t i = 0; i < kPrefetchWorkingSet; ++i) keys.push_back(i * 2654435761u + 17);
  return keys;
}

inline std::vector<std::string> prefetch_string_keys(std::size_t length) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < kPrefetchWorkingSet; ++i) {
    std::string key = "user:";
    key += std::to_string(100000 + i);
    key.resize(length, '.');
    keys.push_back(std::move(key));
  }
  return keys;
}

}  // namespace chronocache::bench
