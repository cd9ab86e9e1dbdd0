// Sinks that keep the optimiser honest in every benchmark program (engine_bench, engine_ops), so
// the two measure the same loop code.
#pragma once

#include <optional>

#include <benchmark/benchmark.h>

namespace chronocache::bench {

// Returns `value` after hiding it from the optimiser, so a constant key's hash is not folded at
// compile time. A register-only barrier: unlike DoNotOptimize it neither spills the key to memory
// nor clobbers all of memory.
inline int opaque(int value) {
  asm volatile("" : "+r"(value));
  return value;
}

// Keeps a get's result alive. DoNotOptimize(optional) would force the optional through memory:
// GCC builds a std::optional<int> with two narrow stores (value, flag) and then reloads it as one
// 8-byte word, a failed store-to-load forwarding that costs ~12 cycles per call and would
// dominate the lookups being compared. value_or keeps it in registers, as a caller's
// `if (auto v = cache.get(k))` would.
template <class V>
void consume(const std::optional<V>& value) {
  benchmark::DoNotOptimize(value.value_or(V{}));
}

}  // namespace chronocache::bench
