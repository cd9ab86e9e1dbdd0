// Which keys a cache holds, for the policy tests' victim-order checks (policy/*_test.cc).
#pragma once

#include <cstddef>
#include <vector>

namespace chronocache::test_support {

// Those of `keys` the cache holds (contains(), which changes nothing), in the order given.
template <class CacheT>
std::vector<int> held(const CacheT& cache, const std::vector<int>& keys) {
  std::vector<int> out;
  for (int key : keys) {
    if (cache.contains(key)) out.push_back(key);
  }
  return out;
}

// 0, 1, ..., below - 1: the keys a test wrote, when it wrote them all.
inline std::vector<int> keys_below(int below) {
  std::vector<int> keys;
  keys.reserve(static_cast<std::size_t>(below > 0 ? below : 0));
  for (int key = 0; key < below; ++key) keys.push_back(key);
  return keys;
}

}  // namespace chronocache::test_support
