// Glob-style matching exactly as Redis's stringmatchlen (util.c), for KEYS and SCAN MATCH (and
// any later user: CONFIG GET, PSUBSCRIBE, CLIENT KILL...). Clients rely on its quirks, so this is
// a faithful port, not a cleaner glob:
//
//   *        any run of bytes, including none        ?       exactly one byte
//   [abc]    one byte of the set                      [^abc]  one byte not in the set
//   [a-z]    a range; reversed bounds swap ([z-a])    \x      the byte x, also inside [...]
//
// Quirks kept on purpose: an unclosed class "[abc" ends at the pattern's end and still matches
// one byte; a trailing "\" matches a literal backslash; "**" never matches the empty key; ranges
// compare bytes as signed chars (Redis's `int c = pattern[0]` on x86), so [\x01-\xff] swaps to
// [\xff-\x01] and matches only 0xff, 0x00 and 0x01; past 1000 nested '*' recursions the answer is
// "no match" (Redis's guard against abusive patterns, CVE-2024-31228, which the Debian 7.0.15
// reference build carries).
//
// Cost: linear for patterns with at most one '*'; with several, Redis's skip-longer-matches cut
// keeps it polynomial (CVE-2022-36021). No allocation.
#pragma once

#include <string_view>

namespace chronocached {

// True when `subject` matches the glob `pattern`. `nocase` folds ASCII letters only (the C
// locale's tolower, as Redis's).
bool glob_match(std::string_view pattern, std::string_view subject, bool nocase = false);

}  // namespace chronocached
