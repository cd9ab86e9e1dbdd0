#include "chronocache/memory/record_arena.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>

#include "chronocache/base/assert.h"
#include "chronocache/memory/asan_poison.h"

namespace chronocache {

struct RecordArena::PageInfo {
  PageInfo* prev = nullptr;
  PageInfo* next = nullptr;
  void* free_records = nullptr;  // freed records, each holding the next one's address
  std::uint32_t bump = 0;        // bytes handed out by bumping
  std::uint32_t live = 0;        // records on this page
  std::uint16_t size_class = 0;
  bool in_use = false;      // belongs to a class (else on one of the empty lists)
  bool has_room = false;    // on its class's with_room list
  bool evacuating = false;  // on its class's evacuating list
};

// A chunk's first page: the bookkeeping of its pages. Entry 0 describes the bookkeeping page
// itself and is never handed out.
struct RecordArena::Chunk {
  PageInfo pages[kPagesPerChunk];
  Chunk* next = nullptr;
  RecordArena* owner = nullptr;
};

namespace {
// Bytes of a chunk's first page that its bookkeeping touches.
constexpr std::size_t kBookkeepingBytes = 4096;
// The freed-record list is threaded through the records: the smallest class must hold a pointer.
static_assert(SizeClasses::bytes_of(0) >= sizeof(void*));
static_assert(SizeClasses::kMaxClassBytes <= RecordArena::kPageBytes);

// The start of the chunk `p` lies in (chunks are aligned to their size), reached from `p` itself:
// pointer arithmetic keeps its provenance, which a cast from an integer would lose.
unsigned char* chunk_start(const void* p) noexcept {
  auto* bytes = static_cast<unsigned char*>(const_cast<void*>(p));
  return bytes - (reinterpret_cast<std::uintptr_t>(p) & (RecordArena::kChunkBytes - 1));
}
}  // namespace

// ---- Lists --------------------------------------------------------------------------------------

void RecordArena::PageList::push_front(PageInfo* page) noexcept {
  page->prev = nullptr;
  page->next = head;
  if (head != nullptr) head->prev = page;
  head = page;
  if (tail == nullptr) tail = page;
  ++length;
}

void RecordArena::PageList::push_back(PageInfo* page) noexcept {
  page->next = nullptr;
  page->prev = tail;
  if (tail != nullptr) tail->next = page;
  tail = page;
  if (head == nullptr) head = page;
  ++length;
}

void RecordArena::PageList::remove(PageInfo* page) noexcept {
  (page->prev != nullptr ? page->prev->next : head) = page->next;
  (page->next != nullptr ? page->next->prev : tail) = page->prev;
  page->prev = page->next = nullptr;
  --length;
}

// ---- Addresses ----------------------------------------------------------------------------------

RecordArena::PageInfo* RecordArena::page_info(const void* record) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(record);
  auto* chunk = reinterpret_cast<Chunk*>(chunk_start(record));
  return &chunk->pages[(address / kPageBytes) % kPagesPerChunk];
}

RecordArena& RecordArena::owner_of(const void* record) noexcept {
  return *reinterpret_cast<const Chunk*>(chunk_start(record))->owner;
}

unsigned char* RecordArena::page_address(const PageInfo* page) noexcept {
  unsigned char* chunk = chunk_start(page);
  const std::size_t index = (reinterpret_cast<std::uintptr_t>(page) -
                             reinterpret_cast<std::uintptr_t>(chunk) - offsetof(Chunk, pages)) /
                            sizeof(PageInfo);
  return chunk + index * kPageBytes;
}

// ---- Records ------------------------------------------------------------------------------------

void* RecordArena::allocate(std::size_t bytes) noexcept {
  if (bytes > SizeClasses::kMaxClassBytes) return allocate_on_heap(bytes);
  const std::size_t c = SizeClasses::class_of(bytes);
  const std::size_t size = SizeClasses::bytes_of(c);
  ClassState& state = classes_[c];
  PageInfo* page = state.recent != nullptr && state.recent->free_records != nullptr
                       ? state.recent
                       : state.with_room.head;
  if (page == nullptr) {
    page = take_empty_page(c);
    if (page == nullptr) return nullptr;
  }
  void* record;
  if (page->free_records != nullptr) {
    record = page->free_records;
    detail::asan_unpoison(record, size);
    std::memcpy(&page->free_records, record, sizeof(void*));  // 4-byte aligned: no void** load
  } else {
    record = page_address(page) + page->bump;
    detail::asan_unpoison(record, size);
    page->bump += static_cast<std::uint32_t>(size);
  }
  ++page->live;
  if (page->free_records == nullptr && page->bump + size > kPageBytes) {
    state.with_room.remove(page);  // full: it rejoins at the back when a record leaves
    page->has_room = false;
  }
  ++state.records;
  ++records_;
  record_bytes_ += size;
  return record;
}

