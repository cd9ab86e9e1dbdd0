#include "server/resp/parser.h"

#include <charconv>
#include <cstdint>
#include <limits>

namespace chronocached::resp {
namespace {

// Redis reads a length header only if its line ends within 64 KiB (PROTO_INLINE_MAX_SIZE).
constexpr std::size_t kMaxHeaderLine = 64 * 1024;
constexpr std::size_t kMaxInline = 64 * 1024;
constexpr std::size_t kUnauthenticatedArgs = 10;
constexpr std::size_t kUnauthenticatedBulk = 16384;

// Redis's string2ll: optional '-', digits, no leading '+', no spaces, fits in int64.
bool parse_length(std::string_view text, long long& out) {
  if (text.empty() || text.size() > 20) return false;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (*first == '+') return false;
  const auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

ParseResult need_more() { return ParseResult{ParseStatus::kNeedMore, 0, {}}; }

ParseResult error(std::string_view text) { return ParseResult{ParseStatus::kError, 0, text}; }

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'; }

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

ParseResult Parser::parse_multibulk(std::string_view data, const ParserLimits& limits,
                                    std::vector<std::string_view>& args) {
  if (!state_.in_multibulk) {
    const std::size_t cr = data.find('\r', 1);
    if (cr == std::string_view::npos || cr + 1 >= data.size()) {
      if (data.size() > kMaxHeaderLine) return error("ERR Protocol error: too big mbulk count string");
      return need_more();
    }
    if (cr > kMaxHeaderLine) return error("ERR Protocol error: too big mbulk count string");
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
    std::size_t at = state_.cursor;
    if (at >= data.size()) return need_more();
    if (data[at] != '$') {
      // Redis's text, with the offending byte. A static buffer per parser keeps the view valid.
      inline_storage_ = "ERR Protocol error: expected '$', got ' '";
      inline_storage_[inline_storage_.size() - 2] = data[at];
      state_ = State{};
      return error(inline_storage_);
    }
    const std::size_t cr = data.find('\r', at + 1);
    if (cr == std::string_view::npos || cr + 1 >= data.size()) {
      if (data.size() - at > kMaxHeaderLine) {
        state_ = State{};
        return error("ERR Protocol error: too big bulk count string");
      }
      return need_more();
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
    if (data.size() < body + len + 2) return need_more();
    pending_.push_back(Arg{body, len});
    state_.cursor = body + len + 2;  // Redis does not check the bulk's trailing CRLF either
  }
  args.clear();
  for (const Arg& a : pending_) args.push_back(data.substr(a.offset, a.length));
  const std::size_t consumed = state_.cursor;
  state_ = State{};
  return ParseResult{ParseStatus::kCommand, consumed, {}};
}

// Splits one line like Redis's sdssplitargs: spaces separate, "..." understands \n \r \t \b \a
// \\ \" and \xHH, '...' understands \', and a closing quote must be followed by a space.
ParseResult Parser::parse_inline(std::string_view data, std::vector<std::string_view>& args) {
  const std::size_t newline = data.find('\n');
  if (newline == std::string_view::npos) {
    if (data.size() > kMaxInline) return error("ERR Protocol error: too big inline request");
    return need_more();
  }
  if (newline > kMaxInline) return error("ERR Protocol error: too big inline request");
  std::string_view line = data.substr(0, newline);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

  // Arguments are unescaped into inline_storage_, so its buffer must not move once views into it
  // exist: reserve the whole line first (an inline request never grows when unescaped).
  inline_storage_.clear();
  inline_storage_.reserve(line.size());
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i >= line.size()) break;
    const std::size_t start = inline_storage_.size();
    bool in_double = false, in_single = false, done = false;
    while (!done) {
      if (in_double) {
        if (i >= line.size()) return error("ERR Protocol error: unbalanced quotes in request");
        const char c = line[i];
        if (c == '\\' && i + 3 < line.size() && line[i + 1] == 'x' && hex_value(line[i + 2]) >= 0 &&
            hex_value(line[i + 3]) >= 0) {
          inline_storage_.push_back(static_cast<char>(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3])));
          i += 4;
        } else if (c == '\\' && i + 1 < line.size()) {
          char e = line[i + 1];
          switch (e) {
            case 'n': e = '\n'; break;
            case 'r': e = '\r'; break;
            case 't': e = '\t'; break;
            case 'b': e = '\b'; break;
            case 'a': e = '\a'; break;
            default: break;
          }
          inline_storage_.push_back(e);
          i += 2;
        } else if (c == '"') {
          if (i + 1 < line.size() && !is_space(line[i + 1]))
            return error("ERR Protocol error: unbalanced quotes in request");
          done = true;
          ++i;
        } else {
          inline_storage_.push_back(c);
          ++i;
        }
      } else if (in_single) {
        if (i >= line.size()) return error("ERR Protocol error: unbalanced quotes in request");
        const char c = line[i];
        if (c == '\\' && i + 1 < line.size() && line[i + 1] == '\'') {
          inline_storage_.push_back('\'');
          i += 2;
        } else if (c == '\'') {
          if (i + 1 < line.size() && !is_space(line[i + 1]))
            return error("ERR Protocol error: unbalanced quotes in request");
          done = true;
          ++i;
        } else {
          inline_storage_.push_back(c);
          ++i;
        }
      } else {
        if (i >= line.size()) {
          done = true;
        } else {
          const char c = line[i];
          if (is_space(c)) {
            done = true;
          } else if (c == '"') {
            in_double = true;
            ++i;
          } else if (c == '\'') {
            in_single = true;
            ++i;
          } else {
            inline_storage_.push_back(c);
            ++i;
          }
        }
      }
    }
    spans.emplace_back(start, inline_storage_.size() - start);
  }
  if (spans.empty()) return ParseResult{ParseStatus::kEmpty, newline + 1, {}};
  args.clear();
  for (const auto& [offset, length] : spans)
    args.push_back(std::string_view(inline_storage_).substr(offset, length));
  return ParseResult{ParseStatus::kCommand, newline + 1, {}};
}

}  // namespace chronocached::resp
