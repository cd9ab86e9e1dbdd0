// SizeClasses: the record sizes RecordArena packs, and the class a request of n bytes takes.
//
//   bytes:  8 12 16 20 ... 256 | 320 384 448 512 | 640 768 896 1024 | ... | 12288 14336 16384
//           63 classes,         then 4 per power of two (steps of 1/4 of the lower power)
//           4 bytes apart
//
// Small records are what a cache holds most of (a 16-byte key with a 16-byte value is 32-40
// bytes), so from 8 to 256 bytes every multiple of 4 is a class: at most 3 bytes of a record are
// rounding (1.5 on average; 8-byte steps left 3.5). Records need no more alignment than 4: their
// owners read them as bytes. The smallest class is 8, which holds a freed record's link to the
// next. Above 256, four classes per doubling bound the rounding at 20 % of the record (25 % of the
// lower power), as jemalloc's and mimalloc's spacing does; those classes are multiples of 64.
// Past kMaxClassBytes a record is not packed (RecordArena hands it to the heap).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace chronocache {

struct SizeClasses {
  static constexpr std::size_t kSmallStep = 4;
  static constexpr std::size_t kSmallest = 8;      // a freed record holds a pointer
  static constexpr std::size_t kSmallLimit = 256;  // the largest class of the 4-byte steps
  static constexpr std::size_t kSmallClasses = (kSmallLimit - kSmallest) / kSmallStep + 1;
  static constexpr std::size_t kClassesPerDoubling = 4;
  static constexpr std::size_t kMaxClassBytes = 16 * 1024;
  static constexpr auto kSmallLimitBits = static_cast<std::size_t>(std::bit_width(kSmallLimit));
  // 256 -> 16384 is 6 doublings.
  static constexpr std::size_t kCount =
      kSmallClasses +
      kClassesPerDoubling *
          (static_cast<std::size_t>(std::bit_width(kMaxClassBytes)) - kSmallLimitBits);

  // The class of a record of `bytes` (1 <= bytes <= kMaxClassBytes): the smallest that fits it.
  static constexpr std::size_t class_of(std::size_t bytes) noexcept {
    if (bytes <= kSmallest) return 0;
    if (bytes <= kSmallLimit) return (bytes - kSmallest + kSmallStep - 1) / kSmallStep;
    // bytes in (2^(e-1), 2^e]: the quarter of that doubling it needs, rounding up.
    const auto e = static_cast<std::size_t>(std::bit_width(bytes - 1));
    const std::size_t lower = std::size_t{1} << (e - 1);
    const std::size_t quarter = (bytes - 1 - lower) / (lower / kClassesPerDoubling);
    return kSmallClasses + (e - kSmallLimitBits) * kClassesPerDoubling + quarter;
  }

  // The bytes a record of class `c` occupies.
  static constexpr std::size_t bytes_of(std::size_t c) noexcept {
    if (c < kSmallClasses) return kSmallest + c * kSmallStep;
    const std::size_t lower = kSmallLimit << ((c - kSmallClasses) / kClassesPerDoubling);
    return lower + lower / kClassesPerDoubling * ((c - kSmallClasses) % kClassesPerDoubling + 1);
  }

  // What a record of `bytes` occupies once rounded to its class.
  static constexpr std::size_t rounded(std::size_t bytes) noexcept {
    return bytes_of(class_of(bytes));
  }
};

static_assert(SizeClasses::bytes_of(SizeClasses::kCount - 1) == SizeClasses::kMaxClassBytes,
              "the last class is the largest record");

}  // namespace chronocache
