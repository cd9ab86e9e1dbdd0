// group_layout_bench: the memory access pattern of a table probe, in two layouts, without the
// table around it. It asks whether keeping a segment's control bytes apart from its slots
// (boost::unordered_flat_map's layout: 16 bytes of metadata per group in an array of their own)
// would pay for SegmentedTable, whose groups interleave them (16 control bytes, then 16 slots of
// 12 bytes). At 10 M entries the control bytes alone take ~13 MB and fit a 32 MB L3, where the
// interleaved groups spread them over ~170 MB. The pattern's gain did not survive the table:
// the split layout, tried there, cost every lookup 7 instructions and no insert got faster
// beyond the noise (docs/design/memory.md, "Next", has both sets of figures).
//
//   bm_insert/<layout>/<groups>   load a random group's control bytes, claim its first empty lane:
//                                 write the control byte and a 12-byte slot
//   bm_read/<layout>/<groups>     load a random group's control bytes, match a tag, read the
//                                 matching slot's value
// Layouts: interleaved (today's groups), split (control bytes in one array, slots in another);
// "_prefetch": the group's slot lines are asked for as its control bytes load, as find does
// today (find_for_insert does not: it measured no gain). Groups: 8 192 (1.7 MB, in the cache)
// and 800 000 (10 M entries at 0.78, ~170 MB).
#include <benchmark/benchmark.h>
#include <emmintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "chronocache/base/hash.h"

namespace {

constexpr std::size_t kLanes = 16;
constexpr std::size_t kSlotBytes = 12;
constexpr std::size_t kSlotsBytes = kLanes * kSlotBytes;   // 192
constexpr std::size_t kGroupBytes = kLanes + kSlotsBytes;  // 208, as int -> int
constexpr unsigned char kEmpty = 0x80;

enum class Layout { kInterleaved, kSplit };
enum class SlotPrefetch { kNo, kYes };

// The group and tag of operation i: the table's own mix, and its multiply-shift range
// reduction.
struct Probe {
  std::size_t group;
  unsigned char tag;
};
Probe probe_of(std::uint64_t i, std::size_t groups) {
  const std::uint64_t h =
      chronocache::detail::mul_fold(i ^ chronocache::detail::kMix0, chronocache::detail::kMix1);
  return {static_cast<std::size_t>((h & 0xFFFF'FFFFu) * groups >> 32),
          static_cast<unsigned char>(h >> 40 & (kLanes - 1))};
}

void prefetch_lines(const unsigned char* first, std::size_t bytes) {
  for (std::size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(first + offset);
  __builtin_prefetch(first + bytes - 1);
}

// Where a group's control bytes and slots lie.
class Groups {
 public:
  Groups(Layout layout, SlotPrefetch prefetch, std::size_t groups, unsigned char fill)
      : layout_(layout),
        prefetch_(prefetch),
        groups_(groups),
        ctrl_(layout == Layout::kInterleaved ? 0 : groups * kLanes, fill),
        bytes_(layout == Layout::kInterleaved ? groups * kGroupBytes : groups * kSlotsBytes, fill) {
  }
  unsigned char* ctrl(std::size_t g) {
    return layout_ == Layout::kInterleaved ? bytes_.data() + g * kGroupBytes
                                           : ctrl_.data() + g * kLanes;
  }
  unsigned char* slots(std::size_t g) {
    return layout_ == Layout::kInterleaved ? bytes_.data() + g * kGroupBytes + kLanes
                                           : bytes_.data() + g * kSlotsBytes;
  }
  // Asks for group g's slot lines before its control bytes are read, if this variant does.
  void prefetch_slots(std::size_t g) {
    if (prefetch_ == SlotPrefetch::kYes) prefetch_lines(slots(g), kSlotsBytes);
  }
  // Labels lane l of every group with tag l, so every read matches one lane.
  void label_every_lane() {
    for (std::size_t g = 0; g < groups_; ++g)
      for (std::size_t lane = 0; lane < kLanes; ++lane)
        ctrl(g)[lane] = static_cast<unsigned char>(lane);
  }

 private:
  Layout layout_;
  SlotPrefetch prefetch_;
  std::size_t groups_;
  std::vector<unsigned char> ctrl_;
  std::vector<unsigned char> bytes_;  // the groups (interleaved) or the slots (split)
};

void bm_insert(benchmark::State& state, Layout layout, SlotPrefetch prefetch) {
  const auto groups = static_cast<std::size_t>(state.range(0));
  Groups table(layout, prefetch, groups, kEmpty);
  std::uint64_t i = 0;
  for (auto _ : state) {
    const Probe p = probe_of(i, groups);
    table.prefetch_slots(p.group);
    unsigned char* ctrl = table.ctrl(p.group);
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ctrl));
    const unsigned empty = static_cast<unsigned>(_mm_movemask_epi8(bytes));
    // A full group takes lane 0 again: the pattern, not the table's contents, is measured.
    const unsigned lane = empty != 0 ? static_cast<unsigned>(__builtin_ctz(empty)) : 0;
    ctrl[lane] = p.tag;
    std::memcpy(table.slots(p.group) + lane * kSlotBytes, &i, sizeof(i));
    ++i;
  }
}

void bm_read(benchmark::State& state, Layout layout, SlotPrefetch prefetch) {
  const auto groups = static_cast<std::size_t>(state.range(0));
  Groups table(layout, prefetch, groups, 0);
  table.label_every_lane();
  std::uint64_t i = 0;
  std::uint64_t sum = 0;
  for (auto _ : state) {
    const Probe p = probe_of(i++, groups);
    table.prefetch_slots(p.group);
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table.ctrl(p.group)));
    const unsigned match = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(static_cast<char>(p.tag)))));
    if (match != 0) {
      std::uint32_t value = 0;
      std::memcpy(&value,
                  table.slots(p.group) + static_cast<unsigned>(__builtin_ctz(match)) * kSlotBytes,
                  sizeof(value));
      sum += value;
    }
  }
  benchmark::DoNotOptimize(sum);
}

void sizes(benchmark::internal::Benchmark* b) { b->Arg(8192)->Arg(800'000); }

BENCHMARK_CAPTURE(bm_insert, interleaved, Layout::kInterleaved, SlotPrefetch::kNo)->Apply(sizes);
BENCHMARK_CAPTURE(bm_insert, split, Layout::kSplit, SlotPrefetch::kNo)->Apply(sizes);
BENCHMARK_CAPTURE(bm_insert, split_prefetch, Layout::kSplit, SlotPrefetch::kYes)->Apply(sizes);
BENCHMARK_CAPTURE(bm_read, interleaved_prefetch, Layout::kInterleaved, SlotPrefetch::kYes)
    ->Apply(sizes);
BENCHMARK_CAPTURE(bm_read, split, Layout::kSplit, SlotPrefetch::kNo)->Apply(sizes);
BENCHMARK_CAPTURE(bm_read, split_prefetch, Layout::kSplit, SlotPrefetch::kYes)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
