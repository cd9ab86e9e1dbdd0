#include "server/resp/parser.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

namespace chronocached::resp {
namespace {

// Redis gives up on a request line that has not ended within 64 KiB (PROTO_INLINE_MAX_SIZE):
// a header without its CR, or an inline command without its LF. A line that has ended is parsed
// whatever its length (its number is then simply invalid).
constexpr std::size_t kMaxLineWithoutEnd = 64 * 1024;
constexpr std::size_t kUnauthenticatedArgs = 10;
constexpr std::size_t kUnauthenticatedBulk = 16384;

// Redis's string2ll: optional '-', then "0" alone or a digit 1-9 followed by digits (no '+', no
// leading zeros, no "-0", no spaces), within int64.
bool parse_length(std::string_view text, long long& out) {
  if (text.empty() || text.size() > 20) return false;
  if (text.size() == 1 && text[0] == '0') {
    out = 0;
    return true;
  }
  const std::size_t first_digit = text[0] == '-' ? 1 : 0;
  if (first_digit >= text.size() || text[first_digit] < '1' || text[first_digit] > '9')
    return false;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), last, out);
  return ec == std::errc() && ptr == last;
}

// Where `target` first occurs in data[from..], as Redis's strchr() on its query buffer finds it:
// the search stops at a NUL byte, so a line with a NUL before its end has not ended yet (Redis
// waits for more bytes, then reports the line too long; a client sees exactly that here too).
std::size_t find_line_end(std::string_view data, std::size_t from, char target) {
  const std::size_t at = data.find(target, from);
  const std::size_t searched_to = at == std::string_view::npos ? data.size() : at;
  if (std::memchr(data.data() + from, '\0', searched_to - from) != nullptr)
    return std::string_view::npos;
  return at;
}

// The common case of a length header at data[at] ('*' or '$'): 1-18 plain digits (or a lone
// "0") then CR and one more byte present. Returns false for anything else, which the exact path
// (find_line_end + parse_length, with Redis's error for every oddity) then judges. Measured under
// callgrind: the exact path's two memchr scans and from_chars cost ~600 instructions per GET at
// pipeline 16; this one ~40.
[[gnu::always_inline]] inline bool quick_header(std::string_view data, std::size_t at,
                                                long long& value, std::size_t& after) {
  const char* p = data.data() + at + 1;
  const char* const end = data.data() + data.size();
  if (end - p < 3) return false;
  if (*p == '0') {
    if (p[1] != '\r') return false;
    value = 0;
    after = at + 4;  // "$0\r\n"
    return true;
  }
  long long n = 0;
  const char* const start = p;
  while (p < end && *p >= '0' && *p <= '9' && p - start < 18) n = n * 10 + (*p++ - '0');
  if (p == start || p + 1 >= end || *p != '\r') return false;
  value = n;
  after = static_cast<std::size_t>(p + 2 - data.data());
  return true;
}

ParseResult need_more() { return ParseResult{ParseStatus::kNeedMore, 0, {}}; }

ParseResult error(std::string_view text) { return ParseResult{ParseStatus::kError, 0, text}; }

