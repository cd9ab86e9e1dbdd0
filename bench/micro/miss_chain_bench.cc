// miss_chain_bench: what a miss reads at 10 M entries before it can answer, without the table
// around it. SegmentedTable::find, in a table of more than one segment, loads the hash's
// directory entry (the segment's control bytes, its group count) and then the home group's 16
// control bytes, which sit in the segment's own pages behind its 16-byte header;
// boost::unordered_flat_map computes the group's address from the hash and loads it from one
// array of control bytes. At 10 M int -> int entries our miss runs at 0.6-0.7x of the flat maps'
// (docs/design/engine.md, "Where a miss's time goes"). This puts the access patterns side by side:
//
//   bm_miss/0/0      one array of control bytes for all groups (the flat maps' layout)
//   bm_miss/G/1      segments of G groups, each in page-aligned pages as the table's pool gives
//                    them (16-byte header, control bytes, 192-byte bodies), found through a
//                    directory of 4 096 entries: 275 (a full segment today: its control bytes
//                    cross into a second page), 255 (the most whose control bytes end on the
//                    first page) and 236 (a segment fitted to 12 pages)
//   bm_miss/255/0    the same segments, the address computed from the hash (equal segments
//                    allow it): the directory's load taken out of the chain
//   bm_miss/G/2      every segment's control bytes side by side in one region of their own
//                    (each G * 16 bytes, rounded to a line), bodies elsewhere, found through
//                    the directory: the layout a table with a control-byte region would have
//   bm_miss/254/3    each segment's 32-byte header and control bytes on one page of its own,
//                    the pages of a 2 MiB pool chunk's 39 segments side by side at its front
//                    (bodies behind them), through the directory: what the pool could give
//                    without a region of its own
//
// ~727 000 groups each (10 M entries at a load of 0.86). Every group holds 13 random tags and 3
// empty lanes, so a probe ends in its home group and no branch depends on the memory read (a
// table just after growth); each probe folds its tag and empty masks into a sum the loop
// carries. Fresh pages for every run, so several alternating runs are needed on a VM:
//
//   for i in 1 2 3 4 5 6; do taskset -c 1 build/release/bench/miss_chain_bench
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true; done   (one line)
#include <benchmark/benchmark.h>
#include <emmintrin.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "chronocache/base/hash.h"

namespace {

constexpr std::size_t kLanes = 16;
constexpr std::size_t kTotalGroups = 727'040;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kHeaderBytes = 16;
constexpr std::size_t kBodyBytes = 192;  // int -> int
constexpr std::size_t kFixedBytes = 64;  // the header and the padding that puts bodies on a line
constexpr unsigned kDepth = 12;          // 4 096 directory entries
constexpr unsigned char kEmpty = 0x80;

struct DirectoryEntry {
  const unsigned char* ctrl;
  std::uint32_t groups;
  std::uint32_t bodies_at;  // unused: it is the entry's size that matters
};

std::uint64_t hash_of(std::uint64_t i) {
  return chronocache::detail::mul_fold(i ^ chronocache::detail::kMix0, chronocache::detail::kMix1);
}
// The table's range reduction: the hash's low 32 bits as a fraction of the group count.
std::size_t home_group(std::uint64_t h, std::size_t groups) {
  return static_cast<std::size_t>((h & 0xFFFF'FFFFu) * groups >> 32);
}

// Page-aligned memory from mmap, as the pool's chunks are.
class Pages {
 public:
  explicit Pages(std::size_t bytes)
      : bytes_(bytes),
        data_(static_cast<unsigned char*>(
            mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {}
  ~Pages() { munmap(data_, bytes_); }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  unsigned char* data() const { return data_; }

 private:
  std::size_t bytes_;
  unsigned char* data_;
};

void bm_miss(benchmark::State& state) {
  const auto groups_per_segment = static_cast<std::size_t>(state.range(0));
  const bool by_directory = state.range(1) != 0;
  const bool ctrl_region = state.range(1) == 2;
  const bool ctrl_pages_lead = state.range(1) == 3;
  const bool flat = groups_per_segment == 0;
  const std::size_t segments = flat ? 1 : kTotalGroups / groups_per_segment;
  const std::size_t groups = flat ? kTotalGroups : groups_per_segment;
  const std::size_t stride =
      flat          ? 0
      : ctrl_region ? (groups * kLanes + 63) / 64 * 64
                    : (kFixedBytes + groups * (kLanes + kBodyBytes) + kPage - 1) / kPage * kPage;
  const std::size_t ctrl_at = flat || ctrl_region ? 0 : kHeaderBytes;
  // 13-page reservations (a page of control bytes, 12 of bodies): 39 to a 2 MiB chunk.
  constexpr std::size_t per_chunk = 39;
  constexpr std::size_t kChunkBytes = std::size_t{2} << 20;
  const auto ctrl_address = [&](unsigned char* base, std::size_t s) {
    if (ctrl_pages_lead) return base + s / per_chunk * kChunkBytes + s % per_chunk * kPage + 32;
    return base + s * stride + ctrl_at;
  };
  const Pages memory(flat              ? kTotalGroups * kLanes
                     : ctrl_pages_lead ? (segments / per_chunk + 1) * kChunkBytes
                                       : segments * stride);

  std::mt19937_64 rng(42);
  for (std::size_t s = 0; s < segments; ++s) {
    unsigned char* ctrl = ctrl_address(memory.data(), s);
    for (std::size_t byte = 0; byte < groups * kLanes; ++byte)
      ctrl[byte] = byte % kLanes < 3 ? kEmpty : static_cast<unsigned char>(rng() % 127);
  }
  // Every directory entry points to a segment, some segments under two (a local depth of 11).
  std::vector<DirectoryEntry> directory(std::size_t{1} << kDepth);
  for (std::size_t e = 0; e < directory.size(); ++e)
    directory[e] = {ctrl_address(memory.data(), e * segments >> kDepth),
                    static_cast<std::uint32_t>(groups), 0};

  const __m128i empty = _mm_set1_epi8(static_cast<char>(kEmpty));
  std::uint64_t i = 0;
  std::uint64_t sum = 0;
  for (auto _ : state) {
    const std::uint64_t h = hash_of(i++);
    const unsigned char* group;
    if (flat) {
      group = memory.data() + home_group(h, kTotalGroups) * kLanes;
    } else if (!by_directory) {
      const std::size_t segment = (h >> (64 - kDepth)) * segments >> kDepth;
      group = memory.data() + segment * stride + ctrl_at + home_group(h, groups) * kLanes;
    } else {
      const DirectoryEntry& entry = directory[h >> (64 - kDepth)];
      group = entry.ctrl + home_group(h, entry.groups) * kLanes;
    }
    const __m128i bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(group));
    const __m128i tag = _mm_set1_epi8(static_cast<char>(h >> 32 & 0x7F));
    const auto tags = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, tag)));
    const auto free = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, empty)));
    sum += tags ^ free;
  }
  benchmark::DoNotOptimize(sum);
}

BENCHMARK(bm_miss)
    ->Args({0, 0})
    ->Args({275, 1})
    ->Args({255, 1})
    ->Args({236, 1})
    ->Args({255, 0})
    ->Args({275, 2})
    ->Args({255, 2})
    ->Args({254, 3});

}  // namespace

BENCHMARK_MAIN();
