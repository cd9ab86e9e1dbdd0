// threads_bench: get/put throughput of concurrent maps at 1 and 2 threads (issue 13): our
// ShardedCache against tbb::concurrent_hash_map and a mutex-sharded boost::unordered_flat_map,
// measured in one run so the three share the machine's state.
//
//   threads_bench [--reps 5] [--seconds 0.5] [--threads 1,2] [--shards 16] [--commit abc1234]
//                 [--json PATH]
//
// Keys are uint64 in [0, 1 M), values uint64 (8 bytes); every map is pre-filled with all 1 M keys,
// so reads hit and puts overwrite (the map's size stays 1 M). Each thread replays its own
// precomputed stream of 2^20 operations (uniform or Zipf(0.99), scrambled as YCSB, from
// bench/common/workloads.h; seed 42 + thread), 100 % gets or 90 % gets / 10 % puts, for a fixed
// wall time; throughput is all threads' operations over that time, the median of `reps` runs.
// Threads are pinned to distinct cores when there are enough. --json PATH also writes the tables'
// cells as records, in the document bench/common/results.py writes (for make report).
//
// Peers, each behind the same three-call adapter (get, put, name):
//   ours           ShardedCache<uint64_t, uint64_t> (TtlOnly, CoarseClock), puts with a 1 h TTL
//   ours_wtinylfu  the same with the default policy WTinyLfu (hits logged for the policy)
//   tbb_chm        tbb::concurrent_hash_map: get = find with a const_accessor (a read lock on
//                  the bucket), put = insert with an accessor and assign
//   boost_sharded  `shards` boost::unordered_flat_map, each behind a std::mutex (as the brief
//                  names it; not an annotated Mutex: this program is not in the thread-safety
//                  build), shard chosen from the same hash bits range as ours
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <tbb/concurrent_hash_map.h>
#include <boost/unordered/unordered_flat_map.hpp>

#include "bench/common/workloads.h"
#include "chronocache/base/hash.h"
#include "chronocache/policy/default_policy.h"
#include "chronocache/sharded_cache.h"

namespace chronocache::bench {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kKeys = 1'000'000;
constexpr std::size_t kStreamLength = std::size_t{1} << 20;  // per thread, cycled by masking

struct Op {
  std::uint64_t key;
  bool is_put;
};

// ---- Peers -----------------------------------------------------------------------------------

template <class Policy>
class OursPeer {
 public:
  explicit OursPeer(std::size_t shards) : cache_({}, shards) {}
  bool get(std::uint64_t key) { return cache_.get(key).has_value(); }
  void put(std::uint64_t key, std::uint64_t value) { cache_.put(key, value, 1h); }

 private:
  ShardedCache<std::uint64_t, std::uint64_t, Policy> cache_;
};

class TbbPeer {
 public:
  explicit TbbPeer(std::size_t) : map_(2 * kKeys) {}
  bool get(std::uint64_t key) {
    Map::const_accessor at;
    if (!map_.find(at, key)) return false;
    sink_ = at->second;
    return true;
  }
  void put(std::uint64_t key, std::uint64_t value) {
    Map::accessor at;
    map_.insert(at, key);
    at->second = value;
  }

 private:
  struct Hasher {
    static std::size_t hash(std::uint64_t key) { return hash_integer(key); }
    static bool equal(std::uint64_t a, std::uint64_t b) { return a == b; }
  };
  using Map = tbb::concurrent_hash_map<std::uint64_t, std::uint64_t, Hasher>;
  Map map_;
  static inline thread_local std::uint64_t sink_ = 0;
};

class BoostShardedPeer {
 public:
  explicit BoostShardedPeer(std::size_t shards)
      : mask_(shards - 1), shards_(std::make_unique<Shard[]>(shards)) {
    for (std::size_t i = 0; i < shards; ++i) shards_[i].map.reserve(2 * kKeys / shards);
  }
  bool get(std::uint64_t key) {
    const std::uint64_t h = hash_integer(key);
    Shard& shard = shards_[(h >> 32) & mask_];
    std::lock_guard<std::mutex> lock(shard.mu);
    const auto it = shard.map.find(key);
    return it != shard.map.end() && (sink_ = it->second, true);
  }
  void put(std::uint64_t key, std::uint64_t value) {
    const std::uint64_t h = hash_integer(key);
    Shard& shard = shards_[(h >> 32) & mask_];
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.map.insert_or_assign(key, value);
  }

