#include "chronocache/memory/reservation_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <iterator>

#include "chronocache/base/assert.h"
#include "chronocache/memory/asan_poison.h"

namespace chronocache {

namespace {
// Orders an address before a chunk that starts above it (chunks_ is sorted by address).
struct BeforeChunk {
  template <class Chunk>
  bool operator()(const void* p, const Chunk& chunk) const noexcept {
    return reinterpret_cast<std::uintptr_t>(p) < reinterpret_cast<std::uintptr_t>(chunk.base);
  }
};
}  // namespace

ReservationPool::ReservationPool(std::size_t reservation_bytes) noexcept
    : reservation_bytes_(pages_for(reservation_bytes) * kPageBytes),
      per_chunk_(kChunkBytes / reservation_bytes_) {
  CC_ASSERT(reservation_bytes_ > 0 && reservation_bytes_ <= kChunkBytes);
}

ReservationPool::~ReservationPool() { unmap_all(); }

void* ReservationPool::allocate(std::size_t bytes) noexcept {
  CC_ASSERT(bytes > 0 && bytes <= reservation_bytes_);
  const std::size_t pages = pages_for(bytes);
  std::uint32_t number = 0;
  if (!free_.empty()) {
    number = free_.back();
    free_.pop_back();
  } else if (!take_reservation(number)) {
    return nullptr;
  }
  block_pages_ += pages;
  peak_block_pages_ = std::max(peak_block_pages_, block_pages_);
  ++live_blocks_;
  populate(number, pages);
  detail::asan_unpoison(starts_[number], bytes);
  return starts_[number];
}

void ReservationPool::resize(void* block, std::size_t old_bytes, std::size_t new_bytes) noexcept {
  CC_ASSERT(owns(block) && new_bytes > 0 && new_bytes <= reservation_bytes_);
  const std::uint32_t number = number_of(block);
  const std::size_t pages = pages_for(new_bytes);
  block_pages_ = block_pages_ - pages_for(old_bytes) + pages;
  peak_block_pages_ = std::max(peak_block_pages_, block_pages_);
  populate(number, pages);
  detail::asan_poison(block, reservation_bytes_);
  detail::asan_unpoison(block, new_bytes);
}

// Makes the first `pages` of reservation `number` resident; past them, what the slack budget
// does not allow goes back.
void ReservationPool::populate(std::uint32_t number, std::size_t pages) noexcept {
  const std::size_t had = resident_[number];
  if (had < pages) {
    // One call maps the pages the block lacks, rather than a fault at each first touch.
    madvise(starts_[number] + had * kPageBytes, (pages - had) * kPageBytes, MADV_POPULATE_WRITE);
    resident_[number] = static_cast<std::uint16_t>(pages);
    resident_pages_ += pages - had;
  } else if (resident_pages_ - block_pages_ > slack_budget_pages()) {
    release_pages(number, pages);
  }
  peak_resident_pages_ = std::max(peak_resident_pages_, resident_pages_);
}

void ReservationPool::deallocate(void* block, std::size_t bytes) noexcept {
  CC_ASSERT(owns(block) && live_blocks_ > 0);
  detail::asan_poison(block, reservation_bytes_);
  --live_blocks_;
  block_pages_ -= pages_for(bytes);
  if (live_blocks_ == 0) {
    // Nothing left: give back every chunk (a cleared table starts again from the heap).
    unmap_all();
    return;
  }
  const std::uint32_t number = number_of(block);
  free_.push_back(number);
  if (resident_pages_ - block_pages_ > slack_budget_pages()) release_pages(number, 0);
}

void ReservationPool::release_all() noexcept {
  live_blocks_ = 0;
  block_pages_ = 0;
  unmap_all();
}

bool ReservationPool::owns(const void* p) const noexcept { return chunk_of(p) != nullptr; }

std::uint32_t ReservationPool::number_of(const void* block) const noexcept {
  const Chunk* chunk = chunk_of(block);
  const auto offset =
      reinterpret_cast<std::uintptr_t>(block) - reinterpret_cast<std::uintptr_t>(chunk->base);
  return chunk->first + static_cast<std::uint32_t>(offset / reservation_bytes_);
}

const ReservationPool::Chunk* ReservationPool::chunk_of(const void* p) const noexcept {
  const auto after = std::upper_bound(chunks_.begin(), chunks_.end(), p, BeforeChunk());
  if (after == chunks_.begin()) return nullptr;
  const Chunk& chunk = *std::prev(after);
  const auto offset =
      reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(chunk.base);
  return offset < kChunkBytes ? &chunk : nullptr;
}

bool ReservationPool::take_reservation(std::uint32_t& number) noexcept {
  if (carved_ == starts_.size()) {
    void* mapped =
        mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return false;
    auto* base = static_cast<unsigned char*>(mapped);
    detail::asan_poison(base, kChunkBytes);
    chunks_.insert(std::upper_bound(chunks_.begin(), chunks_.end(), base, BeforeChunk()),
                   Chunk{base, carved_});
    for (std::size_t i = 0; i < per_chunk_; ++i) starts_.push_back(base + i * reservation_bytes_);
    resident_.resize(starts_.size(), 0);
  }
  number = carved_++;
  return true;
}

// Gives back the pages of reservation `number` past its first `keep_pages`. The mapping stays,
// so the reservation is reused without a system call; its next touch faults in zeroed pages.
void ReservationPool::release_pages(std::uint32_t number, std::size_t keep_pages) noexcept {
  const std::size_t had = resident_[number];
  if (had <= keep_pages) return;
  madvise(starts_[number] + keep_pages * kPageBytes, (had - keep_pages) * kPageBytes,
          MADV_DONTNEED);
  resident_[number] = static_cast<std::uint16_t>(keep_pages);
  resident_pages_ -= had - keep_pages;
}

std::size_t ReservationPool::slack_budget_pages() const noexcept {
  return std::max(2 * pages_for(reservation_bytes_), block_pages_ / 32);
}

void ReservationPool::unmap_all() noexcept {
  for (const Chunk& chunk : chunks_) {
    // A later mapping at this address must not look poisoned.
    detail::asan_unpoison(chunk.base, kChunkBytes);
    munmap(chunk.base, kChunkBytes);
  }
  chunks_.clear();
  starts_.clear();
  resident_.clear();
  free_.clear();
  carved_ = 0;
  resident_pages_ = 0;
}

}  // namespace chronocache
