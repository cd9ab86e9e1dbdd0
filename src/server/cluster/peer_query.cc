#include "server/cluster/peer_query.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

namespace chronocached {
namespace {

// A peer's CLUSTER NODES is a line per node: far below this, unless it is not a node at all.
constexpr std::size_t kMaxReply = 1 << 20;

// The text of a complete bulk or verbatim reply in `reply`, or of an error; nullopt while more
// must arrive. `failed` tells an error reply (or a malformed one) from the text.
std::optional<std::string_view> complete_reply(std::string_view reply, bool& failed) {
  const std::size_t line_end = reply.find("\r\n");
  if (line_end == std::string_view::npos) return std::nullopt;
  failed = reply[0] != '$' && reply[0] != '=';
  if (failed) return reply.substr(0, line_end);
  std::size_t length = 0;
  const auto [end, ec] = std::from_chars(reply.data() + 1, reply.data() + line_end, length);
  if (ec != std::errc() || end != reply.data() + line_end || length > kMaxReply) {
    failed = true;
    return reply.substr(0, line_end);
  }
  if (reply.size() < line_end + 2 + length + 2) return std::nullopt;
  std::string_view text = reply.substr(line_end + 2, length);
  if (reply[0] == '=') text.remove_prefix(std::min<std::size_t>(4, text.size()));  // "txt:"
  return text;
}

}  // namespace

std::optional<ClusterMap> ask_peer_map(const std::string& ip, int port, std::string& error) {
  sockaddr_storage address{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof(sockaddr_in6);
  } else {
    error = "not an IP address";
    return std::nullopt;
  }
  const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  const auto ready = [fd](short events) {
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, kPeerTimeoutMs);
    if (n == 0) errno = ETIMEDOUT;
    if (n == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
      int pending = 0;
      socklen_t size = sizeof pending;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &size);
      errno = pending != 0 ? pending : ECONNRESET;
      return false;
    }
    return n == 1;
  };
  constexpr std::string_view kRequest = "*2\r\n$7\r\nCLUSTER\r\n$5\r\nNODES\r\n";
  std::string reply;
  std::optional<std::string_view> text;
  bool failed = false;
  errno = 0;
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), length) == 0 ||
            (errno == EINPROGRESS && ready(POLLOUT));
  ok = ok && send(fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL) ==
                 static_cast<ssize_t>(kRequest.size());
  while (ok && !(text = complete_reply(reply, failed))) {
    char buffer[4096];
    ok = ready(POLLIN);
    const ssize_t n = ok ? recv(fd, buffer, sizeof buffer, 0) : -1;
    ok = n > 0;
    if (ok) reply.append(buffer, static_cast<std::size_t>(n));
  }
  const int saved = errno;
  close(fd);
  if (!ok) {
    error = saved != 0 ? std::strerror(saved) : "no reply in time";
    return std::nullopt;
  }
  if (failed) {
    error = "CLUSTER NODES answered " + std::string(*text);
    return std::nullopt;
  }
  std::optional<ClusterMap> map = ClusterMap::parse(*text, error);
  if (!map) error = "its CLUSTER NODES: " + error;
  return map;
}

}  // namespace chronocached
