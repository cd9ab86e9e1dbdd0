#include "server/net/event_loop.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "chronocache/base/assert.h"

namespace chronocached::net {
namespace {

// No EPOLLRDHUP: a peer's half-close shows as EPOLLIN and a read of 0 bytes when we read, and
// while we do not read (output backed up) a level-triggered RDHUP would wake every wait, spinning.
// EPOLLHUP and EPOLLERR are always reported.
std::uint32_t mask(bool read, bool write) {
  return (read ? EPOLLIN : 0u) | (write ? EPOLLOUT : 0u);
}

std::int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

EventLoop::EventLoop() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {
  CC_CHECK(epoll_fd_ >= 0, "epoll_create1 failed");
}

EventLoop::~EventLoop() { close(epoll_fd_); }

void EventLoop::add(int fd, bool read, bool write, Handler* handler) {
  epoll_event event{};
  event.events = mask(read, write);
  event.data.ptr = handler;
  CC_CHECK(epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0, "epoll_ctl ADD failed");
}

void EventLoop::modify(int fd, bool read, bool write, Handler* handler) {
  epoll_event event{};
  event.events = mask(read, write);
  event.data.ptr = handler;
  CC_CHECK(epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) == 0, "epoll_ctl MOD failed");
}

void EventLoop::remove(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::run(const std::function<int()>& tick_ms, const std::function<void()>& on_wakeup,
                    const std::function<void()>& after_batch,
                    const std::function<void()>& on_tick) {
  running_ = true;
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  std::int64_t next_tick = monotonic_ms() + tick_ms();
  while (running_) {
    const std::int64_t wait = std::max<std::int64_t>(0, next_tick - monotonic_ms());
    const int n = epoll_wait(epoll_fd_, events, kMaxEvents, static_cast<int>(wait));
    if (n < 0 && errno != EINTR) CC_CHECK(false, "epoll_wait failed");
    on_wakeup();
    for (int i = 0; i < n; ++i)
      static_cast<Handler*>(events[i].data.ptr)->on_ready(events[i].events);
    after_batch();
    const std::int64_t now = monotonic_ms();
    if (now >= next_tick) {
      on_tick();
      next_tick = now + tick_ms();
    }
  }
}

bool EventLoop::events_waiting() const {
  epoll_event event{};
  return epoll_wait(epoll_fd_, &event, 1, 0) > 0;
}

}  // namespace chronocached::net
