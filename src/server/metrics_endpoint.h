// MetricsEndpoint: Prometheus's scrape target, HTTP on --metrics-port (off by default), on every
// address of `bind`, served by loop 0:
//   GET /metrics   200, the text exposition 0.0.4 (commands/metrics.h)
//   GET /healthz   200 "ok"
//   HEAD of either: the same head, no body; other paths 404; other methods 405.
// One request per connection (Connection: close). Bounded: a request head of at most 8 KiB
// (431 beyond, 400 when malformed), at most kMaxConnections open at once (more are closed as
// they come), and a connection still open kIdleSeconds after it came (a head never finished, or
// a peer that never closes after its response) is closed at the next accept. The exposition is
// rendered under the state lock from counters only, so a scrape costs the data path one short lock
// hold and walks no key.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/net/event_loop.h"
#include "server/net/http_request.h"
#include "server/server_state.h"

namespace chronocached {

class MetricsEndpoint {
 public:
  static constexpr std::size_t kMaxConnections = 16;
  static constexpr std::chrono::seconds kIdleSeconds{10};

  MetricsEndpoint(ServerState& state, net::EventLoop& events);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Listens on every address of `bind` (as the RESP port does) at `port` (0: one the kernel
  // picks, then the same on every address); false with `error` when none could be bound.
  bool listen(const std::string& bind, int port, std::string& error);
  int port() const noexcept { return port_; }

 private:
  class Listener;
  class Connection;
  void accept_from(int listen_fd);
  void close(Connection& connection);
  // The whole response (head and body) to a complete or refused request.
  std::string respond(const net::HttpRequest& request);

  ServerState& state_;
  net::EventLoop& events_;
  int port_ = 0;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unordered_map<Connection*, std::unique_ptr<Connection>> connections_;
};

}  // namespace chronocached
