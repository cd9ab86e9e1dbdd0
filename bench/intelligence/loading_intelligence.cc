// loading_intelligence: LoadingCache's prefetch and adaptive TTL against a simulated backend
// (make bench-intelligence; docs/performance.md, "Loading, prefetch and adaptive TTL"). Three
// markdown tables:
//
//   1. Patterns. The four synthetic patterns (access_patterns.h) read by one reader, back to back
//      (think time zero), through a LoadingCache smaller than the key space (LRU), over a backend
//      whose every load sleeps 1 ms or 10 ms; then again at 1 ms with the reader working 1 ms
//      between reads (think time), so prefetches land before their read. Per pattern, prefetch off,
//      on at depth 1 (the key's successors only) and on with read-ahead (--depth; by default the
//      library's default depth, which `prefetch.enabled` alone gives), plain and bundled: miss
//      ratio as Caffeine counts it (gets that ran a load), the share of gets that waited for any
//      load (theirs, or a prefetch in flight that they joined), backend loads, prefetch accuracy
//      (used / issued), wall time of --reads reads, speed-up (off / on).
//      Before measuring, --warmup reads at zero latency teach the model and fill the cache: the
//      measured reads are the steady state of an application that has been running.
//   2. Traces (../shared/data/traces when present; one line says so when absent): each trace
//      replayed as one stream with an instant loader and wait_idle() after each read, so the
//      result is deterministic: hit ratio off and on, and accuracy.
//   3. Adaptive TTL. Mixed volatility (10 % of keys change every second, 90 % every ten minutes,
//      uniform reads, one read per simulated millisecond on a ManualClock), adaptive TTL against
//      fixed TTLs: backend loads and staleness (reads that returned an older version than the
//      backend's current one, and their mean age), then each adaptive row beside the cheapest
//      fixed TTL that is no staler.
//
// Pattern rows are medians over --reps seeds (each metric's median on its own).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "bench/intelligence/access_patterns.h"
#include "bench/intelligence/sample_traces.h"
#include "chronocache/clock/manual_clock.h"
#include "chronocache/loading/load_result.h"
#include "chronocache/loading/loading_cache.h"
#include "chronocache/loading/loading_options.h"
#include "chronocache/loading/loading_stats.h"
#include "chronocache/policy/lru.h"
#include "sim/trace_reader.h"

namespace chronocache::bench {
namespace {

using Key = std::uint64_t;

struct Args {
  PatternShape shape{.keys = 4000};
  std::size_t cache_entries = 1000;  // a quarter of the key space
  std::uint64_t warmup = 40'000;
  std::uint64_t reads_1ms = 2000;
  std::uint64_t reads_10ms = 300;
  std::uint64_t reads_think = 1000;  // 1 ms backend, 1 ms think time
  int reps = 3;
  std::uint64_t seed = 42;
  std::size_t threads = 4;  // background loaders
  std::size_t depth = PrefetchOptions{}.depth;
  std::uint64_t trace_reads = 200'000;
  std::string traces = "../shared/data/traces";
  bool use_traces = true;
  bool patterns = true;
  bool adaptive = true;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--keys N] [--cache N] [--warmup N] [--reads-1ms N] [--reads-10ms N]\n"
      "          [--reads-think N]\n"
      "          [--reps N] [--seed N] [--threads N] [--depth N] [--laps N] [--trace-reads N]\n"
      "          [--traces DIR | --no-traces] [--no-patterns] [--no-adaptive]\n",
      argv0);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--no-traces") {
      args.use_traces = false;
      continue;
    }
    if (flag == "--no-patterns") {
      args.patterns = false;
      continue;
    }
    if (flag == "--no-adaptive") {
      args.adaptive = false;
      continue;
    }
    if (i + 1 >= argc) usage(argv[0]);
    const char* value = argv[++i];
    const auto number = [&] { return std::strtoull(value, nullptr, 10); };
    if (flag == "--keys") {
      args.shape.keys = number();
    } else if (flag == "--cache") {
      args.cache_entries = number();
    } else if (flag == "--warmup") {
      args.warmup = number();
    } else if (flag == "--reads-1ms") {
      args.reads_1ms = number();
    } else if (flag == "--reads-10ms") {
      args.reads_10ms = number();
    } else if (flag == "--reads-think") {
      args.reads_think = number();
    } else if (flag == "--reps") {
      args.reps = static_cast<int>(number());
    } else if (flag == "--seed") {
      args.seed = number();
    } else if (flag == "--threads") {
      args.threads = number();
    } else if (flag == "--depth") {
      args.depth = number();
    } else if (flag == "--laps") {
      args.shape.laps = static_cast<std::uint32_t>(number());
    } else if (flag == "--trace-reads") {
      args.trace_reads = number();
    } else if (flag == "--traces") {
      args.traces = value;
    } else {
      usage(argv[0]);
    }
  }
  return args;
}

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

