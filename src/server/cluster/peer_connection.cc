#include "server/cluster/peer_connection.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

namespace chronocached {
namespace {

// Any timeout is at most ~24.8 days (poll's int of milliseconds): what a caller asks beyond that
// (MIGRATE takes a 64-bit timeout) would overflow the steady clock's deadline.
constexpr std::chrono::milliseconds kLongestWait{std::numeric_limits<int>::max()};

std::chrono::milliseconds bounded(std::chrono::milliseconds timeout) {
  return std::clamp(timeout, std::chrono::milliseconds(0), kLongestWait);
}

int to_poll_ms(std::chrono::milliseconds timeout) {
  return static_cast<int>(bounded(timeout).count());
}

}  // namespace

void append_request(std::string& out, std::span<const std::string_view> args) {
  out.append("*").append(std::to_string(args.size())).append("\r\n");
  for (const std::string_view arg : args)
    out.append("$").append(std::to_string(arg.size())).append("\r\n").append(arg).append("\r\n");
}

std::optional<PeerConnection> PeerConnection::open(const std::string& host, int port,
                                                   std::chrono::milliseconds timeout,
                                                   std::string& error) {
  sockaddr_storage address{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    length = sizeof(sockaddr_in6);
  } else {
    // A name: its first address, as Redis's connect takes (a blocking lookup, as Redis's is).
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int status = getaddrinfo(host.c_str(), nullptr, &hints, &found);
        status != 0 || found == nullptr) {
      error = status != 0 ? gai_strerror(status) : "no address";
      errno = EHOSTUNREACH;
      return std::nullopt;
    }
    std::memcpy(&address, found->ai_addr, found->ai_addrlen);
    length = found->ai_addrlen;
    freeaddrinfo(found);
  }
  // The port's low 16 bits, as htons takes an int (Redis's atoi'd port does the same).
  const auto port_bits = htons(static_cast<std::uint16_t>(port));
  if (address.ss_family == AF_INET)
    v4->sin_port = port_bits;
  else
    v6->sin6_port = port_bits;
  const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  PeerConnection connection(fd);
  errno = 0;
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), length) == 0 ||
                         (errno == EINPROGRESS && connection.wait(POLLOUT, timeout));
  if (!connected) {
    error = std::strerror(errno != 0 ? errno : ETIMEDOUT);
    return std::nullopt;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return connection;
}

std::string PeerConnection::local_ip() const {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
      address.ss_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&address)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&address)->sin_addr);
  return inet_ntop(address.ss_family, raw, text, sizeof text) != nullptr ? text : "";
}

PeerConnection::PeerConnection(PeerConnection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)) {}

PeerConnection& PeerConnection::operator=(PeerConnection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

PeerConnection::~PeerConnection() {
  if (fd_ >= 0) close(fd_);
}

// Waits for `events`; false with errno set (ETIMEDOUT, or the socket's pending error).
bool PeerConnection::wait(short events, std::chrono::milliseconds timeout) {
  pollfd p{fd_, events, 0};
  const int n = poll(&p, 1, to_poll_ms(timeout));
  if (n == 0) errno = ETIMEDOUT;
  if (n == 1 && (p.revents & (POLLERR | POLLNVAL)) != 0) {
    int pending = 0;
    socklen_t size = sizeof pending;
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &pending, &size);
    errno = pending != 0 ? pending : ECONNRESET;
    return false;
  }
  return n == 1;
}

bool PeerConnection::send(std::string_view bytes, std::chrono::milliseconds timeout,
                          std::string& error) {
  const auto deadline = std::chrono::steady_clock::now() + bounded(timeout);
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if ((n < 0 && errno != EAGAIN && errno != EINTR) || left.count() <= 0 || !wait(POLLOUT, left)) {
      if (left.count() <= 0) errno = ETIMEDOUT;
      error = std::strerror(errno);
      return false;
    }
  }
  return true;
}

std::optional<PeerReply> PeerConnection::read_reply(std::chrono::milliseconds timeout,
                                                    std::string& error) {
  const auto deadline = std::chrono::steady_clock::now() + bounded(timeout);
  for (;;) {
    PeerReply reply;
    bool malformed = false;
    if (const std::size_t used = frame_peer_reply(buffer_, reply, malformed); used > 0) {
      buffer_.erase(0, used);
      return reply;
    }
    if (malformed) {
      error = "malformed reply";
      return std::nullopt;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !wait(POLLIN, left)) {
      if (left.count() <= 0) errno = ETIMEDOUT;
      error = std::strerror(errno);
      return std::nullopt;
    }
    char chunk[16384];
    const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
    if (n == 0) {
      errno = ECONNRESET;
      error = "connection closed";
      return std::nullopt;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      error = std::strerror(errno);
      return std::nullopt;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace chronocached
