// Argument parsing shared by every command family, with Redis's exact acceptance rules (a value
// Redis refuses, we refuse; a value Redis takes, we take).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "server/base/ascii.h"       // option_is, for option words
#include "server/base/int64_text.h"  // parse_int64

namespace chronocached {

// Redis's string2ld, exactly (INCRBYFLOAT): strtold over the whole text, no leading space, not
// NaN, no overflow to infinity or underflow to zero (a subnormal result is taken).
std::optional<long double> parse_long_double(std::string_view text);

// A double as Redis's getDoubleFromObject reads it (strtod, whole string, no spaces, not NaN).
std::optional<double> parse_double(std::string_view text);

}  // namespace chronocached
