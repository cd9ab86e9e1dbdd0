#include "chronocache/memory/record_arena.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <unordered_map>
#include <vector>

#include "chronocache/memory/size_classes.h"
#include "testing/capped_address_space.h"

namespace chronocache {
namespace {

// ---- SizeClasses --------------------------------------------------------------------------------

TEST(SizeClasses, EachSizeTakesTheSmallestClassThatHoldsIt) {
  for (std::size_t n = 1; n <= SizeClasses::kMaxClassBytes; ++n) {
    const std::size_t c = SizeClasses::class_of(n);
    ASSERT_LT(c, SizeClasses::kCount) << n;
    ASSERT_GE(SizeClasses::bytes_of(c), n) << n;
    if (c > 0) {
      ASSERT_LT(SizeClasses::bytes_of(c - 1), n) << n;
    }
  }
}

TEST(SizeClasses, RoundingIsAtMostThreeBytesSmallAndAFifthLarge) {
  for (std::size_t n = 1; n <= SizeClasses::kMaxClassBytes; ++n) {
    const std::size_t waste = SizeClasses::rounded(n) - n;
    if (n <= SizeClasses::kSmallest) {
      ASSERT_EQ(SizeClasses::rounded(n), SizeClasses::kSmallest) << n;
    } else if (n <= SizeClasses::kSmallLimit) {
      ASSERT_LE(waste, 3u) << n;
    } else {
      ASSERT_LT(waste * 5, SizeClasses::rounded(n)) << n;  // < 20 % of the class
    }
  }
}

TEST(SizeClasses, ClassesGrowAndKeepRecordsFourByteAligned) {
  for (std::size_t c = 0; c < SizeClasses::kCount; ++c) {
    EXPECT_EQ(SizeClasses::bytes_of(c) % 4, 0u) << c;
    EXPECT_GE(SizeClasses::bytes_of(c), sizeof(void*)) << c;
    if (c > 0) {
      EXPECT_GT(SizeClasses::bytes_of(c), SizeClasses::bytes_of(c - 1)) << c;
    }
  }
  EXPECT_EQ(SizeClasses::bytes_of(SizeClasses::kCount - 1), SizeClasses::kMaxClassBytes);
}

// ---- RecordArena --------------------------------------------------------------------------------

// Live records and what was written into them, to check that no two records overlap and that
// the arena's counts are exact.
struct Model {
  struct Record {
    std::size_t bytes;
    unsigned char fill;
  };
  std::unordered_map<void*, Record> live;
  std::size_t footprint = 0;

