// HeapBytes<T>: the heap memory a key or value owns beyond its own sizeof, for byte budgets.
//
// A Cache with max_bytes counts, for every entry, HeapBytes<K>::of(key) + HeapBytes<V>::of(value)
// on top of the table's own memory (slots, control bytes, directory) and the policy's. The
// default is 0, right for integers, PODs and anything stored inline; std::string is specialised;
// a host type that owns heap memory specialises HeapBytes for itself:
//
//   template <> struct chronocache::HeapBytes<MyRecord> {
//     static std::size_t of(const MyRecord& r) noexcept { return r.allocated_bytes(); }
//   };
//
// `of` must be cheap (it runs on every insert, overwrite and erase) and must return the same
// figure for an entry when it leaves as was counted when it came, unless the host reported the
// change (Cache::note_heap_resize).
#pragma once

#include <cstddef>
#include <string>

namespace chronocache {

template <class T>
struct HeapBytes {
  static constexpr std::size_t of(const T&) noexcept { return 0; }
};

// A std::string's buffer is on the heap once it outgrows the small-string buffer inside the
// object; the allocator hands out capacity + 1 bytes (the terminator), rounded to its 16-byte
// granule with 8 bytes of chunk header (glibc's malloc).
template <class Char, class Traits, class Alloc>
struct HeapBytes<std::basic_string<Char, Traits, Alloc>> {
  static std::size_t of(const std::basic_string<Char, Traits, Alloc>& s) noexcept {
    const auto* object = reinterpret_cast<const char*>(&s);
    const auto* data = reinterpret_cast<const char*>(s.data());
    if (data >= object && data < object + sizeof(s)) return 0;  // inline (SSO)
    const std::size_t requested = (s.capacity() + 1) * sizeof(Char);
    return (requested + 8 + 15) / 16 * 16;
  }
};

}  // namespace chronocache