template <class T>
T median(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// ---- 1. Patterns over a backend with latency ----------------------------------------------

using PatternCache = LoadingCache<Key, Key, Lru>;

struct RunScore {
  double miss_ratio = 0;  // %: gets that ran a load (LoadingStats::misses, Caffeine's count)
  double waited = 0;      // %: gets that waited for a load, their own or one they joined
  double loads = 0;       // keys loaded during the measured reads (prefetches included)
  double calls = 0;       // backend calls for them (a bulk call loads several keys)
  double issued = 0;
  double accuracy = 0;  // %: used / issued
  double seconds = 0;   // wall time of the measured reads
};

// How a run prefetches: depth 0 is off; bundle loads a miss's predictions in its own bulk call.
struct PrefetchMode {
  std::size_t depth = 0;
  bool bundle = false;
};

LoadingOptions pattern_options(const Args& args, PrefetchMode mode) {
  LoadingOptions options{.cache = {.max_entries = args.cache_entries},
                         .shard_count = 4,
                         .executor = {.threads = args.threads, .queue_capacity = 256}};
  if (mode.depth > 0)
    options.prefetch = {.enabled = true, .depth = mode.depth, .bundle = mode.bundle};
  return options;
}

// What one measured run reads: `reads` reads over a backend of `latency_ms`, the reader working
// `think_ms` between two reads (sleeping: the time an application spends on what it read).
struct Workload {
  int latency_ms = 1;
  std::uint64_t reads = 0;
  int think_ms = 0;
};

// The backend: each call, of one key or of many (the bulk loader, as MGET or a query with IN
// would be), takes one latency.
RunScore run_pattern(const Args& args, Pattern pattern, std::uint64_t seed, const Workload& work,
                     PrefetchMode mode) {
  std::atomic<int> latency_ms_now{0};  // zero while warming up
  std::atomic<std::uint64_t> calls{0};
  const auto round_trip = [&] {
    calls.fetch_add(1, std::memory_order_relaxed);
    const int ms = latency_ms_now.load(std::memory_order_relaxed);
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  };
  PatternCache cache(
      pattern_options(args, mode),
      [&](const Key& key) {
        round_trip();
        return LoadResult<Key>(key);
      },
      [&](std::span<const Key> keys) {
        round_trip();
        return std::vector<LoadResult<Key>>(keys.begin(), keys.end());
      });
  AccessPattern source(pattern, args.shape, seed);
  for (std::uint64_t i = 0; i < args.warmup; ++i) (void)cache.get(source.next());
  cache.wait_idle();
  const LoadingStats before = cache.stats();
  const std::uint64_t calls_before = calls.load();
  latency_ms_now.store(work.latency_ms);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < work.reads; ++i) {
    if (work.think_ms > 0 && i > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(work.think_ms));
    (void)cache.get(source.next());
  }
  const auto end = std::chrono::steady_clock::now();
  cache.wait_idle();  // prefetches still in flight count as issued (and unused)
  const LoadingStats after = cache.stats();
  RunScore score;
  const std::uint64_t gets = (after.hits + after.misses) - (before.hits + before.misses);
  score.miss_ratio = percent(after.misses - before.misses, gets);
  score.waited = percent((after.misses + after.joins) - (before.misses + before.joins), gets);
  score.loads = static_cast<double>(after.loads - before.loads);
  score.calls = static_cast<double>(calls.load() - calls_before);
  score.issued = static_cast<double>(after.prefetches_issued - before.prefetches_issued);
  score.accuracy = percent(after.prefetches_used - before.prefetches_used,
                           after.prefetches_issued - before.prefetches_issued);
  score.seconds = std::chrono::duration<double>(end - start).count();
  return score;
}

