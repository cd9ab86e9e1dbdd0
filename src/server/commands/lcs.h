// The longest common subsequence of two byte strings, as Redis 7's LCS command computes it.
//
// Redis fills the classic (N+1) x (M+1) dynamic-programming table of prefix LCS lengths and walks
// back from the end; where two directions tie it moves along the second string. Several
// subsequences can be equally long, so to report the same one (and the same match ranges) this
// follows Redis's table and walk exactly rather than a cheaper algorithm (Hirschberg's linear
// space would pick differently). Time O(N*M), memory 4 bytes a cell: callers bound the size.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chronocached {

// A contiguous run of the subsequence: a[a_start..a_end] == b[b_start..b_end], bounds inclusive.
struct LcsMatch {
  std::uint32_t a_start, a_end, b_start, b_end;
  std::uint32_t length() const { return a_end - a_start + 1; }
};

class LcsTable {
 public:
  // The table for `a` and `b`, or nullopt when it would hold more than `max_cells` cells or
  // cannot be allocated. Keeps views of `a` and `b`: they must outlive the table.
  // Precondition: both are shorter than 2^32 - 1 bytes.
  static std::optional<LcsTable> compute(std::string_view a, std::string_view b,
                                         std::uint64_t max_cells);

  // The length of the longest common subsequence.
  std::uint32_t length() const { return at(a_.size(), b_.size()); }

  // The subsequence Redis reports. With `matches`, also its contiguous runs of at least
  // `min_match_len` bytes (0: all), from the end of the strings backwards, as Redis lists them.
  std::string backtrack(std::vector<LcsMatch>* matches, std::uint64_t min_match_len) const;

 private:
  LcsTable(std::string_view a, std::string_view b, std::unique_ptr<std::uint32_t[]> cells)
      : a_(a), b_(b), cells_(std::move(cells)) {}
  // The LCS length of a[0, i) and b[0, j).
  std::uint32_t at(std::uint64_t i, std::uint64_t j) const { return cells_[i * stride() + j]; }
  std::uint64_t stride() const { return std::uint64_t{b_.size()} + 1; }

  std::string_view a_;
  std::string_view b_;
  std::unique_ptr<std::uint32_t[]> cells_;
};

}  // namespace chronocached