void RecordArena::deallocate(void* record, std::size_t bytes) noexcept {
  if (bytes > SizeClasses::kMaxClassBytes) return deallocate_on_heap(record);
  PageInfo* page = page_info(record);
  CC_ASSERT(&owner_of(record) == this && page->size_class == SizeClasses::class_of(bytes));
  deallocate_packed_here(record, page);
}

std::size_t RecordArena::packed_bytes(const void* record) noexcept {
  return SizeClasses::bytes_of(page_info(record)->size_class);
}

void RecordArena::deallocate_packed(void* record) noexcept {
  owner_of(record).deallocate_packed_here(record, page_info(record));
}

void RecordArena::deallocate_packed_here(void* record, PageInfo* page) noexcept {
  CC_ASSERT(page->in_use && page->live > 0);
  const std::size_t c = page->size_class;
  const std::size_t size = SizeClasses::bytes_of(c);
  ClassState& state = classes_[c];
  std::memcpy(record, &page->free_records, sizeof(void*));
  page->free_records = record;
  detail::asan_poison(record, size);
  --page->live;
  --state.records;
  --records_;
  record_bytes_ -= size;
  if (page->live == 0) {
    if (page->evacuating) {
      state.evacuating.remove(page);
      --evacuating_pages_;
    } else if (page->has_room) {
      state.with_room.remove(page);
    }
    page->has_room = page->evacuating = false;
    if (state.recent == page) state.recent = nullptr;
    --state.pages;
    give_back_empty_page(page);
    return;
  }
  if (page->evacuating) return;
  if (!page->has_room) {
    state.with_room.push_back(page);
    page->has_room = true;
  }
  state.recent = page;
}

std::size_t RecordArena::usable_bytes(const void* record, std::size_t bytes) noexcept {
  if (bytes > SizeClasses::kMaxClassBytes) return malloc_usable_size(const_cast<void*>(record));
  return SizeClasses::rounded(bytes);
}

void* RecordArena::allocate_on_heap(std::size_t bytes) noexcept {
  void* record = std::malloc(bytes);
  if (record == nullptr) return nullptr;
  // What the heap really gives: the usable bytes plus glibc's 8-byte chunk header.
  const std::size_t chunk = malloc_usable_size(record) + 8;
  heap_bytes_ += chunk;
  record_bytes_ += chunk;
  ++records_;
  return record;
}

void RecordArena::deallocate_on_heap(void* record) noexcept {
  const std::size_t chunk = malloc_usable_size(record) + 8;
  heap_bytes_ -= chunk;
  record_bytes_ -= chunk;
  --records_;
  std::free(record);
}

// ---- Pages --------------------------------------------------------------------------------------

RecordArena::PageInfo* RecordArena::take_empty_page(std::size_t size_class) noexcept {
  PageInfo* page = empty_resident_.head;
  if (page != nullptr) {
    empty_resident_.remove(page);
  } else {
    if (empty_released_.head == nullptr && !map_chunk()) return nullptr;
    page = empty_released_.head;
    empty_released_.remove(page);
  }
  detail::asan_poison(page_address(page),
                      kPageBytes);  // records are unpoisoned as they are handed out
  page->free_records = nullptr;
  page->bump = 0;
  page->live = 0;
  page->size_class = static_cast<std::uint16_t>(size_class);
  page->in_use = true;
  page->has_room = true;
  classes_[size_class].with_room.push_front(page);
  ++classes_[size_class].pages;
  ++pages_in_use_;
  return page;
}

void RecordArena::give_back_empty_page(PageInfo* page) noexcept {
  page->in_use = false;
  --pages_in_use_;
  if (empty_resident_.length < kSpareResidentPages) {
    empty_resident_.push_front(page);
    return;
  }
  // Past the spares: back to the OS. The mapping stays, so the page is reused without a
  // system call; its next touch faults in zeroed memory.
  madvise(page_address(page), kPageBytes, MADV_DONTNEED);
  empty_released_.push_front(page);
}