RunScore median_run(const Args& args, Pattern pattern, const Workload& work, PrefetchMode mode) {
  std::vector<double> miss, waited, loads, calls, issued, accuracy, seconds;
  for (int rep = 0; rep < args.reps; ++rep) {
    const RunScore s =
        run_pattern(args, pattern, args.seed + static_cast<std::uint64_t>(rep), work, mode);
    miss.push_back(s.miss_ratio);
    waited.push_back(s.waited);
    loads.push_back(s.loads);
    calls.push_back(s.calls);
    issued.push_back(s.issued);
    accuracy.push_back(s.accuracy);
    seconds.push_back(s.seconds);
  }
  return {median(miss),   median(waited),   median(loads),  median(calls),
          median(issued), median(accuracy), median(seconds)};
}

void pattern_table(const Args& args, const Workload& work) {
  std::printf("\n### Patterns, %d ms backend, %llu reads, think time %d ms (median of %d)\n\n",
              work.latency_ms, static_cast<unsigned long long>(work.reads), work.think_ms,
              args.reps);
  std::printf(
      "| pattern | prefetch | miss ratio | change | waited | change | keys loaded | backend calls "
      "| issued | accuracy | time (s) | speed-up |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Pattern pattern : kAllPatterns) {
    const RunScore off = median_run(args, pattern, work, {});
    std::printf("| %s | off | %.1f %% | | %.1f %% | | %.0f | %.0f | | | %.2f | |\n",
                std::string(pattern_name(pattern)).c_str(), off.miss_ratio, off.waited, off.loads,
                off.calls, off.seconds);
    std::vector<PrefetchMode> modes = {{.depth = 1}};
    if (args.depth > 1) modes.push_back({.depth = args.depth});
    modes.push_back({.depth = args.depth, .bundle = true});
    for (const PrefetchMode mode : modes) {
      const RunScore on = median_run(args, pattern, work, mode);
      std::printf(
          "| %s | on, depth %zu%s%s | %.1f %% | %+.1f pt | %.1f %% | %+.1f pt | %.0f | %.0f | %.0f "
          "| %.1f %% | %.2f | %.2fx |\n",
          std::string(pattern_name(pattern)).c_str(), mode.depth,
          mode.depth == PrefetchOptions{}.depth ? " (default)" : "", mode.bundle ? ", bundled" : "",
          on.miss_ratio, on.miss_ratio - off.miss_ratio, on.waited, on.waited - off.waited,
          on.loads, on.calls, on.issued, on.accuracy, on.seconds,
          on.seconds > 0 ? off.seconds / on.seconds : 0.0);
    }
    std::fflush(stdout);
  }
}

// ---- 2. Traces -------------------------------------------------------------------------------

struct TraceScore {
  double hit_ratio = 0;
  std::uint64_t issued = 0;
  double accuracy = 0;
};

TraceScore replay_trace(const std::vector<Key>& keys, std::size_t cache_entries, bool prefetch) {
  LoadingOptions options{.cache = {.max_entries = cache_entries},
                         .shard_count = 1,  // one LRU over the whole cache, as the simulator
                         .executor = {.threads = 1, .queue_capacity = 256}};
  if (prefetch) options.prefetch = {.enabled = true};
  PatternCache cache(options, [](const Key& key) { return LoadResult<Key>(key); });
  for (const Key key : keys) {
    (void)cache.get(key);
    if (prefetch) cache.wait_idle();  // deterministic: the prefetch lands before the next read
  }
  cache.wait_idle();
  const LoadingStats stats = cache.stats();
  return {percent(stats.hits, stats.hits + stats.misses), stats.prefetches_issued,
          percent(stats.prefetches_used, stats.prefetches_issued)};
}