// isspace() in the C locale: what sdssplitargs skips between arguments and requires after a
// closing quote.
bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
}
// What ends an unquoted argument in sdssplitargs (not \v or \f: those stay inside it).
bool ends_bare_word(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

ParseResult Parser::parse(std::string_view data, const ParserLimits& limits,
                          std::vector<std::string_view>& args) {
  if (data.empty()) return need_more();
  if (state_.in_multibulk || data[0] == '*') return parse_multibulk(data, limits, args);
  return parse_inline(data, args);
}

// A whole multibulk command already in `data`, every header plain: parsed straight into `args`.
// False (and nothing consumed) otherwise; parse_multibulk then takes it, exactly and resumably.
bool Parser::parse_complete(std::string_view data, const ParserLimits& limits,
                            std::vector<std::string_view>& args, std::size_t& consumed) {
  long long count = 0;
  std::size_t at = 0;
  if (!quick_header(data, 0, count, at) || count <= 0 ||
      count > static_cast<long long>(limits.authenticated ? limits.max_multibulk_len
                                                          : kUnauthenticatedArgs))
    return false;
  const std::size_t max_bulk = limits.authenticated ? limits.max_bulk_len : kUnauthenticatedBulk;
  args.clear();
  for (long long i = 0; i < count; ++i) {
    long long length = 0;
    std::size_t body = 0;
    if (at >= data.size() || data[at] != '$' || !quick_header(data, at, length, body) ||
        static_cast<unsigned long long>(length) > max_bulk ||
        data.size() - body < static_cast<std::size_t>(length) + 2)
      return false;
    args.push_back(data.substr(body, static_cast<std::size_t>(length)));
    at = body + static_cast<std::size_t>(length) + 2;
  }
  consumed = at;
  return true;
}

ParseResult Parser::parse_multibulk(std::string_view data, const ParserLimits& limits,
                                    std::vector<std::string_view>& args) {
  if (!state_.in_multibulk) {
    std::size_t consumed = 0;
    if (parse_complete(data, limits, args, consumed))
      return ParseResult{ParseStatus::kCommand, consumed, {}};
  }
  if (!state_.in_multibulk) {
    long long quick_count = 0;
    std::size_t after = 0;
    if (quick_header(data, 0, quick_count, after) && quick_count > 0 &&
        quick_count <= static_cast<long long>(limits.max_multibulk_len) &&
        (limits.authenticated || quick_count <= static_cast<long long>(kUnauthenticatedArgs))) {
      state_ = State{true, static_cast<std::size_t>(quick_count), after};
      pending_.clear();
    }
  }
  if (!state_.in_multibulk) {
    const std::size_t cr = find_line_end(data, 0, '\r');
    if (cr == std::string_view::npos) {
      if (data.size() > kMaxLineWithoutEnd)
        return error("ERR Protocol error: too big mbulk count string");
      return need_more();
    }
    if (cr + 1 >= data.size()) return need_more();  // the LF after the CR (Redis does not check it)
    long long count = 0;
    if (!parse_length(data.substr(1, cr - 1), count) || count > std::numeric_limits<int>::max())
      return error("ERR Protocol error: invalid multibulk length");
    if (!limits.authenticated && count > static_cast<long long>(kUnauthenticatedArgs))
      return error("ERR Protocol error: unauthenticated multibulk length");
    if (count > static_cast<long long>(limits.max_multibulk_len))
      return error("ERR Protocol error: invalid multibulk length");
    if (count <= 0) return ParseResult{ParseStatus::kEmpty, cr + 2, {}};
    state_ = State{true, static_cast<std::size_t>(count), cr + 2};
    pending_.clear();
  }
  while (pending_.size() < state_.expected) {
    const std::size_t at = state_.cursor;
    if (at >= data.size()) return need_more();
    long long quick_length = 0;
    std::size_t quick_body = 0;
    if (data[at] == '$' && quick_header(data, at, quick_length, quick_body) &&
        static_cast<unsigned long long>(quick_length) <= limits.max_bulk_len &&
        (limits.authenticated || quick_length <= static_cast<long long>(kUnauthenticatedBulk))) {
      const auto len = static_cast<std::size_t>(quick_length);
      if (data.size() - quick_body < len + 2)
        return ParseResult{ParseStatus::kNeedMore, 0, {}, quick_body + len + 2};
      pending_.push_back(Arg{quick_body, len});
      state_.cursor = quick_body + len + 2;
      continue;
    }
    // As Redis: the header line must have ended before its first byte is judged.
    const std::size_t cr = find_line_end(data, at, '\r');
    if (cr == std::string_view::npos) {
      if (data.size() - at > kMaxLineWithoutEnd) {
        state_ = State{};
        return error("ERR Protocol error: too big bulk count string");
      }
      return need_more();
    }
    if (cr + 1 >= data.size()) return need_more();
    if (data[at] != '$') {
      // Redis's text with the offending byte (CR and LF shown as a space, as addReplyErrorFormat
      // does). The parser's own buffer keeps the view valid until the next parse().
      error_text_ = "ERR Protocol error: expected '$', got ' '";
      if (data[at] != '\r' && data[at] != '\n') error_text_[error_text_.size() - 2] = data[at];
      state_ = State{};
      return error(error_text_);
    }
    long long length = 0;
    if (!parse_length(data.substr(at + 1, cr - at - 1), length) || length < 0 ||
        static_cast<unsigned long long>(length) > limits.max_bulk_len) {
      state_ = State{};
      return error("ERR Protocol error: invalid bulk length");
    }
    if (!limits.authenticated && length > static_cast<long long>(kUnauthenticatedBulk)) {
      state_ = State{};
      return error("ERR Protocol error: unauthenticated bulk length");
    }
    const std::size_t body = cr + 2;
    const auto len = static_cast<std::size_t>(length);
    if (data.size() - body < len + 2)
      return ParseResult{ParseStatus::kNeedMore, 0, {}, body + len + 2};
    pending_.push_back(Arg{body, len});
    state_.cursor = body + len + 2;  // Redis does not check the bulk's trailing CRLF either
  }
  args.clear();
  for (const Arg& a : pending_) args.push_back(data.substr(a.offset, a.length));
  const std::size_t consumed = state_.cursor;
  state_ = State{};
  return ParseResult{ParseStatus::kCommand, consumed, {}};
}

// Splits one line like Redis's sdssplitargs: blanks separate, "..." understands \n \r \t \b \a,
// any other escaped character as itself, and \xHH; '...' understands \'; a closing quote must be
// followed by a blank or the end of the line.
ParseResult Parser::parse_inline(std::string_view data, std::vector<std::string_view>& args) {
  const std::size_t newline = find_line_end(data, 0, '\n');
  if (newline == std::string_view::npos) {
    if (data.size() > kMaxLineWithoutEnd)
      return error("ERR Protocol error: too big inline request");
    return need_more();
  }
  std::string_view line = data.substr(0, newline);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

  // Arguments are unescaped into inline_storage_, so its buffer must not move once views into it
  // exist: reserve the whole line first (an inline request never grows when unescaped).
  inline_storage_.clear();
  inline_storage_.reserve(line.size());
  inline_spans_.clear();
  const auto unbalanced = [] { return error("ERR Protocol error: unbalanced quotes in request"); };
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i >= line.size()) break;
    const std::size_t start = inline_storage_.size();
    enum class Quote { kNone, kDouble, kSingle } quote = Quote::kNone;
    bool done = false;
    while (!done) {
      if (quote != Quote::kNone && i >= line.size()) return unbalanced();
      if (quote == Quote::kNone && (i >= line.size() || ends_bare_word(line[i]))) break;
      const char c = line[i];
      const bool has_next = i + 1 < line.size();
      if (quote == Quote::kDouble) {
        if (c == '\\' && i + 3 < line.size() && line[i + 1] == 'x' && hex_value(line[i + 2]) >= 0 &&
            hex_value(line[i + 3]) >= 0) {
          inline_storage_.push_back(
              static_cast<char>(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3])));
          i += 4;
        } else if (c == '\\' && has_next) {
          char escaped = line[i + 1];
          switch (escaped) {
            case 'n':
              escaped = '\n';
              break;
            case 'r':
              escaped = '\r';
              break;
            case 't':
              escaped = '\t';
              break;
            case 'b':
              escaped = '\b';
              break;
            case 'a':
              escaped = '\a';
              break;
            default:
              break;
          }
          inline_storage_.push_back(escaped);
          i += 2;
        } else if (c == '"') {
          if (has_next && !is_space(line[i + 1])) return unbalanced();
          done = true;
          ++i;
        } else {
          inline_storage_.push_back(c);
          ++i;
        }
      } else if (quote == Quote::kSingle) {
        if (c == '\\' && has_next && line[i + 1] == '\'') {
          inline_storage_.push_back('\'');
          i += 2;
        } else if (c == '\'') {
          if (has_next && !is_space(line[i + 1])) return unbalanced();
          done = true;
          ++i;
        } else {
          inline_storage_.push_back(c);
          ++i;
        }
      } else {
        if (c == '"') {
          quote = Quote::kDouble;
        } else if (c == '\'') {
          quote = Quote::kSingle;
        } else {
          inline_storage_.push_back(c);
        }
        ++i;
      }
    }
    inline_spans_.push_back(Arg{start, inline_storage_.size() - start});
  }
  if (inline_spans_.empty()) return ParseResult{ParseStatus::kEmpty, newline + 1, {}};
  args.clear();
  for (const Arg& a : inline_spans_)
    args.push_back(std::string_view(inline_storage_).substr(a.offset, a.length));
  return ParseResult{ParseStatus::kCommand, newline + 1, {}};
}

}  // namespace chronocached::resp
