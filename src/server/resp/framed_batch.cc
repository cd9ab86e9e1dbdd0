#include "server/resp/framed_batch.h"

#include <algorithm>

namespace chronocached::resp {

void FramedBatch::frame(Parser& parser, std::string_view data, const ParserLimits& limits) {
  clear();
  ParserLimits bounded = limits;
  std::size_t consumed = 0;
  while (commands_.size() < kMaxCommands && args_.size() < kMaxArgs) {
    // A command with more arguments than the batch has room for is refused at its header, so
    // peek never builds a large argument list here: it is left to the parse that runs it.
    bounded.max_multibulk_len = std::min(limits.max_multibulk_len, kMaxArgs - args_.size());
    if (!parser.peek(data, bounded, one_, consumed)) break;
    commands_.push_back(Entry{static_cast<std::uint32_t>(args_.size()),
                              static_cast<std::uint32_t>(one_.size()), consumed});
    args_.insert(args_.end(), one_.begin(), one_.end());
    data.remove_prefix(consumed);
  }
}

}  // namespace chronocached::resp
