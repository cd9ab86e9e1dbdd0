// Numbered test keys and values: "<prefix><i>".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace chronocache::test_support {

// Built by append: `"k" + std::to_string(i)` trips GCC 12's -Wrestrict at -O3 (a known false
// positive), and warnings are errors.
inline std::string numbered(std::string_view prefix, std::size_t i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

}  // namespace chronocache::test_support