 private:
  struct Hash {
    std::size_t operator()(std::uint64_t key) const { return hash_integer(key); }
  };
  struct alignas(64) Shard {
    std::mutex mu;
    boost::unordered_flat_map<std::uint64_t, std::uint64_t, Hash> map;
  };
  std::size_t mask_;
  std::unique_ptr<Shard[]> shards_;
  static inline thread_local std::uint64_t sink_ = 0;
};

// ---- Workloads -------------------------------------------------------------------------------

enum class Keys { kUniform, kZipf };

std::vector<Op> make_stream(Keys keys, double put_fraction, std::uint64_t seed) {
  std::vector<Op> ops(kStreamLength);
  if (keys == Keys::kZipf) {
    const std::vector<CacheOp> zipf = zipf_op_stream({.ops = kStreamLength,
                                                      .key_space = static_cast<int>(kKeys),
                                                      .put_fraction = put_fraction,
                                                      .seed = seed});
    for (std::size_t i = 0; i < ops.size(); ++i)
      ops[i] = {static_cast<std::uint64_t>(zipf[i].key), zipf[i].is_put};
  } else {
    SplitMix64 rng(seed);
    for (Op& op : ops) {
      op.key = rng.next_below(kKeys);
      op.is_put = rng.next_unit() < put_fraction;
    }
  }
  return ops;
}

void pin_to_core(std::size_t core) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core % cores, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// Seconds this thread has spent runnable but waiting for a CPU (the kernel's run-queue wait,
// /proc/thread-self/schedstat: run ns, wait ns, slices); 0 where unavailable.
double thread_runqueue_seconds() {
  std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (f == nullptr) return 0;
  unsigned long long run_ns = 0;
  unsigned long long wait_ns = 0;
  const int fields = std::fscanf(f, "%llu %llu", &run_ns, &wait_ns);
  std::fclose(f);
  return fields == 2 ? static_cast<double>(wait_ns) * 1e-9 : 0;
}

// Operations per second of all threads together: over wall time, and "own-core": the sum over
// threads of operations per second of the time each was not waiting in the run queue. The
// second removes what other jobs on a shared machine take (time slices), and keeps what the
// map itself costs: running, spinning and sleeping on its locks.
struct Rate {
  double wall = 0;
  double cpu = 0;
};

// `threads` threads replaying their streams for `seconds`.
template <class Peer>
Rate run_once(Peer& peer, const std::vector<std::vector<Op>>& streams, std::size_t threads,
              double seconds) {
  std::atomic<bool> stop{false};
  std::vector<std::uint64_t> done(threads * 16, 0);  // 128 bytes apart: no false sharing
  std::vector<double> cpu(threads * 16, 0);
  std::barrier start(static_cast<std::ptrdiff_t>(threads + 1));
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      if (threads <= std::thread::hardware_concurrency()) pin_to_core(t);
      const std::vector<Op>& ops = streams[t];
      std::uint64_t count = 0;
      std::uint64_t found = 0;
      start.arrive_and_wait();
      const double queued_begin = thread_runqueue_seconds();
      const auto begin = std::chrono::steady_clock::now();
      while (!stop.load(std::memory_order_relaxed)) {
        for (std::size_t i = 0; i < 1024; ++i, ++count) {
          const Op& op = ops[count & (kStreamLength - 1)];
          if (op.is_put)
            peer.put(op.key, op.key + count);
          else
            found += peer.get(op.key) ? 1 : 0;
        }
      }
      done[t * 16] = count;
      cpu[t * 16] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() -
          (thread_runqueue_seconds() - queued_begin);
      if (found == 0 && count > 0 && !ops[0].is_put) std::fprintf(stderr, "no hits?\n");
    });
  }
  start.arrive_and_wait();
  const auto begin = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& worker : workers) worker.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  Rate rate;
  for (std::size_t t = 0; t < threads; ++t) {
    rate.wall += static_cast<double>(done[t * 16]) / elapsed;
    rate.cpu += static_cast<double>(done[t * 16]) / cpu[t * 16];
  }
  return rate;
}

struct Options {
  int reps = 5;
  double seconds = 0.5;
  std::vector<std::size_t> threads = {1, 2};
  std::size_t shards = 16;
  std::string_view only;           // one peer's name: measure it alone (a quick look, no table)
  const char* commit = "unknown";  // printed in the header line (the Makefile passes git's)
  const char* json = nullptr;      // --json PATH: also write the cells as records
};

struct Workload {
  const char* name;
  Keys keys;
  double put_fraction;
};
constexpr Workload kWorkloads[] = {
    {"uniform 100% get", Keys::kUniform, 0.0},
    {"uniform 90% get", Keys::kUniform, 0.1},
    {"zipf0.99 100% get", Keys::kZipf, 0.0},
    {"zipf0.99 90% get", Keys::kZipf, 0.1},
};
constexpr std::size_t kWorkloadCount = std::size(kWorkloads);

