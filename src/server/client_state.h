// ClientState: one connection's protocol-level state, as command handlers see it (database,
// authentication, transaction, names, reply mode). It belongs to the Session that owns the socket,
// served by one event loop; other loops' commands read it (CLIENT LIST, INFO) and write its
// MONITOR feed under the state lock (server_state.h), like every other field here except the
// buffer figures, which its loop notes outside the lock (atomics). The bytes and the socket stay
// with the Session and net/, which handlers never see.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "chronocache/predict/access_stream.h"

namespace chronocached {

// Redis's PROTO_REPLY_CHUNK_BYTES: the fixed reply buffer that CLIENT LIST's obl describes; the
// bytes waiting past it are what Redis keeps in its reply list (omem, and INFO's
// client_recent_max_output_buffer).
inline constexpr std::size_t kRedisReplyChunkBytes = 16 * 1024;
// Of `waiting` unsent reply bytes, those Redis would hold in its reply list (past the buffer).
inline constexpr std::size_t reply_list_bytes(std::size_t waiting) {
  return waiting > kRedisReplyChunkBytes ? waiting - kRedisReplyChunkBytes : 0;
}

struct CommandSpec;

// --upstream: the GET this client holds back for an upstream fetch, then that fetch's outcome,
// which the retried GET answers if the key is not stored here (a nil, an error, or a value that
// expired or was evicted before the retry).
struct UpstreamWait {
  enum class State : std::uint8_t { kNone, kWaiting, kValue, kNil, kError };
  State state = State::kNone;
  std::string key;
  std::string text;  // the value, or the error reply without its '-'
};

struct ClientState {
  std::uint64_t id = 0;
  std::string name;
  std::string lib_name;
  std::string lib_version;
  std::string address;        // "ip:port" of the peer
  std::string local_address;  // "ip:port" of our end
  bool on_this_host = false;  // the peer is on loopback (enable-protected-configs local)
  int fd = -1;
  std::size_t loop = 0;  // the index of the event loop that serves it
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
  // For CLIENT LIST and INFO, noted by the session when a batch starts and ends and after each
  // write to the socket (relaxed atomics: the loop notes them outside the state lock). While a
  // batch runs, query_buffer_bytes is the whole batch, commands already run included, as
  // Redis's qbuf.
  std::atomic<std::size_t> query_buffer_bytes{0};      // qbuf
  std::atomic<std::size_t> query_buffer_capacity{0};   // qbuf + qbuf-free
  std::atomic<std::size_t> output_buffer_bytes{0};     // unsent reply bytes
  std::atomic<std::size_t> output_buffer_capacity{0};  // rbs
  std::atomic<std::size_t> output_sent_bytes{0};       // sent from the front of *output, not erased
  // The session's output buffer, for the client's own CLIENT LIST (rbs and obl read live: Redis
  // counts the replies already written by the batch's earlier commands). Only the client's own
  // commands may read it: its loop writes it outside the lock.
  const std::string* output = nullptr;
  // CLIENT KILL from another client, of any loop, under the lock: the client runs no more
  // commands (Redis's CLIENT_CLOSE_ASAP) although its own loop closes it only after the killer's
  // batch; read by that loop under the lock.
  bool killed = false;
  // A command held back (CLIENT PAUSE, an --upstream load), as Redis's blocked clients: CLIENT
  // LIST's flag b and INFO's blocked_clients. Written by the client's loop under the lock.
  bool blocked = false;
  // MONITOR lines written by commands of any loop, under the lock; the client's loop moves them
  // to its output after the batch (ClientRegistry::monitor_feed_pending).
  std::string monitor_feed;

  // MULTI ... EXEC: commands queued as owned copies (the read buffer moves on).
  bool in_multi = false;
  bool multi_error = false;  // a command failed to queue: EXEC answers EXECABORT
  std::vector<std::vector<std::string>> queued;
  bool watching = false;
  bool in_exec = false;  // EXEC is running the queue: MONITOR (and blocking) are refused
  // WATCHed keys that were live at WATCH: one that is gone at EXEC expired meanwhile, which
  // aborts the transaction as in Redis (the engine's expiry tells no watcher).
  std::vector<std::pair<std::size_t, std::string>> watched_live_keys;
  bool cluster_readonly = false;  // READONLY (cluster mode): kept, though there are no replicas
  bool cluster_asking = false;    // ASKING: the next command may use a slot being imported
  UpstreamWait upstream;          // written by the fetcher threads under the state lock
  chronocache::AccessStream<std::string> upstream_stream;  // upstream-prefetch: its last read

  bool replies_silenced() const { return reply_off || reply_skip; }
  // A request is done (run, refused, or an empty line), as Redis's resetClient: a SKIP it gave
  // silences the next request, and a SKIP that silenced it is spent.
  void end_request() {
    reply_skip = reply_skip_next;
    reply_skip_next = false;
  }
};

}  // namespace chronocached
