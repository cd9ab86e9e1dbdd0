// Session: one client connection, bytes in to replies out (Pelikan's process.c, one per client).
//
//   socket --read--> Buffer --Parser--> args --execute()--> ReplyWriter --> output --write-->
//   socket
//
// A readable event reads what the socket has, runs every complete command in it (a pipeline is
// just several), and flushes all their replies with one write. Back-pressure: while a client's
// unsent replies exceed kPauseOutputBytes its commands wait, still read (up to
// client-query-buffer-limit), so a client that never reads holds at most that plus one batch of
// replies; past client-output-buffer-limit it is disconnected.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/net/buffer.h"
#include "server/net/event_loop.h"
#include "server/resp/framed_batch.h"
#include "server/resp/parser.h"
#include "server/server_state.h"
#include "server/session_host.h"

namespace chronocached {

class Session final : public net::EventLoop::Handler {
 public:
  // Serves the connection `fd` (owned from here on) as client `id` of loop `io`'s counters.
  // Built and destroyed under the state lock (it registers in ServerState::clients).
  Session(SessionHost& host, ServerState& state, net::EventLoop& loop, IoCounters& io, int fd,
          std::uint64_t id);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void on_ready(std::uint32_t events) override;
  // Writes pending output; false when the connection must close. Outside the state lock.
  bool flush();
  // Moves the MONITOR lines other commands wrote for this client to its output. Under the lock.
  void take_monitor_feed();
  // Runs what CLIENT PAUSE held back (the pause ended), and sends the replies.
  void resume();
  bool postponed() const { return postponed_; }
  bool closing() const { return closed_ || (client_.close_after_reply && output_.size() == sent_); }
  bool has_output() const { return output_.size() > sent_; }
  // Notes this client's buffers in `peaks` (INFO's client_recent_max_*), then gives back what
  // a burst grew. Under the lock.
  void shrink_buffers(BufferPeaks& peaks, std::int64_t unix_s);

  ClientState& client() { return client_; }

 private:
  void read_and_process();
  void process();
  void frame_ahead();
  resp::ParseResult next_command(const resp::ParserLimits& limits,
                                 std::span<const std::string_view>& args);
  resp::ParserLimits parser_limits() const;
  resp::ParserLimits parser_limits(std::size_t max_bulk_len) const;
  void prefetch_keys();
  void update_interest();
  void note_buffer_bytes();
  bool over_query_limit();
  void refuse_http_request();
  bool over_output_limit(std::size_t pending);

  SessionHost& host_;
  ServerState& state_;
  net::EventLoop& loop_;
  IoCounters& io_;
  int fd_;
  net::Buffer input_;
  std::string output_;
  std::size_t sent_ = 0;
  resp::Parser parser_;
  std::vector<std::string_view> args_;
  // The commands at the front of the input, framed before the lock was taken (frame_ahead), and
  // the proto-max-bulk-len they were framed under.
  resp::FramedBatch framed_;
  std::size_t framed_max_bulk_len_ = 0;
  ClientState client_;
  std::size_t wanted_bytes_ = 0;   // the parser's hint: bytes the partial command needs in all
  std::size_t counted_bytes_ = 0;  // this client's part of MemoryBudget::client_bytes()
  std::int64_t soft_limit_since_ms_ = 0;  // when pending output first passed the soft limit
  bool closed_ = false;
  bool paused_ = false;        // running no command while output is backed up
  bool input_ended_ = false;   // the client sent its end: closed once all it sent has run
  bool postponed_ = false;     // a command waits for CLIENT PAUSE to end
  bool interest_read_ = true;  // what epoll watches for now
  bool interest_write_ = false;
};

}  // namespace chronocached
