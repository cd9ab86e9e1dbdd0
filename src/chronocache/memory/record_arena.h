// RecordArena: variable-size records packed by size class into 64 KiB pages. A record costs its
// class's bytes and nothing more, is freed in O(1) without a heap call, and pages whose records
// are gone go back to the OS, so resident memory follows the live data.
//
//   chunk (4 MiB, aligned to 4 MiB, from mmap)
//   ┌──────────────┬──────────────┬──────────────┬─────┬──────────────┐
//   │ page 0:      │ page 1       │ page 2       │ ... │ page 63      │
//   │ PageInfo[64] │ class 40 B:  │ class 24 B:  │     │ (empty,      │
//   │ (~2.5 KiB    │ 1638 records │ 2730 records │     │  released)   │
//   │  touched)    │              │              │     │              │
//   └──────────────┴──────────────┴──────────────┴─────┴──────────────┘
//
// A record's page and its bookkeeping are found from its address alone: the chunk is the
// address rounded down to 4 MiB, the page its bits 16..21, and PageInfo[page] sits in the chunk's
// first page. So a record carries no header, and freeing needs no lookup structure. Classes are
// SizeClasses (4-byte steps from 8 to 256 bytes, then four per doubling to 16 KiB); larger records
// go to the heap (malloc), where the per-record overhead is small against their size.
//
// Inside a page, records are handed out by bumping an offset (so the untouched tail of a page
// costs no RSS), then from the page's list of freed records, threaded through the records
// themselves. A class allocates from the first page of its list of pages with room; a page that
// fills leaves the list, and rejoins it at the back when a record of it is freed, so allocation
// keeps filling the same pages while the rest drain. A page whose last record is freed becomes
// empty and can take any class (rebalancing between classes is therefore automatic): a few are
// kept resident for reuse (kSpareResidentPages), the rest are released with
// madvise(MADV_DONTNEED) and cost no RSS until reused.
//
// Compaction, for pages that stay partly empty (records of a class freed at random leave every
// page sparse, and no page empties). The arena cannot move a record, because only its owner
// knows where it is referenced. Instead plan_compaction() marks a class's sparsest pages
// "evacuating" (no allocation comes from them) when the class holds at least two pages more than
// its records need; the owner, on its regular walk over its records (the engine's expiry sweep),
// asks should_relocate() of each and moves those that say yes: allocate a copy, repoint, free
// the old. As a marked page's last record leaves, the page is released. This is memcached's slab
// rebalancer driven by the cache's own walk, in place of its separate crawler.
//
// Accounting is exact and O(1): record_bytes() is the sum of the class sizes of live packed
// records plus the heap chunks of large ones; resident_bytes() adds what the arena keeps around
// them (partly used pages, spare pages, chunk bookkeeping).
//
// Not thread-safe: one owner (a Cache, a shard) calls it, under whatever lock guards that owner.
// Under AddressSanitizer, freed records are poisoned, so a use after free is still reported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chronocache/memory/size_classes.h"

namespace chronocache {

class RecordArena {
 public:
  static constexpr std::size_t kPageBytes = std::size_t{64} * 1024;
  static constexpr std::size_t kChunkBytes = std::size_t{4} * 1024 * 1024;
  static constexpr std::size_t kPagesPerChunk = kChunkBytes / kPageBytes;
  // Empty pages kept resident (512 KiB): an arena that frees and refills at a steady rate reuses
  // them without a madvise and 16 page faults each time.
  static constexpr std::size_t kSpareResidentPages = 8;

  RecordArena() noexcept = default;
  ~RecordArena();
  RecordArena(const RecordArena&) = delete;
  RecordArena& operator=(const RecordArena&) = delete;

  // Room for a record of `bytes` (>= 1), 4-byte aligned (8-byte when its class is a multiple of
  // 8); nullptr when the OS refuses memory.
  void* allocate(std::size_t bytes) noexcept;
  // Frees a record; `bytes` is the size it was allocated with, or any size of the same class.
  void deallocate(void* record, std::size_t bytes) noexcept;

  // Bytes a record allocated with `bytes` may use (its class's size; for a heap record, what
  // malloc made usable). The owner may grow a record in place up to this.
  static std::size_t usable_bytes(const void* record, std::size_t bytes) noexcept;

  // ---- Packed records from their address alone ----------------------------------------------
  // A record of at most SizeClasses::kMaxClassBytes is packed in a page, which knows its class
  // and its arena, so a holder that keeps only the address (a one-pointer handle) can still
  // measure and free it. The arena's contract holds: call these under whatever serialises
  // that arena's other calls.
  static bool is_packed(std::size_t bytes) noexcept { return bytes <= SizeClasses::kMaxClassBytes; }
  // The bytes of the record's class: what it may use, and what it takes.
  static std::size_t packed_bytes(const void* record) noexcept;
  // Frees a packed record into the arena it came from.
  static void deallocate_packed(void* record) noexcept;
  // The arena a packed record came from.
  static RecordArena& owner_of(const void* record) noexcept;

