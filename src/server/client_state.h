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
  // CLIENT REPLY, as Redis's CLIENT_REPLY_OFF, _SKIP and _SKIP_NEXT flags: what is answered
  // while replies_silenced() is not sent (client_command.cc has the transitions).
  bool reply_off = false;
  bool reply_skip = false;          // silences the request being run
  bool reply_skip_next = false;     // CLIENT REPLY SKIP ran: silences the next request
  std::int64_t created_ms = 0;      // wall clock, for CLIENT LIST age
  std::int64_t last_active_ms = 0;  // wall clock, for idle and timeout
  const CommandSpec* last_command = nullptr;
  // For CLIENT LIST, noted by the session when a batch starts and when it ends. While a batch
  // runs, query_buffer_bytes is the whole batch, commands already run included, as Redis's qbuf.
  std::size_t query_buffer_bytes = 0;     // qbuf
  std::size_t query_buffer_capacity = 0;  // qbuf + qbuf-free
  std::size_t output_buffer_bytes = 0;    // unsent reply bytes
  std::size_t output_sent_bytes = 0;      // sent from the front of *monitor_out, not yet erased
  // The session's output buffer, for MONITOR lines, and for CLIENT LIST's rbs and obl, read
  // live: Redis counts the replies already written by the batch's earlier commands.
  std::string* monitor_out = nullptr;

  // MULTI ... EXEC: commands queued as owned copies (the read buffer moves on).
  bool in_multi = false;
  bool multi_error = false;  // a command failed to queue: EXEC answers EXECABORT
  std::vector<std::vector<std::string>> queued;
  bool watching = false;
  bool in_exec = false;  // EXEC is running the queue: MONITOR (and blocking) are refused
  // WATCHed keys that were live at WATCH: one that is gone at EXEC expired meanwhile, which
  // aborts the transaction as in Redis (the engine's expiry tells no watcher).
  std::vector<std::pair<std::size_t, std::string>> watched_live_keys;

  bool replies_silenced() const { return reply_off || reply_skip; }
  // A request is done (run, refused, or an empty line), as Redis's resetClient: a SKIP it gave
  // silences the next request, and a SKIP that silenced it is spent.
  void end_request() {
    reply_skip = reply_skip_next;
    reply_skip_next = false;
  }
};

}  // namespace chronocached