void trace_table(const Args& args) {
  std::printf("\n### Traces: hit ratio with prefetch off and on (instant loader)\n\n");
  const std::filesystem::path dir(args.traces);
  if (!std::filesystem::is_directory(dir)) {
    std::printf("traces: %s is not a directory; the real traces are skipped (--traces DIR)\n",
                args.traces.c_str());
    return;
  }
  std::printf(
      "| trace | reads | cache entries | hit ratio off | hit ratio on | change | issued | "
      "accuracy |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& file : trace_files(dir)) {
    const std::string name = trace_name(file);
    try {
      const sim::TraceFile trace = sim::read_trace(file.string());
      std::vector<Key> keys(
          trace.trace.keys.begin(),
          trace.trace.keys.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(
                                         trace.trace.keys.size(), args.trace_reads)));
      const std::unordered_set<Key> distinct(keys.begin(), keys.end());
      // A tenth of the distinct keys: small enough that misses happen on every trace.
      const std::size_t entries = std::max<std::size_t>(distinct.size() / 10, 64);
      const TraceScore off = replay_trace(keys, entries, false);
      const TraceScore on = replay_trace(keys, entries, true);
      std::printf("| %s | %zu | %zu | %.1f %% | %.1f %% | %+.1f pt | %llu | %.1f %% |\n",
                  name.c_str(), keys.size(), entries, off.hit_ratio, on.hit_ratio,
                  on.hit_ratio - off.hit_ratio, static_cast<unsigned long long>(on.issued),
                  on.accuracy);
      std::fflush(stdout);
    } catch (const std::exception& e) {
      std::printf("| %s | skipped: %s |||||||\n", name.c_str(), e.what());
    }
  }
}

// ---- 3. Adaptive TTL under mixed volatility ------------------------------------------------

constexpr std::uint64_t kAdaptiveKeys = 200;
constexpr std::int64_t kVolatilePeriodMs = 1'000;  // 10 % of keys
constexpr std::int64_t kStablePeriodMs = 600'000;  // the other 90 %
constexpr std::uint64_t kAdaptiveReads = 600'000;  // one per simulated ms: ten minutes

// The backend: key k's version at time t changes every period_k, at phase_k.
struct Backend {
  std::vector<std::int64_t> period;
  std::vector<std::int64_t> phase;
  explicit Backend(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (std::uint64_t k = 0; k < kAdaptiveKeys; ++k) {
      const std::int64_t p = k % 10 == 0 ? kVolatilePeriodMs : kStablePeriodMs;
      period.push_back(p);
      phase.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p)));
    }
  }
  std::int64_t version(Key k, std::int64_t t_ms) const { return (t_ms + phase[k]) / period[k]; }
  // When version `v` of k was replaced by v + 1.
  std::int64_t replaced_at(Key k, std::int64_t v) const { return (v + 1) * period[k] - phase[k]; }
};

struct TtlScore {
  std::string name;
  std::uint64_t loads = 0;
  double stale = 0;         // % of reads
  double stale_age_ms = 0;  // mean, over stale reads: how long ago the returned version ended
};

using AdaptiveCache = LoadingCache<Key, std::int64_t, TtlOnly, ManualClock>;

TtlScore run_ttl(const std::string& name, const LoadingOptions& options, std::uint64_t seed) {
  const Backend backend(seed);
  const AdaptiveCache* self = nullptr;
  const TimePoint start = ManualClock().now();
  const auto now_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               const_cast<AdaptiveCache*>(self)->clock().now() - start)
        .count();
  };
  AdaptiveCache cache(options, [&](const Key& key) {
    return LoadResult<std::int64_t>(backend.version(key, now_ms()));
  });
  self = &cache;
  std::mt19937_64 rng(seed + 1);
  std::uint64_t stale = 0;
  double stale_age = 0;
  for (std::uint64_t i = 0; i < kAdaptiveReads; ++i) {
    cache.clock().advance(std::chrono::milliseconds(1));
    const Key key = rng() % kAdaptiveKeys;
    const LoadResult<std::int64_t> got = cache.get(key);
    const std::int64_t t = now_ms();
    if (got.has_value() && got.value() < backend.version(key, t)) {
      ++stale;
      stale_age += static_cast<double>(t - backend.replaced_at(key, got.value()));
    }
  }
  return {name, cache.stats().loads, percent(stale, kAdaptiveReads),
          stale == 0 ? 0.0 : stale_age / static_cast<double>(stale)};
}