// Median Mops/s per (workload, thread count) for one peer, wall and own-core. The thread
// counts alternate within each repetition, so a slow spell of the machine hits both alike.
struct Medians {
  std::vector<std::vector<double>> wall;  // [workload][thread count index]
  std::vector<std::vector<double>> cpu;
};
double median(std::vector<double> runs) {
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}
template <class Peer>
Medians measure(const char* name, const Options& options,
                const std::vector<std::vector<std::vector<Op>>>& streams) {
  Peer peer(options.shards);
  for (std::uint64_t key = 0; key < kKeys; ++key) peer.put(key, key);
  Medians result{std::vector<std::vector<double>>(kWorkloadCount),
                 std::vector<std::vector<double>>(kWorkloadCount)};
  for (std::size_t w = 0; w < kWorkloadCount; ++w) {
    const std::size_t counts = options.threads.size();
    std::vector<std::vector<double>> wall(counts);
    std::vector<std::vector<double>> cpu(counts);
    for (std::size_t c = 0; c < counts; ++c)
      run_once(peer, streams[w], options.threads[c], options.seconds / 5);  // warm-up
    for (int rep = 0; rep < options.reps; ++rep) {
      for (std::size_t c = 0; c < counts; ++c) {
        const Rate rate = run_once(peer, streams[w], options.threads[c], options.seconds);
        wall[c].push_back(rate.wall / 1e6);
        cpu[c].push_back(rate.cpu / 1e6);
      }
    }
    for (std::size_t c = 0; c < counts; ++c) {
      result.wall[w].push_back(median(wall[c]));
      result.cpu[w].push_back(median(cpu[c]));
      std::fprintf(stderr,
                   "%-14s %-18s %zuT: wall %.2f Mops/s (min %.2f max %.2f), own-core %.2f\n", name,
                   kWorkloads[w].name, options.threads[c], result.wall[w].back(),
                   *std::min_element(wall[c].begin(), wall[c].end()),
                   *std::max_element(wall[c].begin(), wall[c].end()), result.cpu[w].back());
    }
  }
  return result;
}

void print_table(const char* title, const char* const* names, std::size_t peers,
                 const std::vector<std::vector<std::vector<double>>>& results,
                 const Options& options) {
  const std::size_t max_threads = options.threads.back();
  std::printf("\n%s\n\n| workload |", title);
  for (std::size_t p = 0; p < peers; ++p) {
    for (std::size_t threads : options.threads) std::printf(" %s %zuT |", names[p], threads);
    if (options.threads.size() > 1) std::printf(" %s ratio |", names[p]);
  }
  std::printf(" ours vs best peer at %zuT |\n|---|", max_threads);
  for (std::size_t p = 0; p < peers; ++p) {
    for (std::size_t t = 0; t < options.threads.size(); ++t) std::printf("---:|");
    if (options.threads.size() > 1) std::printf("---:|");
  }
  std::printf("---:|\n");
  for (std::size_t w = 0; w < kWorkloadCount; ++w) {
    std::printf("| %s |", kWorkloads[w].name);
    for (const auto& result : results) {
      for (double mops : result[w]) std::printf(" %.2f |", mops);
      if (result[w].size() > 1) std::printf(" %.2fx |", result[w].back() / result[w].front());
    }
    const double best_peer = std::max(results[2][w].back(), results[3][w].back());
    std::printf(" %.2fx |\n", results[0][w].back() / best_peer);
  }
}

