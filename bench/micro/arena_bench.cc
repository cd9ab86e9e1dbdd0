// arena_bench: RecordArena against the process's malloc for a cache's records: many small
// records of similar size, filled, churned, and half of them expired at random.
//
//   arena_bench [--records N] [--bytes B] [--reps R]   (defaults: 4 M records of 37 bytes, the
//       server's record for a 16-byte key and a 16-byte value; 1 run of each peer)
//
// Each peer runs in its own forked child, so RSS does not carry over. "malloc" is whatever
// allocator the process has: run it under LD_PRELOAD=libjemalloc.so.2 or libmimalloc.so to
// measure those (make bench-arena does, for each one installed). Per scenario it prints ns per
// operation and resident bytes per live record:
//   fill        N allocations of B-4..B+4 bytes (sizes vary as keys and values do)
//   churn       N frees of a random record, each followed by an allocation
//   expire      a random half freed: RSS per remaining record
//   compact     then the peer's own way back: the arena's plan_compaction plus the owner's
//               relocation walk; malloc_trim(0) for malloc (glibc gives back whole free pages;
//               other allocators ignore it or purge on their own schedule)
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "chronocache/memory/record_arena.h"

namespace {

std::size_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages_total = 0;
  std::size_t pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Record {
  void* p;
  std::uint32_t bytes;
};

struct MallocPeer {
  static constexpr const char* kName = "malloc";
  void* allocate(std::size_t bytes) { return std::malloc(bytes); }
  void deallocate(void* p, std::size_t) { std::free(p); }
  std::size_t compact(std::vector<Record>&) {
    malloc_trim(0);
    return 0;
  }
};

struct ArenaPeer {
  static constexpr const char* kName = "arena";
  chronocache::RecordArena arena;
  void* allocate(std::size_t bytes) { return arena.allocate(bytes); }
  void deallocate(void* p, std::size_t bytes) { arena.deallocate(p, bytes); }
  // What an owner's walk does: every record the arena asks to move is copied and repointed.
  std::size_t compact(std::vector<Record>& records) {
    std::size_t moved = 0;
    for (int round = 0; round < 4 && arena.plan_compaction() != 0; ++round) {
      for (Record& r : records) {
        if (r.p == nullptr || !arena.should_relocate(r.p, r.bytes)) continue;
        void* fresh = arena.allocate(r.bytes);
        std::memcpy(fresh, r.p, r.bytes);
        arena.deallocate(r.p, r.bytes);
        r.p = fresh;
        ++moved;
      }
    }
    return moved;
  }
};

constexpr int kPhases = 4;
constexpr const char* kPhaseNames[kPhases] = {"fill", "churn", "expire", "compact"};
struct Phase {
  double ns_per_op = 0;
  double rss_per_record = 0;
};
struct Result {
  Phase phases[kPhases];
};

template <class Peer>
Result run(std::size_t n, std::size_t bytes) {
  Result result;
  int phase = 0;
  Peer peer;
  std::mt19937_64 rng(42);
  auto size = [&] { return static_cast<std::uint32_t>(bytes - 4 + rng() % 9); };
  std::vector<Record> records(n);
  const std::size_t rss_start = rss_bytes();
  auto row = [&](double ns, std::size_t live) {
    const double per_record = live == 0 ? 0 : double(rss_bytes() - rss_start) / double(live);
    result.phases[phase++] = Phase{ns, per_record};
  };

  auto start = std::chrono::steady_clock::now();
  for (Record& r : records) {
    r.bytes = size();
    r.p = peer.allocate(r.bytes);
    std::memset(r.p, 0x5A, r.bytes);
  }
  row(seconds_since(start) * 1e9 / double(n), n);

  start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    Record& r = records[rng() % n];
    peer.deallocate(r.p, r.bytes);
    r.bytes = size();
    r.p = peer.allocate(r.bytes);
    std::memset(r.p, 0x5A, r.bytes);
  }
  row(seconds_since(start) * 1e9 / double(n), n);

  std::size_t live = n;
  for (Record& r : records) {
    if (rng() % 2 == 0) {
      peer.deallocate(r.p, r.bytes);
      r.p = nullptr;
      --live;
    }
  }
  row(0, live);

  start = std::chrono::steady_clock::now();
  const std::size_t moved = peer.compact(records);
  row(moved == 0 ? 0 : seconds_since(start) * 1e9 / double(moved), live);
  return result;
}

// One run of a peer in a forked child; its Result comes back through a pipe.
template <class Peer>
Result run_in_child(std::size_t n, std::size_t bytes) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    const Result result = run<Peer>(n, bytes);
    const bool sent = write(fds[1], &result, sizeof(result)) == sizeof(result);
    std::_Exit(sent ? 0 : 1);
  }
  close(fds[1]);
  Result result;
  const bool received = read(fds[0], &result, sizeof(result)) == sizeof(result);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!received || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "arena_bench: the %s run failed\n", Peer::kName);
    std::exit(1);
  }
  return result;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Peer>
void print_rows(const std::vector<Result>& runs) {
  for (int p = 0; p < kPhases; ++p) {
    std::vector<double> ns;
    std::vector<double> rss;
    for (const Result& r : runs) {
      ns.push_back(r.phases[p].ns_per_op);
      rss.push_back(r.phases[p].rss_per_record);
    }
    std::printf("| %-6s | %-7s | %7.1f | %7.1f |\n", Peer::kName, kPhaseNames[p], median(ns),
                median(rss));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 4'000'000;
  std::size_t bytes = 37;
  int reps = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--records") {
      n = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--bytes") {
      bytes = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: arena_bench [--records N] [--bytes B] [--reps R]\n");
      return 2;
    }
  }
  if (bytes < 8 || n == 0 || reps < 1) {
    std::fprintf(stderr, "arena_bench: --bytes must be >= 8, --records and --reps >= 1\n");
    return 2;
  }
  std::printf(
      "%zu records of %zu +- 4 bytes, medians of %d alternating runs; ns per operation "
      "(compact: per record moved), RSS bytes per live record\n\n",
      n, bytes, reps);
  std::vector<Result> malloc_runs;
  std::vector<Result> arena_runs;
  for (int r = 0; r < reps; ++r) {
    malloc_runs.push_back(run_in_child<MallocPeer>(n, bytes));
    arena_runs.push_back(run_in_child<ArenaPeer>(n, bytes));
  }
  std::printf("| peer   | phase   | ns/op   | RSS B/record |\n|---|---|---:|---:|\n");
  print_rows<MallocPeer>(malloc_runs);
  print_rows<ArenaPeer>(arena_runs);
  return 0;
}