void adaptive_table(const Args& args) {
  std::printf(
      "\n### Adaptive TTL: %llu keys (10 %% change every %lld ms, 90 %% every %lld ms), %llu "
      "uniform reads, one per simulated ms\n\n",
      static_cast<unsigned long long>(kAdaptiveKeys), static_cast<long long>(kVolatilePeriodMs),
      static_cast<long long>(kStablePeriodMs), static_cast<unsigned long long>(kAdaptiveReads));
  std::vector<TtlScore> fixed;
  for (const int ttl_ms :
       {50, 100, 250, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000, 30000, 60000, 120000}) {
    fixed.push_back(run_ttl("fixed " + std::to_string(ttl_ms) + " ms",
                            {.expire_after_write = Duration(ttl_ms)}, args.seed));
  }
  // Increase 250 ms under three max_ttl (where a stable key settles, ~17 s, is below all three,
  // so max_ttl should not matter), then larger increases: fewer loads, more stale reads.
  struct AdaptiveRun {
    int increase_ms;
    int max_s;
  };
  const AdaptiveRun runs[] = {{250, 30}, {250, 120}, {250, 3600}, {500, 120}, {1000, 120}};
  std::vector<TtlScore> adaptive;
  for (const AdaptiveRun& run : runs) {
    adaptive.push_back(run_ttl("adaptive +" + std::to_string(run.increase_ms) + " ms [250 ms, " +
                                   std::to_string(run.max_s) + " s]",
                               {.expire_after_write = Duration(1000),
                                .adaptive = {.enabled = true,
                                             .min_ttl = Duration(250),
                                             .max_ttl = Duration(run.max_s * 1000),
                                             .increase = Duration(run.increase_ms)}},
                               args.seed));
  }
  std::printf(
      "| TTL | backend loads | stale reads | mean stale age (ms) |\n|---|---:|---:|---:|\n");
  for (const auto* rows : {&fixed, &adaptive}) {
    for (const TtlScore& s : *rows)
      std::printf("| %s | %llu | %.2f %% | %.0f |\n", s.name.c_str(),
                  static_cast<unsigned long long>(s.loads), s.stale, s.stale_age_ms);
  }
  std::printf(
      "\n| adaptive | its loads | its stale | cheapest fixed TTL no staler | its loads | its stale "
      "| loads cut | target (>= 30 %%) |\n|---|---:|---:|---|---:|---:|---:|---|\n");
  for (const TtlScore& a : adaptive) {
    const TtlScore* best = nullptr;
    for (const TtlScore& f : fixed) {
      if (f.stale <= a.stale && (best == nullptr || f.loads < best->loads)) best = &f;
    }
    if (best == nullptr) {
      std::printf("| %s | %llu | %.2f %% | none is as fresh | | | | |\n", a.name.c_str(),
                  static_cast<unsigned long long>(a.loads), a.stale);
      continue;
    }
    const double cut =
        100.0 * (1.0 - static_cast<double>(a.loads) / static_cast<double>(best->loads));
    std::printf("| %s | %llu | %.2f %% | %s | %llu | %.2f %% | %.1f %% | %s |\n", a.name.c_str(),
                static_cast<unsigned long long>(a.loads), a.stale, best->name.c_str(),
                static_cast<unsigned long long>(best->loads), best->stale, cut,
                cut >= 30 ? "met" : "short");
  }
}

int run(const Args& args) {
  std::printf(
      "# loading_intelligence gcc-%d.%d cores=%u keys=%llu cache=%zu warmup=%llu reps=%d "
      "seed=%llu loader_threads=%zu depth=%zu chain=%u laps=%u\n",
      __GNUC__, __GNUC_MINOR__, std::thread::hardware_concurrency(),
      static_cast<unsigned long long>(args.shape.keys), args.cache_entries,
      static_cast<unsigned long long>(args.warmup), args.reps,
      static_cast<unsigned long long>(args.seed), args.threads, args.depth, args.shape.chain_length,
      args.shape.laps);
  if (args.patterns) {
    pattern_table(args, {.latency_ms = 1, .reads = args.reads_1ms});
    pattern_table(args, {.latency_ms = 10, .reads = args.reads_10ms});
    // An application that works on each value about as long as a load takes: a prefetch issued
    // at one read has landed by the next, so no read joins one in flight.
    pattern_table(args, {.latency_ms = 1, .reads = args.reads_think, .think_ms = 1});
  }
  if (args.use_traces) trace_table(args);
  if (args.adaptive) adaptive_table(args);
  return 0;
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) {
  return chronocache::bench::run(chronocache::bench::parse(argc, argv));
}