bool RecordArena::map_chunk() noexcept {
  // Map twice the size and trim, so the chunk is aligned to its size.
  void* raw =
      mmap(nullptr, 2 * kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return false;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kChunkBytes - 1) & ~(kChunkBytes - 1);
  const std::size_t head = aligned - start;  // trimmed before the chunk; kChunkBytes - head after
  unsigned char* base = static_cast<unsigned char*>(raw) + head;
  if (head > 0) munmap(raw, head);
  if (head < kChunkBytes) munmap(base + kChunkBytes, kChunkBytes - head);
  static_assert(sizeof(Chunk) <= kBookkeepingBytes);
  auto* chunk = ::new (base) Chunk;
  chunk->owner = this;
  chunk->next = chunks_head_;
  chunks_head_ = chunk;
  ++chunks_;
  // 8 bytes a 4 MiB chunk; chunks are unmapped only with the arena.
  chunk_addresses_.insert(
      std::upper_bound(chunk_addresses_.begin(), chunk_addresses_.end(), aligned), aligned);
  // Pages in address order, first out first: a filling arena touches its memory sequentially.
  for (std::size_t i = kPagesPerChunk; i-- > 1;) empty_released_.push_front(&chunk->pages[i]);
  return true;
}

RecordArena::~RecordArena() {
  for (Chunk* chunk = chunks_head_; chunk != nullptr;) {
    Chunk* next = chunk->next;
    detail::asan_unpoison(chunk, kChunkBytes);
    munmap(chunk, kChunkBytes);
    chunk = next;
  }
}

std::size_t RecordArena::resident_bytes() const noexcept {
  return (pages_in_use_ + empty_resident_.length) * kPageBytes + chunks_ * kBookkeepingBytes +
         heap_bytes_;
}

// ---- Compaction ---------------------------------------------------------------------------------

void RecordArena::release_marks(ClassState& state) noexcept {
  state.recent = nullptr;  // the plan may mark it
  while (PageInfo* page = state.evacuating.head) {
    state.evacuating.remove(page);
    --evacuating_pages_;
    page->evacuating = false;
    const std::size_t size = SizeClasses::bytes_of(page->size_class);
    if (page->free_records != nullptr || page->bump + size <= kPageBytes) {
      state.with_room.push_back(page);
      page->has_room = true;
    }
  }
}

std::size_t RecordArena::plan_compaction() noexcept {
  std::size_t to_move = 0;
  for (std::size_t c = 0; c < SizeClasses::kCount; ++c) {
    ClassState& state = classes_[c];
    release_marks(state);
    const std::size_t per_page = kPageBytes / SizeClasses::bytes_of(c);
    const std::size_t needed = (state.records + per_page - 1) / per_page;
    if (state.pages < needed + 2) continue;  // within two pages of tight: nothing worth moving
    // Marks pages with room, sparsest first (a quarter full or less, then half), while their
    // records fit in the room left on the pages that stay, and one page of slack remains.
    std::size_t room_left = state.pages * per_page - state.records;
    std::size_t marked = 0;
    for (const std::size_t most_live : {per_page / 4, per_page / 2}) {
      for (PageInfo* page = state.with_room.head; page != nullptr;) {
        PageInfo* next = page->next;
        const std::size_t page_room = per_page - page->live;
        if (page->live <= most_live && room_left >= page_room + page->live &&
            state.pages - marked > needed + 1) {
          room_left -= page_room + page->live;
          state.with_room.remove(page);
          page->has_room = false;
          page->evacuating = true;
          state.evacuating.push_back(page);
          ++evacuating_pages_;
          to_move += page->live;
          ++marked;
        }
        page = next;
      }
    }
  }
  return to_move;
}

bool RecordArena::should_relocate(const void* record, std::size_t bytes) const noexcept {
  return bytes <= SizeClasses::kMaxClassBytes && page_info(record)->evacuating;
}

bool RecordArena::wants_moved(const void* packed_record) noexcept {
  return page_info(packed_record)->evacuating;
}

bool RecordArena::holds_evacuating(const void* address) const noexcept {
  if (evacuating_pages_ == 0) return false;
  const std::uintptr_t chunk = reinterpret_cast<std::uintptr_t>(address) & ~(kChunkBytes - 1);
  return std::binary_search(chunk_addresses_.begin(), chunk_addresses_.end(), chunk) &&
         wants_moved(address);
}

}  // namespace chronocache
