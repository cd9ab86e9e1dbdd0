// net::EventLoop: one epoll instance and the file descriptors it watches. Knows bytes and
// readiness only: no protocol, no commands.
//
// Level-triggered: a connection that stops reading mid-batch (its output is backed up) is simply
// asked again on the next wait, without the "drain until EAGAIN" duty edge-triggered mode
// imposes. Measured against an edge-triggered variant (docs/performance.md): 3-8 % less server
// CPU for edge-triggered, inside this machine's run-to-run noise, so the simpler mode stays.
#pragma once

#include <cstdint>
#include <functional>

namespace chronocached::net {

class EventLoop {
 public:
  // Receives readiness for one descriptor (EPOLLIN, EPOLLOUT, EPOLLHUP, EPOLLERR bits).
  class Handler {
   public:
    virtual void on_ready(std::uint32_t events) = 0;

   protected:
    ~Handler() = default;
  };

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  void add(int fd, bool read, bool write, Handler* handler);
  void modify(int fd, bool read, bool write, Handler* handler);
  void remove(int fd);

  // Waits and dispatches until stop(). `on_wakeup` runs when a wait returns, before handlers
  // (the batch's clock reading); `after_batch` after them (deferred closes, monitor flushes);
  // `on_tick` every tick_ms() milliseconds (timeouts, expiry; asked after each tick, so a
  // setting changed at runtime takes effect).
  void run(const std::function<int()>& tick_ms, const std::function<void()>& on_wakeup,
           const std::function<void()>& after_batch, const std::function<void()>& on_tick);
  void stop() { running_ = false; }
  // True when a descriptor is ready right now. Level-triggered, so asking consumes nothing: work
  // done in slices (a BGSAVE's capture) asks between steps and gives the CPU back to clients.
  bool events_waiting() const;

 private:
  int epoll_fd_ = -1;
  bool running_ = false;
};

}  // namespace chronocached::net
