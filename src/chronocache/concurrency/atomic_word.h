// Whether values of a type can be loaded and stored whole by one lock-free atomic instruction
// through std::atomic_ref, where they lie: trivially copyable, not empty (an empty member may
// overlap another), lock-free at its size, and aligned as atomic_ref requires. On x86-64 that is
// every scalar and small struct up to 8 bytes with its natural alignment.
#pragma once

#include <atomic>
#include <type_traits>

namespace chronocache::detail {

template <class T>
consteval bool is_one_atomic_word() {
  if constexpr (!std::is_trivially_copyable_v<T> || std::is_empty_v<T>) {
    return false;
  } else {
    return std::atomic_ref<T>::is_always_lock_free &&
           alignof(T) >= std::atomic_ref<T>::required_alignment;
  }
}

}  // namespace chronocache::detail
