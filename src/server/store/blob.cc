#include "server/store/blob.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "chronocache/base/assert.h"

namespace chronocached {
namespace {

void* allocate_block(std::size_t bytes) {
  void* block = std::malloc(bytes);
  if (block == nullptr) throw std::bad_alloc();
  return block;
}

}  // namespace

Blob::Blob(std::string_view bytes) {
  if (bytes.empty()) return;
  block_ = static_cast<Header*>(allocate_block(sizeof(Header) + bytes.size()));
  block_->size = static_cast<std::uint32_t>(bytes.size());
  block_->capacity = static_cast<std::uint32_t>(bytes.size());
  std::memcpy(this->bytes(), bytes.data(), bytes.size());
}

Blob& Blob::operator=(Blob&& other) noexcept {
  if (this != &other) {
    std::free(block_);
    block_ = other.block_;
    other.block_ = nullptr;
  }
  return *this;
}

Blob::~Blob() { std::free(block_); }

void Blob::reserve_grown(std::size_t needed) {
  CC_CHECK(needed < kGrownBit, "a Blob is limited to 2 GiB");
  if (block_ != nullptr && needed <= capacity()) {
    block_->capacity |= kGrownBit;
    return;
  }
  // Doubling up to 1 MiB, then 1 MiB steps, as Redis's sds: repeated APPENDs stay amortized O(1)
  // without a large string ever holding twice its size.
  constexpr std::size_t kMaxPrealloc = 1 << 20;
  std::size_t capacity = needed < kMaxPrealloc ? needed * 2 : needed + kMaxPrealloc;
  capacity = std::min<std::size_t>(capacity, kGrownBit - 1);
  auto* grown = static_cast<Header*>(std::realloc(block_, sizeof(Header) + capacity));
  if (grown == nullptr) throw std::bad_alloc();
  if (block_ == nullptr) grown->size = 0;
  block_ = grown;
  block_->capacity = static_cast<std::uint32_t>(capacity) | kGrownBit;
}

void Blob::append(std::string_view more) {
  if (more.empty()) return;
  const std::size_t old_size = size();
  reserve_grown(old_size + more.size());
  std::memcpy(bytes() + old_size, more.data(), more.size());
  block_->size = static_cast<std::uint32_t>(old_size + more.size());
}

void Blob::write_at(std::size_t offset, std::string_view data) {
  const std::size_t end = offset + data.size();
  const std::size_t old_size = size();
  if (end > old_size) {
    reserve_grown(end);
    std::memset(bytes() + old_size, 0, end - old_size);
    block_->size = static_cast<std::uint32_t>(end);
  } else if (block_ != nullptr) {
    block_->capacity |= kGrownBit;
  }
  if (!data.empty()) std::memcpy(bytes() + offset, data.data(), data.size());
}

std::size_t Blob::heap_bytes() const noexcept {
  return block_ == nullptr ? 0 : malloc_usable_size(block_);
}

}  // namespace chronocached
