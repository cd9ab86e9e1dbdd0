// Redis's string2ll: how every integer argument, and every config value Redis reads with it, is
// read, so that a value Redis refuses ("-0", "007", "+1", " 1", 21 characters) we refuse too.
// (The few configs Redis reads with strtoll, save and a buffer limit's seconds, keep a reader
// of their own.)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace chronocached {

// An optional '-', decimal digits, no '+', no spaces, no leading zeros (except "0" itself),
// within int64.
constexpr std::optional<std::int64_t> parse_int64(std::string_view text) noexcept {
  if (text.empty() || text.size() > 20) return std::nullopt;
  if (text.size() == 1 && text[0] == '0') return 0;
  std::size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) {
    i = 1;
    if (text.size() == 1) return std::nullopt;
  }
  if (text[i] < '1' || text[i] > '9') return std::nullopt;  // no leading zeros, no "-0"
  std::uint64_t value = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (negative) {
    if (value > static_cast<std::uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<std::int64_t>(0 - value);
  }
  if (value > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

}  // namespace chronocached