// `text` as a JSON string literal.
std::string json_string(std::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      quoted += escaped;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

// The document bench/common/results.py writes, {"benchmark", "conditions", "argv", "records"},
// with one record per cell of the tables: a peer's median Mops/s, wall and own-core, on one
// workload at one thread count. Written to PATH.tmp, then renamed: a reader never sees half.
bool write_json(const char* path, const std::string& conditions, int argc, char** argv,
                const char* const* names, const std::vector<Medians>& medians,
                const Options& options) {
  const std::string temporary = std::string(path) + ".tmp";
  std::FILE* out = std::fopen(temporary.c_str(), "w");
  if (out == nullptr) return false;
  std::fprintf(out, "{\"benchmark\": \"engine_threads\", \"conditions\": %s, \"argv\": [",
               json_string(conditions).c_str());
  for (int i = 1; i < argc; ++i)
    std::fprintf(out, "%s%s", i > 1 ? ", " : "", json_string(argv[i]).c_str());
  std::fprintf(out, "],\n \"records\": [");
  const char* separator = "\n  ";
  for (std::size_t p = 0; p < medians.size(); ++p) {
    for (std::size_t w = 0; w < kWorkloadCount; ++w) {
      for (std::size_t c = 0; c < options.threads.size(); ++c) {
        std::fprintf(out,
                     "%s{\"kind\": \"engine_threads\", \"peer\": %s, \"workload\": %s, "
                     "\"threads\": %zu, \"mops\": %.6g, \"own_core_mops\": %.6g}",
                     separator, json_string(names[p]).c_str(),
                     json_string(kWorkloads[w].name).c_str(), options.threads[c],
                     medians[p].wall[w][c], medians[p].cpu[w][c]);
        separator = ",\n  ";
      }
    }
  }
  std::fprintf(out, "\n ]}\n");
  const bool written = std::ferror(out) == 0;
  return std::fclose(out) == 0 && written && std::rename(temporary.c_str(), path) == 0;
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) {
  using namespace chronocache::bench;
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--reps") {
      options.reps = std::atoi(argv[i + 1]);
    } else if (flag == "--seconds") {
      options.seconds = std::atof(argv[i + 1]);
    } else if (flag == "--only") {
      options.only = argv[i + 1];
    } else if (flag == "--commit") {
      options.commit = argv[i + 1];
    } else if (flag == "--json") {
      options.json = argv[i + 1];
    } else if (flag == "--shards") {
      options.shards = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (flag == "--threads") {
      options.threads.clear();
      for (char* p = argv[i + 1]; *p != '\0';) {
        options.threads.push_back(std::strtoul(p, &p, 10));
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr,
                   "usage: threads_bench [--reps N] [--seconds S] [--threads 1,2] "
                   "[--shards N] [--commit C] [--only PEER] [--json PATH]\n");
      return 2;
    }
  }
  if (options.json != nullptr && !options.only.empty()) {
    std::fprintf(stderr, "threads_bench: --json needs the full run (no --only)\n");
    return 2;
  }
  std::sort(options.threads.begin(), options.threads.end());
  const std::size_t max_threads = options.threads.back();
  std::vector<std::vector<std::vector<Op>>> streams(kWorkloadCount);
  for (std::size_t w = 0; w < kWorkloadCount; ++w)
    for (std::size_t t = 0; t < max_threads; ++t)
      streams[w].push_back(
          make_stream(kWorkloads[w].keys, kWorkloads[w].put_fraction, kDefaultSeed + t));

  const char* names[] = {"ours", "ours_wtinylfu", "tbb_chm", "boost_sharded"};
  if (!options.only.empty()) {
    if (options.only == names[0])
      measure<OursPeer<chronocache::TtlOnly>>(names[0], options, streams);
    if (options.only == names[1])
      measure<OursPeer<chronocache::DefaultPolicy>>(names[1], options, streams);
    if (options.only == names[2]) measure<TbbPeer>(names[2], options, streams);
    if (options.only == names[3]) measure<BoostShardedPeer>(names[3], options, streams);
    return 0;
  }
  std::vector<Medians> medians;
  medians.push_back(measure<OursPeer<chronocache::TtlOnly>>(names[0], options, streams));
  medians.push_back(measure<OursPeer<chronocache::DefaultPolicy>>(names[1], options, streams));
  medians.push_back(measure<TbbPeer>(names[2], options, streams));
  medians.push_back(measure<BoostShardedPeer>(names[3], options, streams));

  char conditions[512];
  std::snprintf(conditions, sizeof conditions,
                "# threads_bench %s gcc-%s -O2 cores=%u reps=%d seconds=%.2f shards=%zu seed=%llu "
                "keys=1M uint64->uint64 prefilled",
                options.commit, __VERSION__, std::thread::hardware_concurrency(), options.reps,
                options.seconds, options.shards, static_cast<unsigned long long>(kDefaultSeed));
  std::printf("%s\n", conditions);
  std::printf("# Mops/s, median of %d; ratio = %zu-thread / %zu-thread\n", options.reps,
              options.threads.back(), options.threads.front());
  std::vector<std::vector<std::vector<double>>> wall;
  std::vector<std::vector<std::vector<double>>> cpu;
  for (const Medians& m : medians) {
    wall.push_back(m.wall);
    cpu.push_back(m.cpu);
  }
  print_table("Wall-clock throughput (all threads' operations / elapsed time):", names,
              std::size(names), wall, options);
  print_table(
      "Own-core throughput (sum over threads of operations / (elapsed time - that thread's "
      "run-queue wait)):",
      names, std::size(names), cpu, options);
  if (options.json != nullptr &&
      !write_json(options.json, conditions, argc, argv, names, medians, options)) {
    std::fprintf(stderr, "threads_bench: cannot write %s\n", options.json);
    return 1;
  }
  return 0;
}
