#include "server/commands/arguments.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace chronocached {

std::optional<std::int64_t> parse_int64(std::string_view text) {
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

std::optional<long double> parse_long_double(std::string_view text) {
  char buf[5 * 1024];  // Redis's MAX_LONG_DOUBLE_CHARS
  if (text.empty() || text.size() >= sizeof(buf)) return std::nullopt;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  errno = 0;
  char* end = nullptr;
  const long double value = std::strtold(buf, &end);
  // An overflow to infinity or an underflow to zero is refused; a subnormal result is taken.
  const bool out_of_range =
      errno == ERANGE && (std::isinf(value) || std::fpclassify(value) == FP_ZERO);
  if (std::isspace(static_cast<unsigned char>(buf[0])) || end != buf + text.size() ||
      out_of_range || std::isnan(value))
    return std::nullopt;
  return value;
}

std::optional<double> parse_double(std::string_view text) {
  if (text.empty() || text.size() >= 5120) return std::nullopt;
  if (std::isspace(static_cast<unsigned char>(text.front())) ||
      std::isspace(static_cast<unsigned char>(text.back())))
    return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || std::isnan(value)) return std::nullopt;
  if (errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || value == 0))
    return std::nullopt;
  return value;
}

}  // namespace chronocached
