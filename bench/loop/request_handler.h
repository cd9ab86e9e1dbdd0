// RequestHandler: the one handling path of loop_bench, shared by both event loops so that the
// loops are the only difference between the modes measured (docs/performance.md, "io_uring
// against epoll at pipeline 1").
//
// It parses RESP2 arrays (what redis-benchmark sends), runs GET, SET and PING on a
// std::unordered_map and appends RESP2 replies. Nothing here knows about sockets: a loop hands
// in the bytes it received and sends what the handler appended to ClientBuffers::output.
//
//   loop (epoll or io_uring)          RequestHandler
//   bytes received ───────────────▶ feed(): complete commands run now, a partial one is kept
//   ClientBuffers::output ◀──────── one reply per command, appended in order
//
// Deliberately minimal: no inline commands, no expiry, no other commands (each gets an error
// reply), at most kMaxArgs arguments of at most kMaxBulkBytes each.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace chronocache::loop_bench {

// What one connection carries between two receives.
struct ClientBuffers {
  std::string input;   // the unparsed tail of what was received (an incomplete command)
  std::string output;  // replies not yet handed to the kernel
};

enum class FeedOutcome : unsigned char { kOk, kProtocolError };

class RequestHandler {
 public:
  // Runs every complete command in client.input followed by `received`, appends their replies
  // to client.output and keeps an incomplete tail in client.input. `received` is only read
  // during the call (a loop may pass a buffer it recycles right after). kProtocolError: the
  // connection should be closed; replies of the commands before the bad one are appended.
  [[nodiscard]] FeedOutcome feed(ClientBuffers& client, std::string_view received);

  std::size_t keys() const { return store_.size(); }

 private:
  // Hashes a std::string and a std::string_view alike, so a GET looks up the parsed key
  // without building a temporary std::string.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
      return std::hash<std::string_view>{}(key);
    }
  };

  // Parses and runs commands from the front of `data`; returns the bytes consumed (a prefix of
  // whole commands), or kBadInput.
  std::size_t run_commands(std::string_view data, std::string& output);

  static constexpr std::size_t kBadInput = static_cast<std::size_t>(-1);

  std::unordered_map<std::string, std::string, KeyHash, std::equal_to<>> store_;
};

}  // namespace chronocache::loop_bench
