// clock_bench: what one reading of each time source costs, and an uncontended mutex, the two
// per-operation costs CoarseClock and the lock-free-per-shard Cache are designed to avoid (see
// src/chronocache/clock/coarse_clock.h). run_engine_bench.py prints these as a second table, so
// the engine table's "vs naive" column can be read against them.
//
//   bm_steadyClockNow       std::chrono::steady_clock::now() (vDSO clock_gettime MONOTONIC)
//   bm_monotonicCoarse      clock_gettime(CLOCK_MONOTONIC_COARSE) (vDSO, jiffy resolution)
//   bm_coarseClockNow       chronocache::CoarseClock::now() (one relaxed atomic load)
//   bm_mutexLockUnlock      std::mutex lock + unlock, one thread
#include <benchmark/benchmark.h>
#include <time.h>

#include <chrono>
#include <mutex>

#include "chronocache/clock/coarse_clock.h"

namespace {

void bm_steady_clock_now(benchmark::State& state) {
  for (auto _ : state) {
    auto now = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(now);
  }
}

void bm_monotonic_coarse(benchmark::State& state) {
  for (auto _ : state) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    benchmark::DoNotOptimize(now);
  }
}

void bm_coarse_clock_now(benchmark::State& state) {
  const chronocache::CoarseClock clock;
  for (auto _ : state) {
    auto now = clock.now();
    benchmark::DoNotOptimize(now);
  }
}

void bm_mutex_lock_unlock(benchmark::State& state) {
  std::mutex mu;
  for (auto _ : state) {
    mu.lock();
    benchmark::ClobberMemory();  // keeps the pair from being merged or moved
    mu.unlock();
  }
}

BENCHMARK(bm_steady_clock_now)->Name("bm_steadyClockNow")->Unit(benchmark::kNanosecond);
BENCHMARK(bm_monotonic_coarse)->Name("bm_monotonicCoarse")->Unit(benchmark::kNanosecond);
BENCHMARK(bm_coarse_clock_now)->Name("bm_coarseClockNow")->Unit(benchmark::kNanosecond);
BENCHMARK(bm_mutex_lock_unlock)->Name("bm_mutexLockUnlock")->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
