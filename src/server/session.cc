#include "server/session.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "server/base/ascii.h"
#include "server/commands/command_table.h"
#include "server/net/socket.h"
#include "server/resp/reply_writer.h"

namespace chronocached {
namespace {

// Unsent reply bytes past which a client's commands wait until it catches up (still read).
constexpr std::size_t kPauseOutputBytes = 1 << 20;
// Bytes asked of the socket per read (more when a large bulk is under way).
constexpr std::size_t kReadChunk = 16 * 1024;

// An HTTP request sent to this port, by a web page that makes a browser POST to it (cross-protocol
// scripting), reads as commands: its request line's "POST" and its header's "Host:". Redis
// closes such a client at once, with no reply to the request or to the commands before it in
// the batch; so do we, before the request can reach MULTI or a command.
//
// Asked of every command, so the first byte rules out most names before the full comparison
// (callgrind, GET and SET: 46 -> 24 instructions a call out of line).
bool is_http_request(std::string_view name) {
  const char first = name.empty() ? '\0' : ascii_lower(name[0]);
  if (first != 'p' && first != 'h') return false;
  return option_is(name, "post") || option_is(name, "host:");
}

}  // namespace

Session::Session(SessionHost& host, ServerState& state, net::EventLoop& loop, IoCounters& io,
                 int fd, std::uint64_t id)
    : host_(host), state_(state), loop_(loop), io_(io), fd_(fd) {
  client_.id = id;
  client_.fd = fd;
  client_.address = net::peer_address(fd);
  client_.local_address = net::local_address(fd);
  client_.on_this_host = net::is_loopback_peer(fd);
  client_.created_ms = host.unix_ms();
  client_.last_active_ms = host.unix_ms();
  client_.authenticated = state_.config.requirepass.empty();
  client_.output = &output_;
  state_.clients.by_id.emplace(id, &client_);
  loop.add(fd, true, false, this);
  note_buffer_bytes();  // the session itself counts from the start
}

Session::~Session() {
  state_.memory.add_client_bytes(0 - counted_bytes_);
  state_.clients.by_id.erase(client_.id);
  std::erase(state_.clients.monitors, &client_);
  if (client_.watching) state_.keyspace.watches().unwatch_all(client_.id);
  loop_.remove(fd_);
  close(fd_);
}

void Session::on_ready(std::uint32_t events) {
  if ((events & (EPOLLERR | EPOLLHUP)) != 0 && (events & EPOLLIN) == 0) {
    closed_ = true;
    host_.schedule_close(client_.id);
    return;
  }
  if ((events & EPOLLIN) != 0 && !client_.close_after_reply && !input_ended_) read_and_process();
  if (!closed_) flush();
  // What was read while paused waits in the buffer, and no EPOLLIN need announce it: run it now.
  // A loop, because the flush may drain everything that run produced. It ends when the buffered
  // commands are done or the socket stops taking bytes.
  while (paused_ && !closed_ && output_.size() - sent_ < kPauseOutputBytes / 2) {
    paused_ = false;
    process();
    flush();
  }
  if (input_ended_ && !paused_ && !client_.close_after_reply) {  // all it sent has run
    const HostLock lock(host_);  // CLIENT LIST on another loop reads the flag ('c')
    client_.close_after_reply = true;
  }
  update_interest();
  if (closing()) host_.schedule_close(client_.id);
}

// A command postponed again lists the session again (host_.postpone), so that the next wakeup
// retries it: the loop's list was emptied to call this.
void Session::resume() {
  postponed_ = false;
  process();
  flush();
  update_interest();
  if (closing()) host_.schedule_close(client_.id);
}

void Session::read_and_process() {
  const std::size_t unread = input_.unread_size();
  // Room for as much again as is buffered (doubling keeps an unknown size linear), but no more
  // than the rest of a bulk whose size was announced: the buffer ends at the value's exact size,
  // and a client that announces a huge bulk and stalls has not made us reserve it.
  std::size_t room = std::max(kReadChunk, unread);
  if (wanted_bytes_ > unread) room = std::max(kReadChunk, std::min(room, wanted_bytes_ - unread));
  char* space = input_.prepare(room);
  io_.reads.fetch_add(1, std::memory_order_relaxed);
  const ssize_t n = read(fd_, space, input_.free_space());
  if (n == 0) {
    // The client sends no more (closed, or shut down its writing half): what it sent before
    // still runs, a backed-up client's as its replies drain, as Redis runs them before it reads
    // the end. (Redis then drops the replies; we write them to a half-closed client.)
    input_ended_ = true;
    return;
  }
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) closed_ = true;
    return;
  }
  input_.commit(static_cast<std::size_t>(n));
  io_.input.fetch_add(static_cast<std::size_t>(n), std::memory_order_relaxed);
  if (!paused_) return process();
  // Backed up: the bytes wait for their turn. Not reading them would deadlock a client that
  // writes its whole pipeline before it reads a reply (redis-py's), blocked in its write as we
  // wait for it to read; client-query-buffer-limit bounds them instead.
  const HostLock lock(host_);
  if (over_query_limit()) closed_ = true;
  note_buffer_bytes();
}

