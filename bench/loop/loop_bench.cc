// loop_bench: one minimal RESP server (GET, SET, PING on a std::unordered_map) behind two
// interchangeable event loops, to measure what io_uring would save chronocached at pipeline 1
// (issue 13; docs/performance.md, "io_uring against epoll at pipeline 1").
//
//   loop_bench --loop epoll        level-triggered epoll + read()/write(), chronocached's shape
//   loop_bench --loop uring        io_uring: multishot accept and receive into a provided
//                                  buffer ring, sends through the ring, one
//                                  io_uring_submit_and_wait per iteration, DEFER_TASKRUN (or
//                                  COOP_TASKRUN), registered ring fd and files when the kernel
//                                  has them
//   loop_bench --loop uring-basic  the same io_uring loop without the optional setup flags and
//                                  registrations, to show what they add
//   options: --port N (default 6399), --bind ADDRESS (default 127.0.0.1)
//   loop_bench --syscall-cost      prints the CPU cost of a null system call (getppid) and exits:
//                                  the most that removing one call per request can save
//
// Single-threaded; runs until killed. bench/loop/run_loop_bench.py drives it under
// redis-benchmark. Exit status 77 when io_uring is refused (kExitUringUnavailable).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>

#include "bench/loop/epoll_loop.h"
#include "bench/loop/request_handler.h"
#include "bench/loop/uring_loop.h"

namespace chronocache::loop_bench {
namespace {

constexpr int kListenBacklog = 511;  // redis-server's tcp-backlog default

int listen_on(const std::string& address, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &where.sin_addr) != 1 ||
      bind(fd, reinterpret_cast<const sockaddr*>(&where), sizeof(where)) != 0 ||
      listen(fd, kListenBacklog) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// CPU nanoseconds of one getppid() system call: entry, exit and the mitigations around them,
// timed with this thread's CPU clock so that time spent preempted does not count.
double null_syscall_ns() {
  constexpr long kCalls = 200000;  // ~40 ms at 0.2 µs: well above the clock's resolution
  timespec start{};
  timespec end{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  for (long i = 0; i < kCalls; ++i) syscall(SYS_getppid);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
  const double ns = static_cast<double>(end.tv_sec - start.tv_sec) * 1e9 +
                    static_cast<double>(end.tv_nsec - start.tv_nsec);
  return ns / kCalls;
}

int usage() {
  std::fprintf(stderr,
               "usage: loop_bench --loop epoll|uring|uring-basic [--port N] [--bind ADDRESS]\n"
               "       loop_bench --syscall-cost\n");
  return 2;
}

int run(int argc, char** argv) {
  std::string loop;
  std::string address = "127.0.0.1";
  int port = 6399;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--syscall-cost") {
      std::printf("null system call: %.0f ns CPU\n", null_syscall_ns());
      return 0;
    }
    if (i + 1 >= argc) return usage();
    const char* value = argv[++i];
    if (flag == "--loop") {
      loop = value;
    } else if (flag == "--port") {
      port = std::atoi(value);
    } else if (flag == "--bind") {
      address = value;
    } else {
      return usage();
    }
  }
  if (loop != "epoll" && loop != "uring" && loop != "uring-basic") return usage();

  signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error return, not a signal
  const int listen_fd = listen_on(address, port);
  if (listen_fd < 0) {
    std::fprintf(stderr, "loop_bench: cannot listen on %s:%d: %s\n", address.c_str(), port,
                 std::strerror(errno));
    return 1;
  }
  RequestHandler handler;
  if (loop == "epoll") {
    std::fprintf(stderr, "loop_bench: epoll (level-triggered) + read/write\n");
    return run_epoll_loop(listen_fd, handler);
  }
  UringOptions options;
  if (loop == "uring-basic") {
    options.use_setup_flags = false;
    options.use_registered_ring = false;
    options.use_fixed_files = false;
  }
  return run_uring_loop(listen_fd, handler, options);
}

}  // namespace
}  // namespace chronocache::loop_bench

int main(int argc, char** argv) { return chronocache::loop_bench::run(argc, argv); }
