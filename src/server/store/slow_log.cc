#include "server/store/slow_log.h"

#include <algorithm>

namespace chronocached {
namespace {

// An argument as the log keeps it: cut at kMaxArgBytes, with what was cut counted.
std::string kept_argument(std::string_view arg) {
  if (arg.size() <= SlowLog::kMaxArgBytes) return std::string(arg);
  std::string kept(arg.substr(0, SlowLog::kMaxArgBytes));
  kept += "... (" + std::to_string(arg.size() - SlowLog::kMaxArgBytes) + " more bytes)";
  return kept;
}

}  // namespace

void SlowLog::push(const Command& command) {
  Entry entry;
  entry.id = next_id_++;
  entry.unix_seconds = command.unix_seconds;
  entry.usec = command.usec;
  const std::size_t argc = command.args.size();
  const std::size_t kept = std::min(argc, kMaxArgs);
  entry.args.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    if (kept < argc && i == kept - 1) {
      // The last kept place says how many did not fit (counting the one it takes).
      entry.args.push_back("... (" + std::to_string(argc - kept + 1) + " more arguments)");
    } else if (i < 64 && (command.redacted >> i & 1) != 0) {
      entry.args.emplace_back("(redacted)");
    } else {
      entry.args.push_back(kept_argument(command.args[i]));
    }
  }
  entry.peer = command.peer;
  entry.client_name = command.client_name;
  entries_.push_front(std::move(entry));
  while (entries_.size() > settings_.max_len) entries_.pop_back();
}

}  // namespace chronocached
