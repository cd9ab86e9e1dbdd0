// Control bytes and the 16-wide group probe (the Swiss-table idea, Abseil raw_hash_set).
//
// Each slot has one control byte:   0xxxxxxx  full, x = 7-bit tag from the key's hash
//                                   10000000  empty (never filled since the segment was built)
//                                   11111110  deleted (a tombstone: probes continue past it)
// One SSE2 compare tests 16 control bytes at once, so a probe rejects 15 of 16 non-matching slots
// without touching them. Without SSE2 a portable loop gives the same masks.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace chronocache::detail {

using Ctrl = std::int8_t;
inline constexpr Ctrl kEmpty = -128;
inline constexpr Ctrl kDeleted = -2;
inline constexpr unsigned kGroupWidth = 16;

inline bool is_full(Ctrl c) noexcept { return c >= 0; }

// A set of lanes (bit i = slot i of the group), iterated from the lowest.
class LaneMask {
 public:
  explicit LaneMask(std::uint32_t bits) noexcept : bits_(bits) {}
  explicit operator bool() const noexcept { return bits_ != 0; }
  std::uint32_t bits() const noexcept { return bits_; }
  // std::size_t lanes: index arithmetic then needs no sign extension of ctz's int result.
  std::size_t lowest() const noexcept { return static_cast<std::uint32_t>(__builtin_ctz(bits_)); }

  class Iterator {
   public:
    explicit Iterator(std::uint32_t bits) noexcept : bits_(bits) {}
    std::size_t operator*() const noexcept {
      return static_cast<std::uint32_t>(__builtin_ctz(bits_));
    }
    Iterator& operator++() noexcept {
      bits_ &= bits_ - 1;
      return *this;
    }
    bool operator!=(const Iterator& other) const noexcept { return bits_ != other.bits_; }

   private:
    std::uint32_t bits_;
  };
  Iterator begin() const noexcept { return Iterator(bits_); }
  Iterator end() const noexcept { return Iterator(0); }

 private:
  std::uint32_t bits_;
};

// The 16 control bytes of one group, loaded once. `ctrl` must be 16-byte aligned.
class GroupCtrl {
 public:
#if defined(__SSE2__)
  explicit GroupCtrl(const Ctrl* ctrl) noexcept
      : bytes_(_mm_load_si128(reinterpret_cast<const __m128i*>(ctrl))) {}

  LaneMask match(std::uint8_t tag) const noexcept {
    return mask(_mm_cmpeq_epi8(_mm_set1_epi8(static_cast<char>(tag)), bytes_));
  }
  LaneMask match_empty() const noexcept {
    return mask(_mm_cmpeq_epi8(_mm_set1_epi8(kEmpty), bytes_));
  }
  // Empty and deleted are the control bytes with the sign bit set.
  LaneMask match_empty_or_deleted() const noexcept { return mask(bytes_); }
  LaneMask match_full() const noexcept { return LaneMask(~raw_mask(bytes_) & 0xFFFFu); }

 private:
  static std::uint32_t raw_mask(__m128i v) noexcept {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(v));
  }
  static LaneMask mask(__m128i v) noexcept { return LaneMask(raw_mask(v)); }
  __m128i bytes_;
#else
  explicit GroupCtrl(const Ctrl* ctrl) noexcept : ctrl_(ctrl) {}
  LaneMask match(std::uint8_t tag) const noexcept {
    return build([tag](Ctrl c) { return c == static_cast<Ctrl>(tag); });
  }
  LaneMask match_empty() const noexcept {
    return build([](Ctrl c) { return c == kEmpty; });
  }
  LaneMask match_empty_or_deleted() const noexcept {
    return build([](Ctrl c) { return c < 0; });
  }
  LaneMask match_full() const noexcept {
    return build([](Ctrl c) { return c >= 0; });
  }

 private:
  template <class Pred>
  LaneMask build(Pred pred) const noexcept {
    std::uint32_t bits = 0;
    for (unsigned i = 0; i < kGroupWidth; ++i)
      bits |= static_cast<std::uint32_t>(pred(ctrl_[i])) << i;
    return LaneMask(bits);
  }
  const Ctrl* ctrl_;
#endif
};

}  // namespace chronocache::detail
