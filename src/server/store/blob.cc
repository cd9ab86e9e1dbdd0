#include "server/store/blob.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "chronocache/base/assert.h"

namespace chronocached {
namespace {

constexpr std::size_t kHeaderBytes = 4;

std::size_t varint_size(std::size_t n) {
  std::size_t bytes = 1;
  while (n >= 0x80) {
    n >>= 7;
    ++bytes;
  }
  return bytes;
}

unsigned char* write_varint(unsigned char* p, std::size_t n) {
  while (n >= 0x80) {
    *p++ = static_cast<unsigned char>(n | 0x80);
    n >>= 7;
  }
  *p++ = static_cast<unsigned char>(n);
  return p;
}

unsigned char* allocate(std::size_t bytes) {
  void* block = std::malloc(bytes);
  if (block == nullptr) throw std::bad_alloc();
  return static_cast<unsigned char*>(block);
}

}  // namespace

Blob::Blob(std::string_view key, std::string_view value) {
  if (key.empty() && value.empty()) return;
  CC_CHECK(value.size() <= kSizeMask && key.size() <= kSizeMask, "a Blob is limited to 2 GiB");
  const std::size_t key_prefix = kHeaderBytes + varint_size(key.size());
  set_block(allocate(key_prefix + key.size() + value.size()));
  set_header(static_cast<std::uint32_t>(value.size()), false);
  unsigned char* p = write_varint(block() + kHeaderBytes, key.size());
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  if (!value.empty()) std::memcpy(p + key.size(), value.data(), value.size());
}

Blob& Blob::operator=(Blob&& other) noexcept {
  if (this != &other) {
    std::free(block());
    set_block(other.block());
    other.set_block(nullptr);
  }
  return *this;
}

Blob::~Blob() { std::free(block()); }

std::uint32_t Blob::header() const noexcept {
  std::uint32_t h;
  std::memcpy(&h, block(), sizeof(h));
  return h;
}

void Blob::set_header(std::uint32_t value_size, bool grown) noexcept {
  const std::uint32_t h = value_size | (grown ? kGrownBit : 0u);
  std::memcpy(block(), &h, sizeof(h));
}

Blob::Layout Blob::layout() const noexcept {
  unsigned char* p = block() + kHeaderBytes;
  std::size_t key_size = 0;
  for (unsigned shift = 0;; shift += 7) {
    const unsigned char byte = *p++;
    key_size |= static_cast<std::size_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) break;
  }
  char* key = reinterpret_cast<char*>(p);
  return Layout{key, key_size, key + key_size, header() & kSizeMask};
}

std::size_t Blob::value_capacity() const noexcept {
  if (block() == nullptr) return 0;
  const Layout l = layout();
  return malloc_usable_size(block()) -
         static_cast<std::size_t>(reinterpret_cast<unsigned char*>(l.value) - block());
}

Blob::Resize Blob::reserve_value(std::size_t needed, bool grown) {
  CC_CHECK(needed <= kSizeMask, "a Blob is limited to 2 GiB");
  Resize resize;
  const bool fresh = block() == nullptr;
  if (fresh) {
    // A plain byte string: header, a zero key length, the value.
    set_block(allocate(kHeaderBytes + 1 + needed));
    set_header(0, false);
    block()[kHeaderBytes] = 0;
    resize.new_bytes = heap_bytes();
  }
  if (needed <= value_capacity()) return resize;
  const Layout l = layout();
  const auto prefix = static_cast<std::size_t>(reinterpret_cast<unsigned char*>(l.value) - block());
  // Doubling up to 1 MiB, then 1 MiB steps, as Redis's sds: repeated APPENDs stay amortized O(1)
  // without a large string ever holding twice its size.
  constexpr std::size_t kMaxPrealloc = 1 << 20;
  std::size_t capacity = needed;
  if (grown) capacity = needed < kMaxPrealloc ? needed * 2 : needed + kMaxPrealloc;
  capacity = std::min<std::size_t>(capacity, kSizeMask);
  if (!fresh) resize.old_bytes = heap_bytes();
  void* bigger = std::realloc(block(), prefix + capacity);
  if (bigger == nullptr) throw std::bad_alloc();
  set_block(static_cast<unsigned char*>(bigger));
  resize.new_bytes = heap_bytes();
  return resize;
}

Blob::Resize Blob::assign(std::string_view value) {
  if (block() == nullptr && value.empty()) return {};
  const Resize resize = reserve_value(value.size(), false);
  const Layout l = layout();
  if (!value.empty()) std::memmove(l.value, value.data(), value.size());
  set_header(static_cast<std::uint32_t>(value.size()), false);
  return resize;
}

Blob::Resize Blob::append(std::string_view more) {
  if (more.empty()) return {};
  const std::size_t old_size = size();
  const Resize resize = reserve_value(old_size + more.size(), true);
  const Layout l = layout();
  std::memcpy(l.value + old_size, more.data(), more.size());
  set_header(static_cast<std::uint32_t>(old_size + more.size()), true);
  return resize;
}

Blob::Resize Blob::write_at(std::size_t offset, std::string_view data) {
  const std::size_t end = offset + data.size();
  const std::size_t old_size = size();
  const std::size_t new_size = std::max(end, old_size);
  const Resize resize = reserve_value(new_size, true);
  const Layout l = layout();
  if (end > old_size) std::memset(l.value + old_size, 0, end - old_size);
  if (!data.empty()) std::memcpy(l.value + offset, data.data(), data.size());
  set_header(static_cast<std::uint32_t>(new_size), true);
  return resize;
}

std::size_t Blob::heap_bytes() const noexcept {
  return block() == nullptr ? 0 : malloc_usable_size(block()) + kMallocChunkHeader;
}

}  // namespace chronocached
