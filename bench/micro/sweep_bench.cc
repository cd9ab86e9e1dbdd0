// What one reclaim_expired cycle costs per examined slot: the measurement behind the choice of a
// paced full sweep (expiry/expiry_pacer.h). N entries with 8-byte keys and an empty value (a
// 16-byte slot; the server's are 12), half without TTL and half with one of 1-10 s (a random mix
// over the table, as a hash spreads them), swept in 16 K-slot slices.
//
//   build/release/bench/sweep_bench 2000000 5      # N, passes: nothing due, the steady-state cost
//   build/release/bench/sweep_bench 2000000 1 1    # every volatile entry due: sweep + 1 M erases
//   valgrind --tool=callgrind build/release/bench/sweep_bench 2000000 {0,3}
//                                                  # instructions: the difference / 3
//
// Built by every preset; ctest runs it once at 20 000 entries with everything due, checking
// that one pass reclaims exactly the due half, so it cannot rot.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "chronocache/cache.h"
#include "chronocache/clock/manual_clock.h"

namespace {

using namespace std::chrono_literals;
struct Empty {};
using SweptCache =
    chronocache::Cache<std::uint64_t, Empty, chronocache::TtlOnly, chronocache::ManualClock>;

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
  const int passes = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool all_due = argc > 3 && std::atoi(argv[3]) != 0;
  SweptCache cache;
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t key = i * 0x9e3779b97f4a7c15ULL;
    if (i % 2 == 0) {
      cache.put(key, Empty{});
    } else {
      cache.put(key, Empty{}, std::chrono::milliseconds(1000 + rng() % 9000));
    }
  }
  if (all_due) cache.clock().advance(20s);
  const std::size_t capacity = cache.slot_capacity();
  constexpr std::size_t kSlice = 16 * 1024;
  std::size_t reclaimed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t done = 0; done < capacity; done += kSlice)
      reclaimed += cache.reclaim_expired(kSlice);
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("entries=%zu slots=%zu load=%.2f passes=%d reclaimed=%zu ns/slot=%.2f\n", n, capacity,
              static_cast<double>(n) / static_cast<double>(capacity), passes, reclaimed,
              passes > 0 ? ns / (static_cast<double>(capacity) * passes) : 0.0);
  // The check that makes the smoke test mean something: one pass with everything due finds every
  // volatile entry (the odd-numbered half), and nothing else.
  if (all_due && passes > 0 && reclaimed != n / 2) {
    std::fprintf(stderr, "sweep_bench: reclaimed %zu of %zu due entries\n", reclaimed, n / 2);
    return 1;
  }
  return 0;
}
