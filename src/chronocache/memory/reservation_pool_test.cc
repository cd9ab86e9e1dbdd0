#include "chronocache/memory/reservation_pool.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "testing/capped_address_space.h"

namespace chronocache {
namespace {

constexpr std::size_t kPage = ReservationPool::kPageBytes;
constexpr std::size_t kReservation = 14 * kPage;  // an int -> int table's segment

// How many of the `pages` pages from `block` the kernel holds resident (mincore).
std::size_t resident_pages(const void* block, std::size_t pages) {
  EXPECT_EQ(sysconf(_SC_PAGESIZE), static_cast<long>(kPage));
  std::vector<unsigned char> vec(pages);
  EXPECT_EQ(mincore(const_cast<void*>(block), pages * kPage, vec.data()), 0);
  std::size_t resident = 0;
  for (const unsigned char v : vec) resident += v & 1;
  return resident;
}

void* touched(ReservationPool& pool, std::size_t bytes) {
  void* block = pool.allocate(bytes);
  EXPECT_NE(block, nullptr);
  if (block != nullptr) std::memset(block, 0x5A, bytes);
  return block;
}

TEST(ReservationPool, BlocksArePageAlignedDistinctAndOwned) {
  ReservationPool pool(kReservation - 100);
  EXPECT_EQ(pool.reservation_bytes(), kReservation);
  std::set<std::uintptr_t> seen;
  std::vector<void*> blocks;
  // Three chunks' worth, so blocks come from several mappings.
  const std::size_t count = 3 * (ReservationPool::kChunkBytes / kReservation);
  for (std::size_t i = 0; i < count; ++i) {
    void* block = touched(pool, kReservation);
    ASSERT_NE(block, nullptr);
    const auto address = reinterpret_cast<std::uintptr_t>(block);
    EXPECT_EQ(address % kPage, 0u);
    EXPECT_TRUE(seen.insert(address).second);
    EXPECT_TRUE(pool.owns(block));
    EXPECT_TRUE(pool.owns(static_cast<unsigned char*>(block) + kReservation - 1));
    blocks.push_back(block);
  }
  EXPECT_EQ(pool.mapped_bytes(), 3 * ReservationPool::kChunkBytes);
  EXPECT_EQ(pool.resident_bytes(), count * kReservation);
  const auto heap = std::make_unique<int>(7);
  EXPECT_FALSE(pool.owns(heap.get()));
  for (void* block : blocks) pool.deallocate(block, kReservation);
}

// The slack a pool of 14-page reservations may keep while its blocks hold few pages.
constexpr std::size_t kSmallPoolSlackPages = 2 * (kReservation / kPage);

TEST(ReservationPool, ABlockOfAnySizeReusesTheReservationTheLastOneFreedWithItsPages) {
  ReservationPool pool(kReservation);
  void* keep = touched(pool, kPage);  // so the pool does not unmap when `first` goes
  void* first = touched(pool, 10 * kPage);
  pool.deallocate(first, 10 * kPage);
  void* second = touched(pool, 13 * kPage + 1);  // larger: the same reservation, more pages
  EXPECT_EQ(second, first);
  EXPECT_EQ(pool.resident_bytes(), (1 + 14) * kPage);
  pool.deallocate(second, 13 * kPage + 1);
  void* third = touched(pool, 3 * kPage);  // smaller: it keeps the rest as slack
  EXPECT_EQ(third, first);
  EXPECT_EQ(pool.block_page_bytes(), (1 + 3) * kPage);
  EXPECT_EQ(pool.resident_bytes(), (1 + 14) * kPage);
  EXPECT_EQ(resident_pages(third, 14), 14u);
  pool.deallocate(third, 3 * kPage);
  void* fourth = pool.allocate(14 * kPage);  // the slack serves the next larger block
  EXPECT_EQ(fourth, first);
  EXPECT_EQ(pool.resident_bytes(), (1 + 14) * kPage);
  EXPECT_EQ(pool.peak_resident_bytes(), (1 + 14) * kPage);
  pool.deallocate(fourth, 14 * kPage);
  pool.deallocate(keep, kPage);
}

TEST(ReservationPool, SlackPastItsBudgetGoesBackToTheOs) {
  ReservationPool pool(kReservation);
  constexpr std::size_t kBlocks = 10;
  std::vector<void*> blocks(kBlocks);
  for (void*& block : blocks) block = touched(pool, kReservation);
  for (std::size_t i = 1; i < kBlocks; ++i) pool.deallocate(blocks[i], kReservation);
  const std::size_t block_pages = kReservation / kPage;
  EXPECT_EQ(pool.block_page_bytes(), kReservation);
  EXPECT_LE(pool.resident_bytes(), kReservation + kSmallPoolSlackPages * kPage);
  std::size_t resident = 0;
  for (void* block : blocks) resident += resident_pages(block, block_pages);
  EXPECT_EQ(resident * kPage, pool.resident_bytes()) << "the pool's count is the kernel's";
  // A smaller block in a reservation with more pages gives them back when slack is spent.
  void* small = touched(pool, kPage);
  EXPECT_LE(pool.resident_bytes(), (block_pages + 1 + kSmallPoolSlackPages) * kPage);
  pool.deallocate(small, kPage);
  pool.deallocate(blocks[0], kReservation);
}

TEST(ReservationPool, TheLastBlockFreedUnmapsEveryChunk) {
  ReservationPool pool(kReservation);
  std::vector<void*> blocks(200);
  for (void*& block : blocks) block = touched(pool, kReservation);
  EXPECT_GT(pool.mapped_bytes(), ReservationPool::kChunkBytes);
  for (void* block : blocks) pool.deallocate(block, kReservation);
  EXPECT_EQ(pool.blocks(), 0u);
  EXPECT_EQ(pool.mapped_bytes(), 0u);
  EXPECT_EQ(pool.resident_bytes(), 0u);
  EXPECT_FALSE(pool.owns(blocks.front()));
  void* fresh = touched(pool, kPage);  // and it starts over
  EXPECT_TRUE(pool.owns(fresh));
  pool.deallocate(fresh, kPage);
}

TEST(ReservationPool, ABlockResizedInPlaceKeepsItsBytesAndMapsOnlyWhatItGains) {
  ReservationPool pool(kReservation);
  auto* block = static_cast<unsigned char*>(touched(pool, 8 * kPage));
  block[8 * kPage - 1] = 0x77;
  pool.resize(block, 8 * kPage, 12 * kPage + 1);
  EXPECT_EQ(block[0], 0x5A);
  EXPECT_EQ(block[8 * kPage - 1], 0x77);
  std::memset(block, 0x11, 12 * kPage + 1);  // the whole new size is usable
  EXPECT_EQ(pool.blocks(), 1u);
  EXPECT_EQ(pool.block_page_bytes(), 13 * kPage);
  EXPECT_EQ(pool.peak_block_page_bytes(), 13 * kPage);
  EXPECT_EQ(pool.resident_bytes(), 13 * kPage);
  EXPECT_EQ(resident_pages(block, 14), 13u);
  // Smaller: the pages past it are slack the block's next growth uses without mapping any.
  pool.resize(block, 12 * kPage + 1, 2 * kPage);
  EXPECT_EQ(block[2 * kPage - 1], 0x11);
  EXPECT_EQ(pool.block_page_bytes(), 2 * kPage);
  EXPECT_EQ(pool.resident_bytes(), 13 * kPage);
  pool.resize(block, 2 * kPage, kReservation);
  EXPECT_EQ(pool.resident_bytes(), kReservation);
  EXPECT_EQ(resident_pages(block, 14), 14u);
  pool.deallocate(block, kReservation);
  EXPECT_EQ(pool.mapped_bytes(), 0u);
}

TEST(ReservationPool, SlackLeftByAShrunkBlockPastItsBudgetGoesBack) {
  ReservationPool pool(kReservation);
  constexpr std::size_t kBlocks = 10;
  std::vector<void*> blocks(kBlocks);
  for (void*& block : blocks) block = touched(pool, kReservation);
  for (void* block : blocks) pool.resize(block, kReservation, kPage);
  EXPECT_EQ(pool.block_page_bytes(), kBlocks * kPage);
  EXPECT_LE(pool.resident_bytes(), (kBlocks + kSmallPoolSlackPages) * kPage);
  std::size_t resident = 0;
  for (void* block : blocks) resident += resident_pages(block, kReservation / kPage);
  EXPECT_EQ(resident * kPage, pool.resident_bytes()) << "the pool's count is the kernel's";
  for (void* block : blocks) pool.deallocate(block, kPage);
}

TEST(ReservationPool, ReleaseAllFreesEveryBlockAndUnmapsAtOnce) {
  ReservationPool pool(kReservation);
  std::vector<void*> blocks(100);
  for (void*& block : blocks) block = touched(pool, kReservation);
  const std::size_t peak = pool.peak_block_page_bytes();
  pool.release_all();
  EXPECT_EQ(pool.blocks(), 0u);
  EXPECT_EQ(pool.block_page_bytes(), 0u);
  EXPECT_EQ(pool.resident_bytes(), 0u);
  EXPECT_EQ(pool.mapped_bytes(), 0u);
  EXPECT_EQ(pool.peak_block_page_bytes(), peak);
  EXPECT_FALSE(pool.owns(blocks.front()));
  void* fresh = touched(pool, kPage);  // and it starts over
  EXPECT_TRUE(pool.owns(fresh));
  EXPECT_EQ(pool.blocks(), 1u);
  pool.deallocate(fresh, kPage);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// Out of address space, allocate says so with nullptr (the table then uses the heap).
TEST(ReservationPool, RefusedMemoryIsANullBlockNotACrash) {
  const int code = testing::exit_code_with_capped_address_space(256 * 1024 * 1024, [] {
    ReservationPool pool(kReservation);
    void* last = nullptr;
    for (std::size_t blocks = 0;; ++blocks) {
      void* block = pool.allocate(kPage);
      if (block == nullptr) break;
      last = block;
      if (blocks > 1'000'000) return 3;  // 56 GiB of reservations: the cap did not hold
    }
    if (last == nullptr) return 4;
    pool.deallocate(last, kPage);
    return pool.allocate(kPage) == last ? 0 : 5;  // the freed reservation is reused
  });
  EXPECT_EQ(code, 0);
}
#endif

#if defined(__SANITIZE_ADDRESS__)
// Past the block and while freed, a reservation is poisoned: an overrun of a segment, or a use
// after it was freed, is still caught.
TEST(ReservationPoolDeathTest, AReadPastTheBlockIsReported) {
  ReservationPool pool(kReservation);
  auto* block = static_cast<volatile unsigned char*>(pool.allocate(100));
  EXPECT_DEATH(static_cast<void>(block[100]), "use-after-poison");
  pool.deallocate(const_cast<unsigned char*>(block), 100);
}

TEST(ReservationPoolDeathTest, AReadPastABlockShrunkInPlaceIsReported) {
  ReservationPool pool(kReservation);
  auto* block = static_cast<volatile unsigned char*>(pool.allocate(3 * kPage));
  pool.resize(const_cast<unsigned char*>(block), 3 * kPage, 100);
  EXPECT_DEATH(static_cast<void>(block[100]), "use-after-poison");
  pool.resize(const_cast<unsigned char*>(block), 100, 3 * kPage);
  block[3 * kPage - 1] = 1;  // grown again: usable
  pool.deallocate(const_cast<unsigned char*>(block), 3 * kPage);
}

TEST(ReservationPoolDeathTest, AReadOfAFreedBlockIsReported) {
  ReservationPool pool(kReservation);
  void* keep = pool.allocate(kPage);
  auto* block = static_cast<volatile unsigned char*>(pool.allocate(100));
  pool.deallocate(const_cast<unsigned char*>(block), 100);
  EXPECT_DEATH(static_cast<void>(block[10]), "use-after-poison");
  pool.deallocate(keep, kPage);
}
#endif

}  // namespace
}  // namespace chronocache
