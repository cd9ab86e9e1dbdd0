// Socket helpers: a listening TCP socket, accept, and peer addresses. Errors come back as text
// for the caller to log; nothing here decides policy.
#pragma once

#include <string>

namespace chronocached::net {

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
