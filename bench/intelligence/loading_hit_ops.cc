// loading_hit_ops: `ops` LoadingCache::get hits over 1 024 resident integer keys, read in order
// round and round, for counting instructions with callgrind (only run_ops() is collected, so
// filling the cache is not counted). It pins what a hit costs with every feature off, prefetch
// included (docs/design/loading.md, "Cost of a hit"). With a depth, prefetch is on at that
// read-ahead depth and the loop is a sequence the model has learned (two passes before run_ops):
// every hit records, predicts, and checks that the keys read ahead are there.
//
//   loading_hit_ops <ops> [prefetch depth]
//   valgrind --tool=callgrind --toggle-collect='*run_ops*' --callgrind-out-file=/dev/null
//       build/release/bench/intelligence/loading_hit_ops 1000000          (I refs / ops)
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "chronocache/loading/load_result.h"
#include "chronocache/loading/loading_cache.h"
#include "chronocache/loading/loading_options.h"

namespace chronocache::bench {
namespace {

constexpr std::uint64_t kKeys = 1024;  // resident: every get is a hit

using Cache = LoadingCache<std::uint64_t, std::uint64_t>;

[[gnu::noinline]] std::uint64_t run_ops(Cache& cache, long ops) {
  std::uint64_t sink = 0;
  for (long i = 0; i < ops; ++i) {
    const LoadResult<std::uint64_t> result = cache.get(static_cast<std::uint64_t>(i) & (kKeys - 1));
    sink += result.has_value() ? result.value() : 0;
  }
  return sink;
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) {
  using namespace chronocache;
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s <ops> [prefetch depth]\n", argv[0]);
    return 2;
  }
  LoadingOptions options;
  if (argc == 3) {
    options.prefetch.enabled = true;
    options.prefetch.depth = static_cast<std::size_t>(std::strtoul(argv[2], nullptr, 10));
  }
  bench::Cache cache(options,
                     [](const std::uint64_t& key) { return LoadResult<std::uint64_t>(key); });
  const int passes = options.prefetch.enabled ? 3 : 1;  // min_count 2: a second pass teaches
  for (int pass = 0; pass < passes; ++pass)
    for (std::uint64_t key = 0; key < bench::kKeys; ++key) (void)cache.get(key);
  std::printf("%llu\n", static_cast<unsigned long long>(
                            bench::run_ops(cache, std::strtol(argv[1], nullptr, 10))));
  return 0;
}
