// Socket helpers: a listening TCP socket, accept, and peer addresses. Errors come back as text
// for the caller to log; nothing here decides policy.
#pragma once

#include <string>
#include <vector>

namespace chronocached::net {

// One address of a `bind` setting, as Redis reads it: redis.conf's "-::1" marks an address that
// may be missing (no IPv6 here, say); "*" and "::*" are Redis's names for every IPv4 and every
// IPv6 address.
struct BindAddress {
  std::string host;
  bool optional = false;
};
std::vector<BindAddress> bind_addresses(const std::string& bind);

// A non-blocking listening socket on host:port (port 0: any free port), or -1 with `error` set.
int listen_tcp(const std::string& host, int port, int backlog, std::string& error);
// The port a socket is bound to.
int local_port(int fd);
// A non-blocking, close-on-exec, TCP_NODELAY connection, or -1 (EAGAIN included).
int accept_client(int listen_fd);
// "ip:port" of the peer / of our end.
std::string peer_address(int fd);
std::string local_address(int fd);
bool is_loopback_peer(int fd);

}  // namespace chronocached::net