  // ---- Compaction ------------------------------------------------------------------------------
  // Marks the sparsest pages of every class that holds at least two pages more than its records
  // need, releasing the marks of an earlier plan first. O(pages). Returns the records now on
  // marked pages: what the owner's next walk should relocate.
  std::size_t plan_compaction() noexcept;
  // Whether the record sits on a page being evacuated: the owner should move it.
  bool should_relocate(const void* record, std::size_t bytes) const noexcept;
  // should_relocate for a packed record, from its address alone.
  static bool wants_moved(const void* packed_record) noexcept;
  // Whether a record at `address`, packed here or not (a heap record, another arena's), sits on
  // a page of this arena being evacuated, judged without reading the record: only the arena's
  // chunk list and page bookkeeping, which stay in the cache. A walk that checks every record and
  // moves few (a compaction pass during a mass expiry) then misses the cache once per move
  // instead of once per record. O(log chunks).
  bool holds_evacuating(const void* address) const noexcept;

  // ---- Accounting (O(1)) -----------------------------------------------------------------------
  std::size_t records() const noexcept { return records_; }
  // Live records at their class sizes, plus heap records' chunks.
  std::size_t record_bytes() const noexcept { return record_bytes_; }
  // Pages holding records, spare resident pages, touched bookkeeping, heap records: what of the
  // process's RSS this arena accounts for (bytes of a page past its bump offset may not be
  // resident yet; counted anyway, as they will be).
  std::size_t resident_bytes() const noexcept;
  // Address space held (chunks mapped, heap records).
  std::size_t mapped_bytes() const noexcept { return chunks_ * kChunkBytes + heap_bytes_; }
  // Pages holding at least one packed record.
  std::size_t pages_in_use() const noexcept { return pages_in_use_; }
  // Bytes of those pages that hold no record: what compaction could give back.
  std::size_t waste_bytes() const noexcept {
    return pages_in_use_ * kPageBytes - (record_bytes_ - heap_bytes_);
  }
  // Packed records' bytes (record_bytes() without the heap records).
  std::size_t packed_record_bytes() const noexcept { return record_bytes_ - heap_bytes_; }

 private:
  struct PageInfo;
  struct Chunk;
  // A doubly linked list of pages (a class's pages with room, or empty pages).
  struct PageList {
    PageInfo* head = nullptr;
    PageInfo* tail = nullptr;
    std::size_t length = 0;
    void push_front(PageInfo* page) noexcept;
    void push_back(PageInfo* page) noexcept;
    void remove(PageInfo* page) noexcept;
  };
  struct ClassState {
    PageList with_room;   // partly used pages that allocation may take from
    PageList evacuating;  // marked by plan_compaction: no allocation, records leaving
    // The page of the last record freed, while it may still be allocated from: its free list
    // starts with that record, whose line is still in the cache (reused first, as a thread
    // cache would: arena_bench churn, median of 3x3 runs, 184-195 against 200-231 ns).
    PageInfo* recent = nullptr;
    std::size_t pages = 0;    // pages of this class, any state
    std::size_t records = 0;  // live records of this class
  };

  static PageInfo* page_info(const void* record) noexcept;
  void deallocate_packed_here(void* record, PageInfo* page) noexcept;
  static unsigned char* page_address(const PageInfo* page) noexcept;
  PageInfo* take_empty_page(std::size_t size_class) noexcept;
  void give_back_empty_page(PageInfo* page) noexcept;
  bool map_chunk() noexcept;
  void* allocate_on_heap(std::size_t bytes) noexcept;
  void deallocate_on_heap(void* record) noexcept;
  void release_marks(ClassState& state) noexcept;

  ClassState classes_[SizeClasses::kCount];
  PageList empty_resident_;  // empty pages whose memory is still resident (LIFO)
  PageList empty_released_;  // empty pages given back to the OS, or never touched
  Chunk* chunks_head_ = nullptr;
  std::size_t chunks_ = 0;
  std::vector<std::uintptr_t> chunk_addresses_;  // every chunk's address, sorted
  std::size_t evacuating_pages_ = 0;             // pages on the classes' evacuating lists
  std::size_t pages_in_use_ = 0;
  std::size_t records_ = 0;
  std::size_t record_bytes_ = 0;
  std::size_t heap_bytes_ = 0;
};

}  // namespace chronocache
