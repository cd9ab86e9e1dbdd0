// PeerConnection: a blocking client connection from this node to another Redis-protocol server,
// for the few commands that must talk to a peer before they answer (CLUSTER MEET asks the peer's
// view; MIGRATE hands keys over). Every step waits at most its timeout, so a peer that is gone or
// silent costs the command that long and no more; Redis's MIGRATE blocks its server the same way.
//
// It reads only the replies those commands get (peer_reply.h: arrays and the rest are kOther).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/cluster/peer_reply.h"

namespace chronocached {

class PeerConnection {
 public:
  // A connection to `host` (an IP address, or a name looked up: its first address) at `port`'s
  // low 16 bits; nullopt with `error` (strerror's or getaddrinfo's text) when it cannot be
  // reached within `timeout`, errno EHOSTUNREACH when the name has no address. Timeouts here are
  // at most ~24.8 days: a longer one waits that long.
  static std::optional<PeerConnection> open(const std::string& host, int port,
                                            std::chrono::milliseconds timeout, std::string& error);
  PeerConnection(PeerConnection&& other) noexcept;
  PeerConnection& operator=(PeerConnection&& other) noexcept;
  PeerConnection(const PeerConnection&) = delete;
  PeerConnection& operator=(const PeerConnection&) = delete;
  ~PeerConnection();

  // Writes all of `bytes` (several commands at once, if they were appended together). False,
  // with `error`, on a failure or the timeout; errno is kept for the caller (ETIMEDOUT).
  bool send(std::string_view bytes, std::chrono::milliseconds timeout, std::string& error);
  // The next reply; nullopt, with `error`, on a failure, the timeout, or bytes that make no reply
  // (frame_peer_reply's malformed: a bulk over 512 MiB, a line over 64 KiB).
  std::optional<PeerReply> read_reply(std::chrono::milliseconds timeout, std::string& error);
  // This end's address, as the peer reaches this host ("" if the system cannot say).
  std::string local_ip() const;

 private:
  explicit PeerConnection(int fd) noexcept : fd_(fd) {}
  bool wait(short events, std::chrono::milliseconds timeout);

  int fd_ = -1;
  std::string buffer_;  // received and not yet returned
};

// Appends one command as a RESP multibulk request.
void append_request(std::string& out, std::span<const std::string_view> args);

}  // namespace chronocached
