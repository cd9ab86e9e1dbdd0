// asan_poison / asan_unpoison: tell AddressSanitizer that memory an allocator holds must not be
// touched (freed, or not handed out yet), or may be again, so a use after free or an overrun
// inside memory we manage ourselves is still reported. Without ASan they compile to nothing.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace chronocache::detail {

inline void asan_poison(const void* p, std::size_t bytes) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_POISON_MEMORY_REGION(p, bytes);
#else
  static_cast<void>(p), static_cast<void>(bytes);
#endif
}

inline void asan_unpoison(const void* p, std::size_t bytes) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#else
  static_cast<void>(p), static_cast<void>(bytes);
#endif
}

}  // namespace chronocache::detail
