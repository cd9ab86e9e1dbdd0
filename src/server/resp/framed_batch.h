// resp::FramedBatch: the complete commands at the front of a client's input, framed before they
// run, so that a loop frames a pipelined batch outside the state lock and holds the lock only to
// run it (Session::process), and the key prefetch reads the same framing instead of its own.
//
//   input:  *2 $3 GET $1 a | *3 $3 SET $1 b $1 x | *2 $3 GE    (partial)
//   batch:  [GET a, 20 bytes] [SET b x, 29 bytes]              next() hands them out in order
//
// Only commands that Parser::peek frames (complete, plainly framed multibulk) are taken; the
// first one it cannot frame (partial, inline, empty, malformed, over a limit) ends the batch, and
// the caller parses from there as before. So each framed command is exactly what Parser::parse
// would return at that point (tests/fuzz/resp_fuzz.cc checks this on every input).
//
// The argument views point into the input: valid while its bytes stay where they are
// (consuming from the front keeps them; reading more into the buffer may move them). Bounded:
// at most kMaxCommands commands and kMaxArgs arguments, so a connection's framing costs at most a
// few KiB however long its pipeline; the rest of a longer batch is parsed as it runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "server/resp/parser.h"

namespace chronocached::resp {

class FramedBatch {
 public:
  static constexpr std::size_t kMaxCommands = 32;
  static constexpr std::size_t kMaxArgs = 256;

  struct Command {
    std::span<const std::string_view> args;
    std::size_t consumed;  // this command's bytes, counted from the end of the previous one
  };

  // Replaces the batch with the commands framed at the front of `data` under `limits`.
  // `parser` must not be inside a partly parsed command (peek frames nothing then).
  void frame(Parser& parser, std::string_view data, const ParserLimits& limits);

  // Commands not yet handed out.
  std::size_t size() const noexcept { return commands_.size() - next_; }
  bool empty() const noexcept { return next_ == commands_.size(); }
  // The i-th command not yet handed out (i < size()), without handing it out.
  Command peek(std::size_t i) const noexcept { return command(commands_[next_ + i]); }
  // Hands out the next command (precondition: !empty()).
  Command next() noexcept { return command(commands_[next_++]); }
  // Drops what is left: the input moved, or the rest must be parsed under other limits.
  void clear() noexcept {
    commands_.clear();
    args_.clear();
    next_ = 0;
  }

 private:
  struct Entry {
    std::uint32_t first_arg;
    std::uint32_t arg_count;
    std::size_t consumed;
  };
  Command command(const Entry& e) const noexcept {
    return Command{std::span<const std::string_view>(args_).subspan(e.first_arg, e.arg_count),
                   e.consumed};
  }

  std::vector<Entry> commands_;
  std::vector<std::string_view> args_;  // every framed command's arguments, in order
  std::vector<std::string_view> one_;   // the command peek frames (reused)
  std::size_t next_ = 0;
};

}  // namespace chronocached::resp
