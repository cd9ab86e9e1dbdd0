#include "server/metrics_endpoint.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "chronocache/base/mutex.h"
#include "server/commands/metrics.h"
#include "server/net/http_request.h"
#include "server/net/socket.h"

namespace chronocached {
namespace {

using Clock = std::chrono::steady_clock;

std::string http_response(int status, std::string_view reason, std::string_view content_type,
                          std::string_view body, bool with_body, std::string_view extra = "") {
  std::string text = "HTTP/1.1 " + std::to_string(status) + " ";
  text.append(reason).append("\r\nContent-Type: ").append(content_type);
  text.append("\r\nContent-Length: ").append(std::to_string(body.size()));
  text.append("\r\nConnection: close\r\n").append(extra).append("\r\n");
  if (with_body) text.append(body);
  return text;
}

}  // namespace

class MetricsEndpoint::Listener final : public net::EventLoop::Handler {
 public:
  Listener(MetricsEndpoint& endpoint, int fd) : endpoint_(endpoint), fd_(fd) {}
  ~Listener() { ::close(fd_); }
  void on_ready(std::uint32_t) override { endpoint_.accept_from(fd_); }
  int fd() const noexcept { return fd_; }

 private:
  MetricsEndpoint& endpoint_;
  int fd_;
};

class MetricsEndpoint::Connection final : public net::EventLoop::Handler {
 public:
  Connection(MetricsEndpoint& endpoint, int fd)
      : endpoint_(endpoint), fd_(fd), accepted_(Clock::now()) {}
  ~Connection() { ::close(fd_); }
  int fd() const noexcept { return fd_; }
  bool idle_too_long(Clock::time_point now) const { return now - accepted_ > kIdleSeconds; }

  // Reads the head; once it is whole (or refused), writes the response, then closes its side and
  // reads until the peer closes too: closing with unread bytes (the rest of a refused head)
  // would reset the connection and could destroy the response before the peer read it. May
  // destroy this connection: nothing is touched after endpoint_.close().
  void on_ready(std::uint32_t events) override {
    if (draining_) {
      if (!discard_input()) endpoint_.close(*this);
      return;
    }
    if (out_.empty() && (events & EPOLLIN) != 0 && !read_head()) return endpoint_.close(*this);
    if (out_.empty() && request_.state() != net::HttpRequest::kIncomplete)
      out_ = endpoint_.respond(request_);
    if (out_.empty()) {
      if ((events & (EPOLLHUP | EPOLLERR)) != 0) endpoint_.close(*this);
      return;
    }
    if (!write_response()) return endpoint_.close(*this);
    if (written_ < out_.size()) {
      endpoint_.events_.modify(fd_, false, true, this);  // the rest when the socket drains
      return;
    }
    ::shutdown(fd_, SHUT_WR);
    draining_ = true;
    endpoint_.events_.modify(fd_, true, false, this);
  }

 private:
  // False on end of stream or error before the head was whole.
  bool read_head() {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
      if (n > 0) {
        if (request_.feed(std::string_view(buffer, static_cast<std::size_t>(n))) !=
            net::HttpRequest::kIncomplete)
          return true;
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
  }
  // False once the peer closed (or failed): the connection is done.
  bool discard_input() {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
      if (n > 0) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
  }
  // False on a write error (the peer left).
  bool write_response() {
    while (written_ < out_.size()) {
      const ssize_t n = ::send(fd_, out_.data() + written_, out_.size() - written_, MSG_NOSIGNAL);
      if (n > 0) {
        written_ += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    return true;
  }

  MetricsEndpoint& endpoint_;
  int fd_;
  Clock::time_point accepted_;
  net::HttpRequest request_;
  std::string out_;
  std::size_t written_ = 0;
  bool draining_ = false;  // the response is out: reading until the peer closes
};

MetricsEndpoint::MetricsEndpoint(ServerState& state, net::EventLoop& events)
    : state_(state), events_(events) {}

MetricsEndpoint::~MetricsEndpoint() {
  for (auto& [raw, connection] : connections_) events_.remove(connection->fd());
  for (auto& listener : listeners_) events_.remove(listener->fd());
}

bool MetricsEndpoint::listen(const std::string& bind, int port, std::string& error) {
  for (const net::BindAddress& address : net::bind_addresses(bind)) {
    std::string failure;
    const int fd = net::listen_tcp(address.host, port, 64, failure);
    if (fd < 0) {
      if (address.optional) continue;
      error = failure;
      return false;
    }
    port = port_ = net::local_port(fd);
    listeners_.push_back(std::make_unique<Listener>(*this, fd));
    events_.add(fd, true, false, listeners_.back().get());
  }
  if (listeners_.empty()) error = "no bind address for the metrics port";
  return !listeners_.empty();
}

void MetricsEndpoint::accept_from(int listen_fd) {
  const Clock::time_point now = Clock::now();
  std::vector<Connection*> idle;
  for (auto& [raw, connection] : connections_)
    if (connection->idle_too_long(now)) idle.push_back(raw);
  for (Connection* connection : idle) close(*connection);
  for (int i = 0; i < 16; ++i) {
    const int fd = net::accept_client(listen_fd);
    if (fd < 0) return;
    if (connections_.size() >= kMaxConnections) {
      ::close(fd);
      continue;
    }
    auto connection = std::make_unique<Connection>(*this, fd);
    Connection* raw = connection.get();
    connections_.emplace(raw, std::move(connection));
    events_.add(fd, true, false, raw);
  }
}

void MetricsEndpoint::close(Connection& connection) {
  events_.remove(connection.fd());
  connections_.erase(&connection);  // destroys it (and closes its socket)
}

std::string MetricsEndpoint::respond(const net::HttpRequest& request) {
  constexpr std::string_view kText = "text/plain; charset=utf-8";
  if (request.state() == net::HttpRequest::kBad) {
    return request.status() == 431
               ? http_response(431, "Request Header Fields Too Large", kText, "too long\n", true)
               : http_response(400, "Bad Request", kText, "bad request\n", true);
  }
  const std::string_view method = request.method();
  const std::string_view path = request.path();
  const bool head = method == "HEAD";
  if (method != "GET" && !head)
    return http_response(405, "Method Not Allowed", kText, "GET or HEAD\n", true,
                         "Allow: GET, HEAD\r\n");
  if (path == "/healthz") return http_response(200, "OK", kText, "ok\n", !head);
  if (path != "/metrics") return http_response(404, "Not Found", kText, "not found\n", !head);
  std::string body;
  {
    chronocache::MutexLock lock(state_.mu);
    body = render_metrics(state_, state_.clock.unix_ms());
  }
  return http_response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, !head);
}

}  // namespace chronocached
