// Space-separated words, as configs (save, client-output-buffer-limit) and the command table's
// word lists (ACL categories, key-spec flags, tips) are written.
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

namespace chronocached {

// The words of `text`, in order; runs of spaces separate them, and no word is empty.
inline std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t end = std::min(text.find(' ', i), text.size());
    if (end > i) words.push_back(text.substr(i, end - i));
    i = end + 1;
  }
  return words;
}

// The fields of a multi-argument config value given to CONFIG SET, as Redis splits one (sdssplitlen
// on " "): every space ends a field, so "a  b" has an empty field between a and b, and "" none.
inline std::vector<std::string_view> config_fields_of(std::string_view text) {
  std::vector<std::string_view> fields;
  if (text.empty()) return fields;
  for (std::size_t i = 0;;) {
    const std::size_t end = std::min(text.find(' ', i), text.size());
    fields.push_back(text.substr(i, end - i));
    if (end == text.size()) return fields;
    i = end + 1;
  }
}

}  // namespace chronocached
