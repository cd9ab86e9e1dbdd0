#include "server/commands/glob.h"

#include <cstddef>
#include <utility>

namespace chronocached {
namespace {

// Redis's guard (util.c): a deeper chain of '*' recursions answers "no match".
constexpr int kMaxNesting = 1000;

// A byte as Redis reads it: `char` is signed on the reference build, and ranges compare ints.
int signed_byte(char c) { return static_cast<signed char>(c); }

// The pattern byte at `k`, or 0 past the end: Redis reads one byte beyond the pattern in places
// (`pattern[1]`, `*pattern`) and finds the sds terminator there, so past-the-end reads as '\0'.
int byte_at(const char* pattern, std::size_t length, std::size_t k) {
  return k < length ? signed_byte(pattern[k]) : 0;
}

// The C locale's tolower, which Redis gets (it never sets LC_CTYPE): ASCII letters only.
int fold(int c, bool nocase) { return nocase && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

// stringmatchlen_impl, step for step. `skip_longer` is set once a '*' has tried every suffix of
// the subject without success: no earlier '*' can then succeed by matching more, so callers stop.
bool match(const char* pattern, std::size_t pattern_len, const char* subject,
           std::size_t subject_len, bool nocase, bool& skip_longer, int nesting) {
  if (nesting > kMaxNesting) return false;
  while (pattern_len > 0 && subject_len > 0) {
    switch (pattern[0]) {
      case '*':
        while (pattern_len > 1 && pattern[1] == '*') {
          ++pattern;
          --pattern_len;
        }
        if (pattern_len == 1) return true;
        while (subject_len > 0) {
          if (match(pattern + 1, pattern_len - 1, subject, subject_len, nocase, skip_longer,
                    nesting + 1))
            return true;
          if (skip_longer) return false;
          ++subject;
          --subject_len;
        }
        skip_longer = true;
        return false;
      case '?':
        ++subject;
        --subject_len;
        break;
      case '[': {
        ++pattern;
        --pattern_len;
        const bool negate = byte_at(pattern, pattern_len, 0) == '^';
        if (negate) {
          ++pattern;
          --pattern_len;
        }
        const int c = signed_byte(subject[0]);
        bool matched = false;
        for (;;) {
          const int head = byte_at(pattern, pattern_len, 0);
          if (head == '\\' && pattern_len >= 2) {
            ++pattern;
            --pattern_len;
            if (signed_byte(pattern[0]) == c) matched = true;
          } else if (head == ']') {
            break;
          } else if (pattern_len == 0) {
            // An unclosed class: step back so the common advance below lands on the end.
            --pattern;
            ++pattern_len;
            break;
          } else if (pattern_len >= 3 && pattern[1] == '-') {
            int start = head;
            int end = signed_byte(pattern[2]);
            if (start > end) std::swap(start, end);
            const int folded = fold(c, nocase);
            pattern += 2;
            pattern_len -= 2;
            if (folded >= fold(start, nocase) && folded <= fold(end, nocase)) matched = true;
          } else if (fold(head, nocase) == fold(c, nocase)) {
            matched = true;
          }
          ++pattern;
          --pattern_len;
        }
        if (negate) matched = !matched;
        if (!matched) return false;
        ++subject;
        --subject_len;
        break;
      }
      case '\\':
        if (pattern_len >= 2) {
          ++pattern;
          --pattern_len;
        }
        [[fallthrough]];
      default:
        if (fold(signed_byte(pattern[0]), nocase) != fold(signed_byte(subject[0]), nocase))
          return false;
        ++subject;
        --subject_len;
        break;
    }
    ++pattern;
    --pattern_len;
    if (subject_len == 0) {
      while (byte_at(pattern, pattern_len, 0) == '*') {
        ++pattern;
        --pattern_len;
      }
      break;
    }
  }
  return pattern_len == 0 && subject_len == 0;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view subject, bool nocase) {
  bool skip_longer = false;
  return match(pattern.data(), pattern.size(), subject.data(), subject.size(), nocase, skip_longer,
               0);
}

}  // namespace chronocached
