// ASCII case folding for protocol words: command names, options ("EX", "ex"), config values.
// Redis compares these bytes without a locale; so do we (std::tolower would consult one).
#pragma once

#include <cstddef>
#include <string_view>

namespace chronocached {

constexpr char ascii_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

// `a` and `b` are equal once both are folded to lower case.
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

// An argument as Redis reads it with C string functions (strcasecmp on an option word, printf's
// %s in an error): the bytes before its first NUL.
constexpr std::string_view c_string(std::string_view s) noexcept {
  return s.substr(0, s.find('\0'));
}

// An option word is `name`, as Redis's strcasecmp(argv[i]->ptr, name) decides: case-folded, and
// "NX\0junk" is NX. (Command and subcommand names are looked up binary-safe, not so.)
constexpr bool option_is(std::string_view arg, std::string_view name) noexcept {
  return iequals(c_string(arg), name);
}

// As iequals, for a `lower` known to be lower case already (a table's names): half the folding.
constexpr bool iequals_lower(std::string_view text, std::string_view lower) noexcept {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (ascii_lower(text[i]) != lower[i]) return false;
  return true;
}

}  // namespace chronocached
