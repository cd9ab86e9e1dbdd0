// engine_memory: how much memory a peer needs for N int -> int entries (default 10 M), inserted
// one by one with a 60 s TTL and no reserve, the way a cache fills in production.
//
//   engine_memory <peer> [--entries N]     (engine_memory --list-peers names the peers)
//   {"peer":"chronocache","entries":10000000,"peak_heap_bytes":...,...}
//
// Prints one line of JSON and exits 0, or exits 1 if the filled peer fails its sanity check
// (size() == N and a sample of keys reads back), 2 on a usage error. Run one process per peer
// (run_engine_bench.py does), so that neither the heap nor peak RSS carries over between peers.
//
// Heap is counted here, not estimated: this executable replaces every form of global operator
// new/delete (plain, array, nothrow, sized, aligned) with versions that allocate through
// malloc/posix_memalign and add malloc_usable_size of each block to a live-bytes counter, keeping
// its high-water mark. Usable size is what the allocator really hands out, rounding included
// (glibc's 8-byte chunk header is not, so a node-based map pays ~8 B per node more than shown;
// peak RSS shows it). peak_heap_bytes counts only what the peer allocated: the counter's value
// before the peer was constructed is subtracted. Growth is where hash tables peak (a rehash holds
// the old and the new array at once), so the peak, not the final size, is the honest cost.
// A peer that maps pages itself (chronocache's larger table segments) has them counted too:
// peak_heap_bytes is then the peak of heap + mapped pages, sampled after every insert (a growth
// step inside one insert holds at most one more segment, <= 180 KiB, which the samples miss), or
// the heap's own peak if higher; peak_heap_bound_bytes is the sum of the two separate peaks, an
// upper bound (it adds the heap's peak, reached while a young table's segments were small, to
// the pages' peak at the end: 8 MiB too many for a table of CompactIntHash keys, whose 512
// segments are all in the heap up to ~650 k entries). final_heap_bytes includes what the peer
// maps at the end. Free memory an allocator keeps for reuse is not counted, the heap's free
// chunks no more than the pages such a peer keeps; peak RSS shows both.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

#include "bench/engine/peers/all_peers.h"
#include "bench/engine/peers/cache_peer.h"

// ---- Counting allocator ----------------------------------------------------------------------

namespace {

std::atomic<std::int64_t> live_heap_bytes{0};
std::atomic<std::int64_t> peak_heap_bytes{0};

void note_allocated(void* p) noexcept {
  const auto bytes = static_cast<std::int64_t>(malloc_usable_size(p));
  const std::int64_t live = live_heap_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = peak_heap_bytes.load(std::memory_order_relaxed);
  while (live > peak &&
         !peak_heap_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void note_freed(void* p) noexcept {
  live_heap_bytes.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)),
                            std::memory_order_relaxed);
}

// nullptr when out of memory even after the new-handler had its chances.
void* counted_alloc(std::size_t size, std::size_t alignment) noexcept {
  if (size == 0) size = 1;  // operator new must return a distinct non-null pointer
  for (;;) {
    void* p = nullptr;
    if (alignment <= alignof(std::max_align_t)) {
      p = std::malloc(size);
    } else if (posix_memalign(&p, alignment, size) != 0) {
      p = nullptr;
    }
    if (p != nullptr) {
      note_allocated(p);
      return p;
    }
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) return nullptr;
    handler();  // frees memory and returns, or throws bad_alloc, or terminates
  }
}

