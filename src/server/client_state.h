// ClientState: one connection's protocol-level state, as command handlers see it (database,
// authentication, transaction, names, reply mode). Per connection by construction: it belongs to
// the Session that owns the socket, and a later multi-threaded server keeps it on the thread that
// serves that connection (docs/design/threading.md). The bytes and the socket stay with the
// Session and net/, which handlers never see.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace chronocached {

struct CommandSpec;

enum class ReplyMode : std::uint8_t { kOn, kOff, kSkip };

struct ClientState {
  std::uint64_t id = 0;
  std::string name;
  std::string lib_name;
  std::string lib_version;
  std::string address;        // "ip:port" of the peer
  std::string local_address;  // "ip:port" of our end
  int fd = -1;
  std::size_t db = 0;
  int protocol = 2;
  bool authenticated = false;
  bool close_after_reply = false;  // QUIT, a protocol error, CLIENT KILL
  bool monitor = false;
  bool no_evict = false;
  ReplyMode reply_mode = ReplyMode::kOn;
  bool skip_next_reply = false;
  std::int64_t created_ms = 0;      // wall clock, for CLIENT LIST age
  std::int64_t last_active_ms = 0;  // wall clock, for idle and timeout
  const CommandSpec* last_command = nullptr;
  std::size_t query_buffer_bytes = 0;   // for CLIENT LIST qbuf
  std::size_t output_buffer_bytes = 0;  // for CLIENT LIST omem
  std::string* monitor_out = nullptr;   // the session's output buffer, for MONITOR lines

  // MULTI ... EXEC: commands queued as owned copies (the read buffer moves on).
  bool in_multi = false;
  bool multi_error = false;  // a command failed to queue: EXEC answers EXECABORT
  std::vector<std::vector<std::string>> queued;
  bool watching = false;
  bool in_exec = false;  // EXEC is running the queue: MONITOR (and blocking) are refused
  // WATCHed keys that were live at WATCH: one that is gone at EXEC expired meanwhile, which
  // aborts the transaction as in Redis (the engine's expiry tells no watcher).
  std::vector<std::pair<std::size_t, std::string>> watched_live_keys;
};

}  // namespace chronocached
