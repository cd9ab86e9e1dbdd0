// ReservationPool: equal-size reservations of address space, carved from chunks the pool maps
// itself, for blocks whose size changes every time they are replaced (the hash table's segments).
//
//   chunk (2 MiB of address space, mmap)
//   ┌───────────────┬───────────────┬─────┬───────────────┬──────┐
//   │ reservation 0 │ reservation 1 │ ... │ reservation n │ tail │   n = 2 MiB / reservation
//   │ ██████░░░░░░░ │ █████████░░░░ │     │ ░░░░░░░░░░░░░ │      │   █ pages touched (resident)
//   └───────────────┴───────────────┴─────┴───────────────┴──────┘
//
// Why not the heap: a table that grows replaces each segment by a larger one and frees the old.
// Under a uniform hash every segment grows at the same pace, so glibc's free chunks pile up in
// the sizes that no segment needs until the next round: at the end of a 10 M-entry fill, 25.7 MiB
// of 150 were free inside the heap, and RSS ran 19 % above it (docs/design/memory.md). Here any
// freed reservation serves any segment size, so the next growth step reuses the one the last step
// freed, with its pages still resident: the pool holds about one spare reservation, not a pile.
//
// A block may also change size in place (resize), up to the reservation: the table rebuilds a
// segment that way, so a growth step maps only the pages it adds.
//
// Pages are resident only once touched. allocate(bytes) assumes the caller touches [0, bytes).
// A reservation keeps the pages its blocks touched: reused for a smaller block, it keeps the
// rest as slack, which the next, larger block in it uses without a page fault. Slack (pages
// beyond the blocks', in use or freed) is bounded at 1/32 of the blocks' pages (or two full
// reservations, for a small pool); past that, a freed reservation, or the part of a reused one
// that its block does not need, gives its pages back with madvise(MADV_DONTNEED). Why keep slack:
// a table that grows needs a little more than it freed last, and a split frees its largest
// segment and takes two smaller ones; giving back every page not needed at once made a 10 M-entry
// fill fault in 47 % more pages than the heap did, and make 8 200 madvise calls. Freed
// reservations are reused last freed first (their lines are the likeliest in the cache). When
// the last block is freed every chunk is unmapped.
//
// Not thread-safe: one owner (a table) calls it under whatever guards that owner. Under
// AddressSanitizer, a reservation is poisoned past the block it holds, and whole while free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chronocache {

class ReservationPool {
 public:
  static constexpr std::size_t kPageBytes = 4096;
  static constexpr std::size_t kChunkBytes = std::size_t{2} * 1024 * 1024;

  // Blocks of up to `reservation_bytes` (rounded up to whole pages; at most a chunk).
  explicit ReservationPool(std::size_t reservation_bytes) noexcept;
  ~ReservationPool();
  ReservationPool(const ReservationPool&) = delete;
  ReservationPool& operator=(const ReservationPool&) = delete;

  // A page-aligned block of `bytes` (1 .. reservation_bytes()), or nullptr when no chunk can be
  // mapped (the caller falls back to the heap). Its contents are unspecified.
  void* allocate(std::size_t bytes) noexcept;
  // Frees a block; `bytes` is what it was allocated with.
  void deallocate(void* block, std::size_t bytes) noexcept;
  // Changes a block's size in place (1 .. reservation_bytes()): the pages it gains are mapped,
  // and the pages it no longer needs become slack. Contents up to the smaller size are kept.
  void resize(void* block, std::size_t old_bytes, std::size_t new_bytes) noexcept;
  // Frees every block at once: the chunks go back whole, with no madvise for each block.
  void release_all() noexcept;
  // Whether `p` lies in one of this pool's chunks (a block from allocate).
  bool owns(const void* p) const noexcept;

  std::size_t reservation_bytes() const noexcept { return reservation_bytes_; }
  // The pages of the blocks in use, in bytes: what the blocks cost, whatever came before them.
  std::size_t block_page_bytes() const noexcept { return block_pages_ * kPageBytes; }
  std::size_t peak_block_page_bytes() const noexcept { return peak_block_pages_ * kPageBytes; }
  // Those and the slack: what the pool adds to RSS, and its peak.
  std::size_t resident_bytes() const noexcept { return resident_pages_ * kPageBytes; }
  std::size_t peak_resident_bytes() const noexcept { return peak_resident_pages_ * kPageBytes; }
  std::size_t blocks() const noexcept { return live_blocks_; }
  std::size_t mapped_bytes() const noexcept { return chunks_.size() * kChunkBytes; }

  static constexpr std::size_t pages_for(std::size_t bytes) noexcept {
    return (bytes + kPageBytes - 1) / kPageBytes;
  }

 private:
  struct Chunk {
    unsigned char* base;
    std::uint32_t first;  // number of its first reservation
  };

  const Chunk* chunk_of(const void* p) const noexcept;        // the chunk `p` lies in, or nullptr
  std::uint32_t number_of(const void* block) const noexcept;  // a block's reservation
  void populate(std::uint32_t number, std::size_t pages) noexcept;  // its first `pages` resident
  bool take_reservation(std::uint32_t& number) noexcept;  // false when no chunk can be mapped
  void release_pages(std::uint32_t number, std::size_t keep_pages) noexcept;
  std::size_t slack_budget_pages() const noexcept;
  void unmap_all() noexcept;

  std::size_t reservation_bytes_;
  std::size_t per_chunk_;
  std::vector<Chunk> chunks_;            // sorted by address
  std::vector<unsigned char*> starts_;   // reservation number -> address
  std::vector<std::uint16_t> resident_;  // reservation number -> pages resident
  std::vector<std::uint32_t> free_;      // freed reservations, last freed at the back
  std::uint32_t carved_ = 0;             // reservations handed out at least once
  std::size_t live_blocks_ = 0;
  std::size_t block_pages_ = 0;  // pages_for() of each block in use
  std::size_t peak_block_pages_ = 0;
  std::size_t resident_pages_ = 0;  // the sum of resident_
  std::size_t peak_resident_pages_ = 0;
};

}  // namespace chronocache
