// Control bytes and the 16-wide group probe (the Swiss-table idea, Abseil raw_hash_set).
//
// Each slot has one control byte:   10000000  empty (never filled since the segment was built)
//                                   10000001  deleted (a tombstone: probes continue past it)
//                                   any other full: the tag, from the key's hash
// One SSE2 compare tests 16 control bytes at once, so a probe rejects all but the slots whose tag
// matches without touching them. Without SSE2 a portable loop gives the same masks.
//
// Why 254 tags and not the 128 of a sign bit (Abseil's layout): a probe that matches a tag by
// chance reads a body line to compare the key, and in a table larger than the cache that read is
// a second miss after the control bytes' (a new key's insert and a cache-aside miss both pay it).
// With 7-bit tags ~10 % of the probes into a group at 0.85 load paid it; with 254 values, ~5 %
// (boost::unordered_flat_map's reduced hash does the same). Empty and deleted are the two
// lowest signed values, so one signed compare still finds both.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace chronocache::detail {

using Ctrl = std::int8_t;
inline constexpr Ctrl kEmpty = -128;
inline constexpr Ctrl kDeleted = -127;
inline constexpr Ctrl kLowestTag = kDeleted + 1;
inline constexpr unsigned kGroupWidth = 16;

inline bool is_full(Ctrl c) noexcept { return c >= kLowestTag; }

// The tag of a hash byte: the byte itself, unless it is one of the two that mean empty or
// deleted, which take the lowest tag (a tag that comes up three times as often: harmless).
inline constexpr Ctrl tag_of(std::uint8_t hash_byte) noexcept {
  const auto c = static_cast<Ctrl>(hash_byte);
  return c >= kLowestTag ? c : kLowestTag;
}

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

  LaneMask match(Ctrl tag) const noexcept {
    return mask(_mm_cmpeq_epi8(_mm_set1_epi8(tag), bytes_));
  }
  // match(tag_of(hash_byte)), mapped in the vector (SSE4.1's signed max), where it takes the
  // instruction that a scalar mask of the byte would: a lookup costs what it did with 7-bit tags
  // (callgrind, getHit 43). SSE2 has no signed byte max, so it maps the byte in a register.
  LaneMask match_tag_of(std::uint8_t hash_byte) const noexcept {
#if defined(__SSE4_1__)
    const __m128i tags =
        _mm_max_epi8(_mm_set1_epi8(static_cast<char>(hash_byte)), _mm_set1_epi8(kLowestTag));
    return mask(_mm_cmpeq_epi8(tags, bytes_));
#else
    return match(tag_of(hash_byte));
#endif
  }
  LaneMask match_empty() const noexcept {
    return mask(_mm_cmpeq_epi8(_mm_set1_epi8(kEmpty), bytes_));
  }
  // Empty and deleted are the control bytes below every tag, signed.
  LaneMask match_empty_or_deleted() const noexcept { return mask(free_bytes()); }
  LaneMask match_full() const noexcept { return LaneMask(~raw_mask(free_bytes()) & 0xFFFFu); }

 private:
  static std::uint32_t raw_mask(__m128i v) noexcept {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(v));
  }
  static LaneMask mask(__m128i v) noexcept { return LaneMask(raw_mask(v)); }
  __m128i free_bytes() const noexcept { return _mm_cmpgt_epi8(_mm_set1_epi8(kLowestTag), bytes_); }
  __m128i bytes_;
#else
  explicit GroupCtrl(const Ctrl* ctrl) noexcept : ctrl_(ctrl) {}
  LaneMask match(Ctrl tag) const noexcept {
    return build([tag](Ctrl c) { return c == tag; });
  }
  LaneMask match_tag_of(std::uint8_t hash_byte) const noexcept { return match(tag_of(hash_byte)); }
  LaneMask match_empty() const noexcept {
    return build([](Ctrl c) { return c == kEmpty; });
  }
  LaneMask match_empty_or_deleted() const noexcept {
    return build([](Ctrl c) { return !is_full(c); });
  }
  LaneMask match_full() const noexcept {
    return build([](Ctrl c) { return is_full(c); });
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
