#include "server/commands/lcs.h"

#include <algorithm>
#include <new>
#include <utility>

namespace chronocached {

std::optional<LcsTable> LcsTable::compute(std::string_view a, std::string_view b,
                                          std::uint64_t max_cells) {
  const std::uint64_t rows = std::uint64_t{a.size()} + 1;
  const std::uint64_t stride = std::uint64_t{b.size()} + 1;
  if (rows * stride > max_cells) return std::nullopt;  // both below 2^32: no overflow
  std::unique_ptr<std::uint32_t[]> cells(new (std::nothrow) std::uint32_t[rows * stride]);
  if (!cells) return std::nullopt;
  std::fill_n(cells.get(), stride, 0u);
  for (std::uint64_t i = 1; i < rows; ++i) {
    const std::uint32_t* above = cells.get() + (i - 1) * stride;
    std::uint32_t* row = cells.get() + i * stride;
    const char a_byte = a[i - 1];
    row[0] = 0;
    for (std::uint64_t j = 1; j < stride; ++j)
      row[j] = a_byte == b[j - 1] ? above[j - 1] + 1 : std::max(above[j], row[j - 1]);
  }
  return LcsTable(a, b, std::move(cells));
}

// Redis's lcsCommand walk, step for step (including when a run is closed).
std::string LcsTable::backtrack(std::vector<LcsMatch>* matches, std::uint64_t min_match_len) const {
  std::string result(length(), '\0');
  std::size_t filled_from = result.size();
  bool in_run = false;
  LcsMatch run{};
  auto i = static_cast<std::uint32_t>(a_.size());
  auto j = static_cast<std::uint32_t>(b_.size());
  while (i > 0 && j > 0) {
    bool close_run = false;
    if (a_[i - 1] == b_[j - 1]) {
      result[--filled_from] = a_[i - 1];
      if (!in_run) {
        run = LcsMatch{i - 1, i - 1, j - 1, j - 1};
        in_run = true;
      } else if (run.a_start == i && run.b_start == j) {
        --run.a_start;  // contiguous with the run: extend it backwards
        --run.b_start;
      } else {
        close_run = true;
      }
      if (run.a_start == 0 || run.b_start == 0) close_run = true;
      --i;
      --j;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      if (in_run) close_run = true;
    }
    if (close_run) {
      if (matches != nullptr && (min_match_len == 0 || run.length() >= min_match_len))
        matches->push_back(run);
      in_run = false;
    }
  }
  return result;
}

}  // namespace chronocached