void Session::refuse_http_request() {
  if (host_.unix_ms() - state_.http_request_logged_ms > 60'000) {
    state_.http_request_logged_ms = host_.unix_ms();
    state_.logger.log("warning", "Closed client id=" + std::to_string(client_.id) +
                                     " addr=" + client_.address +
                                     ": it sent an HTTP request (POST or Host:), which a web page "
                                     "may send to attack a cache through a browser");
  }
  output_.resize(sent_);  // the batch's replies are not sent either
  closed_ = true;
}

// Checked after processing, so only a command that cannot complete within the limit counts.
bool Session::over_query_limit() {
  if (input_.unread_size() <= static_cast<std::size_t>(state_.config.client_query_buffer_limit))
    return false;
  state_.logger.log("warning", "Closing client that reached max query buffer length: id=" +
                                   std::to_string(client_.id) + " addr=" + client_.address);
  return true;
}

// Prefetches the table lines, then the records, of the framed commands' keys, so that a pipelined
// batch overlaps its cache misses instead of taking them one command at a time. Only a hint.
void Session::prefetch_keys() {
  if (framed_.size() < 2) return;
  const Db& db = state_.keyspace.db(client_.db);
  // Cluster mode only: there the hash carries the slot's CRC, which the hint saves twice (the
  // cluster check, the lookup); with cluster mode off the hint's bookkeeping measured dearer than
  // the hash it saves (make bench-cluster).
  KeyHashHints* hints = state_.cluster ? &state_.keyspace.hash_hints() : nullptr;
  std::array<std::uint64_t, resp::FramedBatch::kMaxCommands> hashes;
  std::size_t count = 0;
  for (std::size_t i = 0; i < framed_.size(); ++i) {
    const std::span<const std::string_view> args = framed_.peek(i).args;
    if (args.size() < 2) continue;
    const CommandSpec* spec = find_command(args[0]);
    if (spec == nullptr || spec->first_key != 1) continue;
    hashes[count++] = db.prefetch_table(args[1]);
    if (hints != nullptr) hints->add(args[1], hashes[count - 1]);
  }
  if (count < 2) return;
  for (std::size_t i = 0; i < count; ++i) db.prefetch_record(hashes[i]);
}

// proto-max-bulk-len, as this loop last copied it unless given, capped at what a Blob can hold:
// a longer argument is refused at its header, instead of failing Blob's size check (which stops
// the process) once all its bytes have arrived.
resp::ParserLimits Session::parser_limits() const {
  return parser_limits(host_.client_limits().max_bulk_len);
}

resp::ParserLimits Session::parser_limits(std::size_t max_bulk_len) const {
  resp::ParserLimits limits;
  limits.max_bulk_len = std::min(max_bulk_len, Blob::kMaxBytes);
  limits.authenticated = client_.authenticated;
  return limits;
}

// Outside the state lock: the parse is about a quarter of a GET's instructions in process(), and
// a loop that holds the lock for it holds up every other loop (docs/design/server.md, "Framing
// outside the lock").
// Only the connection's own state is read: its buffer, its parser, and `authenticated`, which
// only its own commands change.
void Session::frame_ahead() {
  framed_.clear();
  if (paused_ || postponed_ || client_.close_after_reply || !client_.authenticated) return;
  const resp::ParserLimits limits = parser_limits();
  framed_max_bulk_len_ = limits.max_bulk_len;
  framed_.frame(parser_, input_.unread(), limits);
}

