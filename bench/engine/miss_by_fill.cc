// miss_by_fill: the cost of looking up absent keys in a large table, at several fill levels, for
// every peer, so that a table's growth phase does not decide the comparison.
//
//   miss_by_fill [--from 7000000] [--to 12000000] [--step 1000000] [--reps 3]
//                [--reserve N] [--peer chronocache|boost_flat|absl_flat]
//
// bm_GetMiss_10M measures one size. A table that grows in rounds (every segment of ours grows at
// the same fill, a flat map doubles) stands at a different load at each size, and a miss reads
// control bytes until it meets a group with an empty slot, so its cost follows the load at that
// size more than the design. This prints, for each size, ns per miss for each peer (the best of
// `reps` passes over the same 4 M absent keys, after one fill, without reserve unless asked) and
// the mean over the sizes. One process, the peers one after another; a size takes a few seconds
// each.
//
// --reserve N reserves room for N entries before each fill, so a table stands at a load of the
// caller's choosing (a miss's cost at a given load, apart from the growth phase). --peer runs
// one peer alone. The passes over the absent keys run in look_up_all, out of line, so that
// cachegrind can count them apart from the fill; mispredicted branches per miss, for example:
//
//   valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file=out
//       miss_by_fill --from 100000 --to 100000 --reps 1 --peer chronocache   (one line)
//   cg_annotate out | grep look_up_all     (Bcm / 4 194 304 misses per pass)
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/engine/peers/all_peers.h"

namespace chronocache::bench {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMisses = std::size_t{1} << 22;

struct Options {
  long from = 7'000'000;
  long to = 12'000'000;
  long step = 1'000'000;
  int reps = 3;
  long reserve = 0;       // 0: no reserve
  std::string_view peer;  // empty: every compared peer
};

// Absent keys: the table holds 0 .. n-1, these are negative.
std::vector<int> absent_keys() {
  std::vector<int> keys(kMisses);
  std::mt19937 rng(42);
  for (int& key : keys) key = -1 - static_cast<int>(rng() % 2'000'000'000u);
  return keys;
}

template <class P>
[[gnu::noinline]] std::size_t look_up_all(P& peer, const std::vector<int>& keys) {
  std::size_t found = 0;
  for (const int key : keys) found += peer.get(key).has_value();
  return found;
}

template <ReservablePeer P>
double ns_per_miss(long entries, const Options& options, const std::vector<int>& keys) {
  // From a trimmed heap, so that a peer does not fill into the pages the one before it freed
  // (engine_bench does the same, and says why).
  malloc_trim(0);
  P peer;
  if (options.reserve > 0) peer.reserve(static_cast<std::size_t>(options.reserve));
  for (long i = 0; i < entries; ++i) peer.put(static_cast<int>(i), static_cast<int>(i), 600s);
  double best = 1e30;
  for (int rep = 0; rep < options.reps; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    const std::size_t found = look_up_all(peer, keys);
    const auto stop = std::chrono::steady_clock::now();
    if (found != 0) {
      std::fprintf(stderr, "miss_by_fill: %s found an absent key\n", P::kName.data());
      std::exit(1);
    }
    best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count() /
                              static_cast<double>(keys.size()));
  }
  return best;
}

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--peer") {
      options.peer = argv[i + 1];
      continue;
    }
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (value <= 0) return false;
    if (flag == "--from") {
      options.from = value;
    } else if (flag == "--to") {
      options.to = value;
    } else if (flag == "--step") {
      options.step = value;
    } else if (flag == "--reps") {
      options.reps = static_cast<int>(value);
    } else if (flag == "--reserve") {
      options.reserve = value;
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && options.from <= options.to;
}

// The peers compared: ours and the two flat maps (the naive map and the compact table are not
// what this question is about, and the naive map takes minutes at these sizes).
template <class P>
constexpr bool kCompared =
    P::kName == "chronocache" || P::kName == "boost_flat" || P::kName == "absl_flat";

template <class P>
bool chosen(const Options& options) {
  return kCompared<P> && (options.peer.empty() || options.peer == P::kName);
}

int run(const Options& options) {
  const std::vector<int> keys = absent_keys();
  std::vector<std::string> names;
  AllPeers<int, int>::for_each([&](auto tag) {
    using P = typename decltype(tag)::type;
    if (chosen<P>(options)) names.emplace_back(P::kName);
  });
  if (names.empty()) {
    std::fprintf(stderr, "miss_by_fill: no peer named %.*s (chronocache, boost_flat, absl_flat)\n",
                 static_cast<int>(options.peer.size()), options.peer.data());
    return 2;
  }
  std::printf(
      "# miss_by_fill: ns per lookup of an absent int key, best of %d passes over %zu keys\n",
      options.reps, keys.size());
  std::printf("| entries |");
  for (const std::string& name : names) std::printf(" %s |", name.c_str());
  std::printf("\n|---:|");
  for (std::size_t i = 0; i < names.size(); ++i) std::printf("---:|");
  std::printf("\n");
  std::vector<double> sums(names.size(), 0.0);
  int sizes = 0;
  for (long entries = options.from; entries <= options.to; entries += options.step) {
    std::printf("| %ld |", entries);
    std::size_t column = 0;
    AllPeers<int, int>::for_each([&](auto tag) {
      using P = typename decltype(tag)::type;
      if (chosen<P>(options)) {
        const double ns = ns_per_miss<P>(entries, options, keys);
        sums[column++] += ns;
        std::printf(" %.1f |", ns);
        std::fflush(stdout);
      }
    });
    std::printf("\n");
    ++sizes;
  }
  std::printf("| mean |");
  for (const double sum : sums) std::printf(" %.1f |", sum / sizes);
  std::printf("\n");
  return 0;
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) {
  chronocache::bench::Options options;
  if (!chronocache::bench::parse(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: miss_by_fill [--from N] [--to N] [--step N] [--reps N] [--reserve N] "
                 "[--peer NAME] (N > 0)\n");
    return 2;
  }
  return chronocache::bench::run(options);
}