  void* add(RecordArena& arena, std::size_t bytes, unsigned char fill) {
    void* p = arena.allocate(bytes);
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4, 0u);
    std::memset(p, fill, bytes);
    EXPECT_TRUE(live.emplace(p, Record{bytes, fill}).second) << "handed out twice";
    footprint += bytes > SizeClasses::kMaxClassBytes ? 0 : SizeClasses::rounded(bytes);
    return p;
  }
  void remove(RecordArena& arena, void* p) {
    const Record r = live.at(p);
    if (r.bytes <= SizeClasses::kMaxClassBytes) footprint -= SizeClasses::rounded(r.bytes);
    arena.deallocate(p, r.bytes);
    live.erase(p);
  }
  // Every record still holds what was written into it.
  void check(const RecordArena& arena) const {
    for (const auto& [p, r] : live) {
      const auto* bytes = static_cast<const unsigned char*>(p);
      for (std::size_t i = 0; i < r.bytes; ++i) ASSERT_EQ(bytes[i], r.fill) << "overwritten";
    }
    EXPECT_EQ(arena.records(), live.size());
  }
};

TEST(RecordArena, RandomAllocationsNeverOverlapAndAreCountedExactly) {
  RecordArena arena;
  Model model;
  std::mt19937_64 rng(7);
  std::vector<void*> order;
  for (int step = 0; step < 200'000; ++step) {
    if (order.empty() || rng() % 8 < 5) {
      // Mostly small records, as a cache holds; some of every class.
      const std::size_t bytes = rng() % 4 != 0 ? 1 + rng() % 200 : 1 + rng() % 16'384;
      order.push_back(model.add(arena, bytes, static_cast<unsigned char>(rng())));
    } else {
      const std::size_t i = rng() % order.size();
      model.remove(arena, order[i]);
      order[i] = order.back();
      order.pop_back();
    }
  }
  model.check(arena);
  EXPECT_EQ(arena.record_bytes(), model.footprint);
  for (void* p : order) model.remove(arena, p);
  EXPECT_EQ(arena.records(), 0u);
  EXPECT_EQ(arena.record_bytes(), 0u);
  EXPECT_EQ(arena.pages_in_use(), 0u);
}

TEST(RecordArena, RecordsPastTheLargestClassGoToTheHeapAndAreCounted) {
  RecordArena arena;
  void* p = arena.allocate(100'000);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 100'000);
  EXPECT_GE(arena.record_bytes(), 100'000u);
  EXPECT_GE(RecordArena::usable_bytes(p, 100'000), 100'000u);
  EXPECT_EQ(arena.pages_in_use(), 0u);
  EXPECT_FALSE(arena.should_relocate(p, 100'000));
  arena.deallocate(p, 100'000);
  EXPECT_EQ(arena.record_bytes(), 0u);
  EXPECT_EQ(arena.records(), 0u);
}

// Arena pages holding `records` (one record per page) of which the kernel reports any part
// resident (mincore).
std::size_t resident_pages(const std::vector<void*>& records) {
  constexpr std::size_t kOsPage = 4096;
  EXPECT_EQ(sysconf(_SC_PAGESIZE), static_cast<long>(kOsPage));
  std::size_t resident = 0;
  for (void* p : records) {
    // The record's page, reached from the record's pointer (no integer-to-pointer cast).
    unsigned char* page = static_cast<unsigned char*>(p) -
                          (reinterpret_cast<std::uintptr_t>(p) & (RecordArena::kPageBytes - 1));
    unsigned char vec[RecordArena::kPageBytes / kOsPage] = {};
    EXPECT_EQ(mincore(page, RecordArena::kPageBytes, vec), 0);
    bool any = false;
    for (const unsigned char v : vec) any = any || (v & 1) != 0;
    resident += any ? 1 : 0;
  }
  return resident;
}

TEST(RecordArena, EmptiedPagesGoBackToTheOsBeyondAFewSpares) {
  RecordArena arena;
  // 100 pages of 40-byte records, one record kept per page to learn the page.
  const std::size_t per_page = RecordArena::kPageBytes / 40;
  std::vector<void*> all;
  std::vector<void*> first_of_page;
  for (std::size_t i = 0; i < 100 * per_page; ++i) {
    void* p = arena.allocate(40);
    ASSERT_NE(p, nullptr);
    std::memset(p, 0xAB, 40);
    all.push_back(p);
    if (i % per_page == 0) first_of_page.push_back(p);
  }
  EXPECT_EQ(arena.pages_in_use(), 100u);
  EXPECT_EQ(resident_pages(first_of_page), 100u);
  const std::size_t resident_full = arena.resident_bytes();
  for (void* p : all) arena.deallocate(p, 40);
  EXPECT_EQ(arena.pages_in_use(), 0u);
  EXPECT_LE(resident_pages(first_of_page), RecordArena::kSpareResidentPages);
  EXPECT_LT(arena.resident_bytes(), resident_full / 10);
  EXPECT_LE(arena.resident_bytes(),
            RecordArena::kSpareResidentPages * RecordArena::kPageBytes + 4096 * 2);
}

TEST(RecordArena, PagesEmptiedByOneClassServeAnother) {
  RecordArena arena;
  std::vector<void*> small;
  small.reserve(200'000);
  for (int i = 0; i < 200'000; ++i) small.push_back(arena.allocate(24));
  const std::size_t mapped = arena.mapped_bytes();
  for (void* p : small) arena.deallocate(p, 24);
  // The same bytes again, in a class four times the size: no new chunk.
  std::vector<void*> large;
  large.reserve(50'000);
  for (int i = 0; i < 50'000; ++i) large.push_back(arena.allocate(96));
  EXPECT_EQ(arena.mapped_bytes(), mapped);
  for (void* p : large) arena.deallocate(p, 96);
}

TEST(RecordArena, CompactionEmptiesSparsePagesThroughTheOwnersMoves) {
  RecordArena arena;
  Model model;
  std::mt19937_64 rng(11);
  const std::size_t per_page = RecordArena::kPageBytes / 40;
  std::vector<void*> records;
  for (std::size_t i = 0; i < 40 * per_page; ++i)
    records.push_back(model.add(arena, 40, static_cast<unsigned char>(i)));
  // Free three in four at random: every page stays a quarter full, none empties.
  std::vector<void*> kept;
  for (void* p : records) {
    if (rng() % 4 == 0)
      kept.push_back(p);
    else
      model.remove(arena, p);
  }
  EXPECT_EQ(arena.pages_in_use(), 40u);
  for (void* p : kept) EXPECT_FALSE(arena.holds_evacuating(p)) << "no plan, nothing to move";
  EXPECT_GT(arena.plan_compaction(), 0u);
  // From the address alone, the same answer as from the record; a heap record and memory that
  // is not the arena's are never on its pages.
  std::size_t to_move = 0;
  for (void* p : kept) {
    EXPECT_EQ(arena.holds_evacuating(p), arena.should_relocate(p, 40));
    to_move += arena.holds_evacuating(p) ? 1 : 0;
  }
  EXPECT_GT(to_move, 0u);
  void* heap_record = arena.allocate(100'000);
  EXPECT_FALSE(arena.holds_evacuating(heap_record));
  arena.deallocate(heap_record, 100'000);
  RecordArena other;
  void* elsewhere = other.allocate(40);
  EXPECT_FALSE(arena.holds_evacuating(elsewhere));
  other.deallocate(elsewhere, 40);

  // The owner's walk: move what the arena asks for, as an engine's sweep would.
  for (int round = 0; round < 3; ++round) {
    for (void*& p : kept) {
      if (!arena.holds_evacuating(p)) continue;
      const unsigned char fill = model.live.at(p).fill;
      void* moved = model.add(arena, 40, fill);
      model.remove(arena, p);
      p = moved;
    }
    if (arena.plan_compaction() == 0) break;
  }
  model.check(arena);
  const std::size_t needed = (kept.size() + per_page - 1) / per_page;
  EXPECT_LE(arena.pages_in_use(), needed + 2);
  for (void* p : kept) EXPECT_FALSE(arena.should_relocate(p, 40));
  for (void* p : kept) EXPECT_FALSE(arena.holds_evacuating(p));
  for (void* p : kept) model.remove(arena, p);
  EXPECT_EQ(arena.pages_in_use(), 0u);
}

TEST(RecordArena, ATightClassIsLeftAlone) {
  RecordArena arena;
  std::vector<void*> records;
  records.reserve(100'000);
  for (int i = 0; i < 100'000; ++i) records.push_back(arena.allocate(40));
  EXPECT_EQ(arena.plan_compaction(), 0u);
  for (void* p : records) EXPECT_FALSE(arena.should_relocate(p, 40));
  for (void* p : records) arena.deallocate(p, 40);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// Out of address space, the arena says so with nullptr and stays usable. In a child process,
// whose address space is capped (sanitizers reserve terabytes of shadow and cannot run capped).
TEST(RecordArena, RefusedMemoryIsANullRecordNotACrash) {
  const int code = testing::exit_code_with_capped_address_space(256 * 1024 * 1024, [] {
    RecordArena arena;
    void* last = nullptr;
    std::size_t allocated = 0;
    for (;;) {
      void* p = arena.allocate(4096);
      if (p == nullptr) break;
      last = p;
      ++allocated;
      if (allocated > 1'000'000) return 3;  // 4 GiB past a 256 MiB cap: the cap did not hold
    }
    if (last == nullptr) return 4;
    arena.deallocate(last, 4096);
    return arena.allocate(4096) != nullptr ? 0 : 5;  // the freed room is reused
  });
  EXPECT_EQ(code, 0);
}
#endif

#if defined(__SANITIZE_ADDRESS__)
// Freed records are poisoned: a use after free inside the arena is still caught.
TEST(RecordArenaDeathTest, AReadOfAFreedRecordIsReported) {
  RecordArena arena;
  auto* p = static_cast<volatile unsigned char*>(arena.allocate(40));
  arena.deallocate(const_cast<unsigned char*>(p), 40);
  EXPECT_DEATH(static_cast<void>(p[20]), "use-after-poison");
}
#endif

}  // namespace
}  // namespace chronocache