// The framed commands first, while the client stays authenticated (RESET may end that, and the
// rest is then parsed under the tighter limits); then the parser, from where they end.
resp::ParseResult Session::next_command(const resp::ParserLimits& limits,
                                        std::span<const std::string_view>& args) {
  if (!framed_.empty() && client_.authenticated) {
    const resp::FramedBatch::Command command = framed_.next();
    args = command.args;
    return resp::ParseResult{resp::ParseStatus::kCommand, command.consumed, {}, 0};
  }
  framed_.clear();
  // Past the framed batch, the read buffer may move: its keys' hints must not outlive it.
  state_.keyspace.hash_hints().clear();
  const resp::ParseResult parsed = parser_.parse(input_.unread(), limits, args_);
  args = args_;
  return parsed;
}

void Session::process() {
  frame_ahead();
  const HostLock lock(host_);
  // The batch's hash hints point into this connection's buffer: none may reach another batch.
  struct ClearHints {
    KeyHashHints& hints;
    ~ClearHints() { hints.clear(); }
  } const clear_hints{state_.keyspace.hash_hints()};
  // After a SHUTDOWN decided on another loop, nothing more runs: the final save is done.
  if (state_.shutdown_requested) return;
  client_.last_active_ms = host_.unix_ms();
  resp::ReplyWriter writer(output_);
  resp::ParserLimits limits = parser_limits();
  std::uint64_t config_seen = state_.config_generation;
  // A CONFIG SET on another loop changed the limit the batch was framed under: parse it again.
  if (limits.max_bulk_len != framed_max_bulk_len_) framed_.clear();
  note_buffer_bytes();  // CLIENT LIST's qbuf: the whole batch while it runs, as Redis's
  prefetch_keys();
  while (!client_.close_after_reply && !closed_ && !client_.killed) {
    if (output_.size() - sent_ >= kPauseOutputBytes) {
      paused_ = true;
      break;
    }
    limits.authenticated = client_.authenticated;
    std::span<const std::string_view> args;
    const resp::ParseResult parsed = next_command(limits, args);
    wanted_bytes_ = parsed.wanted;
    if (parsed.status == resp::ParseStatus::kNeedMore) break;
    // CLIENT REPLY OFF/SKIP: what this request answers, a protocol error too, is not sent.
    writer.drop_silenced();
    writer.set_silenced(client_.replies_silenced());
    if (parsed.status == resp::ParseStatus::kEmpty) {
      input_.consume(parsed.consumed);
      client_.end_request();  // an empty line spends a SKIP, as in Redis
      continue;
    }
    if (parsed.status == resp::ParseStatus::kError) {
      writer.error(parsed.error);
      count_error_reply(state_, parsed.error);
      state_.logger.log("verbose", "Protocol error (" + std::string(parsed.error) +
                                       ") from client: id=" + std::to_string(client_.id) +
                                       " addr=" + client_.address);
      client_.close_after_reply = true;
      input_.consume(input_.unread_size());
      parser_.reset();
      break;
    }
    if (is_http_request(args[0])) {
      refuse_http_request();
      break;
    }
    writer.set_protocol(client_.protocol);
    CommandContext ctx{args, writer, client_, state_, host_.now(), host_.unix_ms()};
    if (!execute(ctx)) {  // CLIENT PAUSE: the command stays in the buffer, the loop retries it
      if (!postponed_) host_.postpone(client_.id);
      postponed_ = true;
      client_.blocked = true;
      break;
    }
    postponed_ = false;
    client_.blocked = false;
    if (state_.debug.clock_moved) {
      state_.debug.clock_moved = false;
      host_.refresh_clock();
    }
    if (state_.config_generation != config_seen) {
      // A CONFIG SET of this batch: what follows it is parsed under its proto-max-bulk-len, as
      // Redis parses each command after running the one before.
      config_seen = state_.config_generation;
      limits = parser_limits(static_cast<std::size_t>(state_.config.proto_max_bulk_len));
      framed_.clear();
    }
    client_.end_request();
    input_.consume(parsed.consumed);
  }
  framed_.clear();  // views into the input, which the next read may move
  if (over_query_limit()) closed_ = true;
  note_buffer_bytes();
}