void* counted_alloc_or_throw(std::size_t size, std::size_t alignment) {
  void* p = counted_alloc(size, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void counted_free(void* p) noexcept {
  if (p == nullptr) return;
  note_freed(p);
  std::free(p);
}

constexpr std::size_t kDefaultAlignment = alignof(std::max_align_t);

}  // namespace

void* operator new(std::size_t size) { return counted_alloc_or_throw(size, kDefaultAlignment); }
void* operator new[](std::size_t size) { return counted_alloc_or_throw(size, kDefaultAlignment); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_alloc(size, kDefaultAlignment);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_alloc(size, kDefaultAlignment);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return counted_alloc_or_throw(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return counted_alloc_or_throw(size, static_cast<std::size_t>(alignment));
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_alloc(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_alloc(size, static_cast<std::size_t>(alignment));
}

void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }

// ---- The measurement -------------------------------------------------------------------------

namespace chronocache::bench {
namespace {

using namespace std::chrono_literals;

constexpr int kDefaultEntries = 10'000'000;
constexpr std::chrono::milliseconds kTtl = 60s;
// Every kSampleStride-th key is read back after the fill (~1 000 reads for 10 M entries).
constexpr int kSampleStride = 9'973;

// A field of /proc/self/status in bytes (it reports kB), or -1 if unavailable.
std::int64_t proc_status_bytes(std::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 &&
        line[field.size()] == ':') {
      return std::strtoll(line.c_str() + field.size() + 1, nullptr, 10) * 1024;
    }
  }
  return -1;
}

// Peak resident set size of this process: VmHWM, else getrusage (also kB on Linux).
std::int64_t peak_rss_bytes() {
  const std::int64_t hwm = proc_status_bytes("VmHWM");
  if (hwm >= 0) return hwm;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

template <CachePeer P>
int measure(int entries) {
  const std::int64_t rss_before = proc_status_bytes("VmRSS");
  const std::int64_t heap_before = live_heap_bytes.load(std::memory_order_relaxed);
  peak_heap_bytes.store(heap_before, std::memory_order_relaxed);

  const auto start = std::chrono::steady_clock::now();
  auto* peer = new P;
  constexpr bool kMapsPages = requires { peer->mapped_bytes(); };
  std::int64_t sampled_peak = 0;  // of heap + mapped pages, after each insert (kMapsPages)
  for (int key = 0; key < entries; ++key) {
    peer->put(key, key, kTtl);
    if constexpr (kMapsPages) {
      sampled_peak = std::max(sampled_peak, live_heap_bytes.load(std::memory_order_relaxed) +
                                                static_cast<std::int64_t>(peer->mapped_bytes()));
    }
  }
  const double fill_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::int64_t mapped_peak = 0;
  std::int64_t mapped_after = 0;
  if constexpr (requires { peer->peak_mapped_bytes(); }) {
    mapped_peak = static_cast<std::int64_t>(peer->peak_mapped_bytes());
    mapped_after = static_cast<std::int64_t>(peer->mapped_bytes());
  }
  const std::int64_t heap_only_peak = peak_heap_bytes.load(std::memory_order_relaxed) - heap_before;
  const std::int64_t heap_peak_bound = heap_only_peak + mapped_peak;
  const std::int64_t heap_peak =
      kMapsPages ? std::max(heap_only_peak, sampled_peak - heap_before) : heap_only_peak;
  const std::int64_t heap_after =
      live_heap_bytes.load(std::memory_order_relaxed) - heap_before + mapped_after;
  const std::int64_t rss_peak = peak_rss_bytes();

  // Sanity, after the numbers are taken (it allocates nothing, but keeps them clean anyway).
  bool ok = peer->size() == static_cast<std::size_t>(entries);
  for (int key = 0; ok && key < entries; key += kSampleStride) ok = peer->get(key) == key;
  if (entries > 0) ok = ok && peer->get(entries - 1) == entries - 1;
  ok = ok && !peer->get(entries).has_value() && !peer->get(-1).has_value();

  long long self_reported = -1;
  if constexpr (requires { peer->memory_bytes(); }) {
    self_reported = static_cast<long long>(peer->memory_bytes());
  }

  std::printf(
      "{\"peer\":\"%.*s\",\"entries\":%d,\"peak_heap_bytes\":%lld,\"peak_mapped_bytes\":%lld,"
      "\"peak_heap_bound_bytes\":%lld,\"final_heap_bytes\":%lld,"
      "\"peak_rss_bytes\":%lld,\"rss_before_bytes\":%lld,\"bytes_per_entry\":%.2f,"
      "\"self_reported_bytes\":%lld,\"fill_seconds\":%.3f,\"ok\":%s}\n",
      static_cast<int>(P::kName.size()), P::kName.data(), entries,
      static_cast<long long>(heap_peak), static_cast<long long>(mapped_peak),
      static_cast<long long>(heap_peak_bound), static_cast<long long>(heap_after),
      static_cast<long long>(rss_peak), static_cast<long long>(rss_before),
      entries > 0 ? static_cast<double>(heap_peak) / entries : 0.0, self_reported, fill_seconds,
      ok ? "true" : "false");
  std::fflush(stdout);
  delete peer;
  if (!ok)
    std::fprintf(stderr, "engine_memory: %.*s failed its sanity check\n",
                 static_cast<int>(P::kName.size()), P::kName.data());
  return ok ? 0 : 1;
}

int usage() {
  std::fprintf(stderr, "usage: engine_memory <peer> [--entries N] | --list-peers\npeers:");
  AllPeers<int, int>::for_each([](auto tag) {
    const std::string_view name = decltype(tag)::type::kName;
    std::fprintf(stderr, " %.*s", static_cast<int>(name.size()), name.data());
  });
  std::fprintf(stderr, "\n");
  return 2;
}

// One peer name per line: run_engine_bench.py asks this binary which peers exist.
int list_peers() {
  AllPeers<int, int>::for_each([](auto tag) {
    const std::string_view name = decltype(tag)::type::kName;
    std::printf("%.*s\n", static_cast<int>(name.size()), name.data());
  });
  return 0;
}

int run(int argc, char** argv) {
  std::string_view peer_name;
  int entries = kDefaultEntries;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--list-peers") return list_peers();
    if (arg == "--entries" && i + 1 < argc) {
      const std::string_view value = argv[++i];
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), entries);
      if (error != std::errc() || end != value.data() + value.size() || entries < 0) return usage();
    } else if (peer_name.empty() && !arg.starts_with("-")) {
      peer_name = arg;
    } else {
      return usage();
    }
  }
  int result = -1;
  AllPeers<int, int>::for_each([&](auto tag) {
    using P = typename decltype(tag)::type;
    if (result == -1 && P::kName == peer_name) result = measure<P>(entries);
  });
  return result == -1 ? usage() : result;
}

}  // namespace
}  // namespace chronocache::bench

int main(int argc, char** argv) { return chronocache::bench::run(argc, argv); }
