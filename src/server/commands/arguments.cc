#include "server/commands/arguments.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace chronocached {

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