bool Session::flush() {
  if (sent_ < output_.size()) io_.writes.fetch_add(1, std::memory_order_relaxed);
  while (sent_ < output_.size()) {
    const ssize_t n = write(fd_, output_.data() + sent_, output_.size() - sent_);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      closed_ = true;
      return false;
    }
    sent_ += static_cast<std::size_t>(n);
    io_.output.fetch_add(static_cast<std::size_t>(n), std::memory_order_relaxed);
  }
  const std::size_t pending = output_.size() - sent_;
  if (pending == 0) {
    output_.clear();
    sent_ = 0;
    soft_limit_since_ms_ = 0;
  } else if (over_output_limit(pending)) {
    const HostLock lock(host_);  // the log is shared
    state_.logger.log("warning", "Client id=" + std::to_string(client_.id) +
                                     " addr=" + client_.address +
                                     " closed for overcoming of output buffer limits.");
    closed_ = true;
    return false;
  } else if (sent_ >= output_.size() / 2) {
    // A client that reads steadily but never quite catches up would otherwise keep every reply
    // it was ever sent. Dropping the sent half moves at most as many bytes as were sent.
    output_.erase(0, sent_);
    sent_ = 0;
  }
  note_buffer_bytes();
  return true;
}

// client-output-buffer-limit's normal class, as Redis applies it: past the hard limit at once,
// past the soft limit when it has stayed past it for more than soft-seconds. 0 disables a limit.
bool Session::over_output_limit(std::size_t pending) {
  const ClientLimits& limits = host_.client_limits();
  const std::size_t hard = limits.hard_bytes;
  const std::size_t soft = limits.soft_bytes;
  if (hard > 0 && pending > hard) return true;
  if (soft == 0 || pending <= soft) {
    soft_limit_since_ms_ = 0;
    return false;
  }
  if (soft_limit_since_ms_ == 0) {
    soft_limit_since_ms_ = host_.unix_ms();
    return false;
  }
  return host_.unix_ms() - soft_limit_since_ms_ > limits.soft_seconds * 1000;
}

// Keeps CLIENT LIST's buffer figures current, and maxmemory's count of client memory with them
// (a running sum: O(1) per update, never a walk over the clients). Called when a batch starts
// and ends, so while it runs qbuf is the whole batch: Redis trims its query buffer only after
// running every command in it. What a client costs is the session and its buffers' capacities,
// as Redis counts a client's struct and its buffers' allocations: 1 000 idle connections are
// ~17 MB that maxmemory and INFO's mem_clients_normal see (the bytes waiting in them, counted
// before, were ~0).
void Session::note_buffer_bytes() {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const std::size_t query = input_.unread_size();
  const std::size_t output = output_.size() - sent_;
  const std::size_t footprint = sizeof(Session) + input_.capacity() + output_.capacity();
  // Only a change touches the shared sum: its cache line is every loop's.
  if (footprint != counted_bytes_) {
    state_.memory.add_client_bytes(footprint - counted_bytes_);
    counted_bytes_ = footprint;
  }
  client_.query_buffer_bytes.store(query, kRelaxed);
  client_.output_buffer_bytes.store(output, kRelaxed);
  client_.query_buffer_capacity.store(input_.capacity(), kRelaxed);
  client_.output_buffer_capacity.store(output_.capacity(), kRelaxed);
  client_.output_sent_bytes.store(sent_, kRelaxed);
}

void Session::take_monitor_feed() {
  output_ += client_.monitor_feed;
  client_.monitor_feed.clear();
}

void Session::update_interest() {
  if (closed_) return;
  const bool read = !client_.close_after_reply && !input_ended_;
  const bool write = output_.size() > sent_;
  if (read != interest_read_ || write != interest_write_) {
    interest_read_ = read;
    interest_write_ = write;
    loop_.modify(fd_, read, write, this);
  }
}

void Session::shrink_buffers(BufferPeaks& peaks, std::int64_t unix_s) {
  // Before the burst's memory goes: the query buffer as allocated and the replies waiting past
  // Redis's fixed buffer, as Redis's clientsCron tracks them.
  peaks.note(unix_s, input_.capacity(), reply_list_bytes(output_.size() - sent_));
  input_.shrink();
  if (output_.empty() && output_.capacity() > (64u << 10)) std::string().swap(output_);
  note_buffer_bytes();
}

}  // namespace chronocached
