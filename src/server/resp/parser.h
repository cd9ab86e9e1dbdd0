// resp::Parser: turns the bytes a client sent into commands, without copying them.
//
// A command's arguments are std::string_views into the caller's buffer, valid while the buffer
// is untouched. "Not all bytes have arrived yet" is a state (kNeedMore), not an error: the parser
// remembers how far it got inside a long multibulk command, so a request that trickles in costs
// linear time, and resumes as long as the caller keeps the unparsed bytes at the same offset
// from the start of the command (the caller may move the whole unparsed tail, not reshape it).
//
// Both of Redis's request forms are accepted:
//   multibulk   *<n>\r\n $<len>\r\n<bytes>\r\n ...   (what every client library sends)
//   inline      SET k "v w"\n                         (a person at telnet or redis-cli's raw mode)
// Limits are checked on the length headers, before any byte of a bulk is waited for, so an
// absurd length is refused without buffering it. Error texts are Redis 7's, verbatim.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace chronocached::resp {

struct ParserLimits {
  std::size_t max_bulk_len = 512u << 20;        // proto-max-bulk-len
  std::size_t max_multibulk_len = 1024 * 1024;  // arguments per command (Redis: INT_MAX)
  bool authenticated =
      true;  // unauthenticated clients get Redis's tighter limits (10 args, 16 KiB)
};

enum class ParseStatus {
  kCommand,   // `args` holds one command; `consumed` bytes belong to it
  kEmpty,     // `consumed` bytes held nothing to run (a blank line, "*0"): skip them
  kNeedMore,  // the command is incomplete; call again with at least the same bytes
  kError,     // a protocol error: reply `error` and close the connection
};

struct ParseResult {
  ParseStatus status;
  std::size_t consumed = 0;
  std::string_view error;  // for kError: the full error text, e.g. "ERR Protocol error: ..."
  // For kNeedMore: the bytes the command needs in all, when a bulk header announced them (0:
  // unknown). Lets the caller make room for a large value once instead of growing step by step.
  std::size_t wanted = 0;
};

class Parser {
 public:
  // Parses the command at the start of `data`. On kCommand, `args` views bytes of `data`.
  ParseResult parse(std::string_view data, const ParserLimits& limits,
                    std::vector<std::string_view>& args);
  // The whole command at the start of `data` when it is complete and plainly framed (the common
  // case), without changing the parser's state: for looking ahead in a pipelined batch.
  bool peek(std::string_view data, const ParserLimits& limits, std::vector<std::string_view>& args,
            std::size_t& consumed) {
    return !state_.in_multibulk && !data.empty() && data[0] == '*' &&
           parse_complete(data, limits, args, consumed);
  }
  // Forget a partly parsed command (the caller discarded its bytes).
  void reset() { state_ = State{}; }

 private:
  bool parse_complete(std::string_view data, const ParserLimits& limits,
                      std::vector<std::string_view>& args, std::size_t& consumed);
  ParseResult parse_multibulk(std::string_view data, const ParserLimits& limits,
                              std::vector<std::string_view>& args);
  ParseResult parse_inline(std::string_view data, std::vector<std::string_view>& args);

  struct Arg {
    std::size_t offset;
    std::size_t length;
  };
  // Progress inside one multibulk command, as offsets from its first byte.
  struct State {
    bool in_multibulk = false;
    std::size_t expected = 0;  // argument count from the header
    std::size_t cursor = 0;    // the next unparsed byte
  };
  State state_;
  std::vector<Arg> pending_;       // arguments parsed so far; reused, so no allocation per command
  std::string inline_storage_;     // unquoted inline arguments (quotes and escapes rewrite bytes)
  std::vector<Arg> inline_spans_;  // an inline command's arguments in inline_storage_
  std::string error_text_;         // an error text that quotes the input ("expected '$', got 'x'")
};

}  // namespace chronocached::resp
