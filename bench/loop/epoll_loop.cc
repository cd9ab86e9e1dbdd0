#include "bench/loop/epoll_loop.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <vector>

namespace chronocache::loop_bench {
namespace {

constexpr std::size_t kReadChunkBytes = 16 * 1024;  // chronocached's kReadChunk (session.cc)
constexpr int kMaxEvents = 256;                     // chronocached's EventLoop::run

struct Client {
  int fd = -1;
  bool is_watching_output = false;
  std::size_t sent = 0;  // bytes of buffers.output already written
  ClientBuffers buffers;
};

class EpollLoop {
 public:
  EpollLoop(int listen_fd, RequestHandler& handler) : listen_fd_(listen_fd), handler_(handler) {}

  int run() {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0 || !watch(listen_fd_, EPOLL_CTL_ADD, EPOLLIN)) {
      std::perror("loop_bench: epoll");
      return 1;
    }
    epoll_event events[kMaxEvents];
    for (;;) {
      const int n = epoll_wait(epoll_fd_, events, kMaxEvents, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        std::perror("loop_bench: epoll_wait");
        return 1;
      }
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_fd_) {
          accept_clients();
        } else {
          on_ready(*clients_[static_cast<std::size_t>(fd)], events[i].events);
        }
      }
    }
  }

 private:
  bool watch(int fd, int op, std::uint32_t mask) {
    epoll_event event{};
    event.events = mask;
    event.data.fd = fd;
    return epoll_ctl(epoll_fd_, op, fd, &event) == 0;
  }

  void accept_clients() {
    for (;;) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN: all taken; anything else: the next readiness retries
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      const auto slot = static_cast<std::size_t>(fd);
      if (clients_.size() <= slot) clients_.resize(slot + 1);
      clients_[slot] = std::make_unique<Client>();
      clients_[slot]->fd = fd;
      if (!watch(fd, EPOLL_CTL_ADD, EPOLLIN)) close_client(*clients_[slot]);
    }
  }

  void on_ready(Client& client, std::uint32_t events) {
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
      const ssize_t n = read(client.fd, chunk_, sizeof(chunk_));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close_client(client);
        return;
      }
      if (n > 0 &&
          handler_.feed(client.buffers, std::string_view(chunk_, static_cast<std::size_t>(n))) !=
              FeedOutcome::kOk) {
        close_client(client);
        return;
      }
    }
    flush(client);
  }

  // One write() of every pending reply; EPOLLOUT only while bytes remain.
  void flush(Client& client) {
    std::string& output = client.buffers.output;
    if (client.sent < output.size()) {
      const ssize_t n = write(client.fd, output.data() + client.sent, output.size() - client.sent);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        close_client(client);
        return;
      }
      if (n > 0) client.sent += static_cast<std::size_t>(n);
    }
    const bool is_pending = client.sent < output.size();
    if (!is_pending) {
      output.clear();
      client.sent = 0;
    }
    if (is_pending != client.is_watching_output) {
      client.is_watching_output = is_pending;
      watch(client.fd, EPOLL_CTL_MOD, is_pending ? EPOLLIN | EPOLLOUT : EPOLLIN);
    }
  }

  void close_client(Client& client) {
    const auto slot = static_cast<std::size_t>(client.fd);
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, client.fd, nullptr);
    close(client.fd);
    clients_[slot].reset();  // destroys `client`
  }

  const int listen_fd_;
  RequestHandler& handler_;
  int epoll_fd_ = -1;
  std::vector<std::unique_ptr<Client>> clients_;  // indexed by fd
  char chunk_[kReadChunkBytes];
};

}  // namespace

int run_epoll_loop(int listen_fd, RequestHandler& handler) {
  auto loop = std::make_unique<EpollLoop>(listen_fd, handler);
  return loop->run();
}

}  // namespace chronocache::loop_bench
