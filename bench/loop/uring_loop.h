// The io_uring loop of loop_bench: the same RequestHandler as the epoll loop, with every socket
// operation an io_uring request and one io_uring_enter per loop iteration.
//
//   iteration:  io_uring_submit_and_wait(1)    submits the sends and re-arms queued last time,
//                                              waits for at least one completion
//               for each completion:
//                 accept (multishot)   register the client, arm its multishot receive
//                 receive (multishot)  feed the provided buffer to the handler, give the buffer
//                                      back to the ring, re-arm if the kernel ended the shot
//                 send                 advance; queue the rest if short
//               queue one send per client with new replies
//
// Receives use a provided buffer ring (IORING_REGISTER_PBUF_RING): the kernel picks a buffer
// when data arrives, so no buffer is pinned per idle client. A client's replies accumulate in
// ClientBuffers::output while its previous send is in flight, and are swapped into `sending`
// when that completes: an in-flight send's bytes never move.
//
// UringOptions picks the optional kernel features; each one that the kernel refuses is dropped
// and named on stderr, so a run states what it measured.
#pragma once

#include <string>

#include "bench/loop/request_handler.h"

namespace chronocache::loop_bench {

struct UringOptions {
  // IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN (6.1), else COOP_TASKRUN | TASKRUN_FLAG (5.19):
  // completions are run in our io_uring_enter instead of by interrupting the task.
  bool use_setup_flags = true;
  // io_uring_register_ring_fd: io_uring_enter skips the ring's fd lookup (5.18).
  bool use_registered_ring = true;
  // Clients in the registered file table (IOSQE_FIXED_FILE): no fd lookup per request.
  bool use_fixed_files = true;
};

// Exit status when the kernel refuses io_uring itself (e.g. a seccomp filter, or
// kernel.io_uring_disabled): ctest reports the smoke test as skipped, not failed.
inline constexpr int kExitUringUnavailable = 77;

// Serves listen_fd (a listening TCP socket) until the process is killed. Returns only on a
// fatal error (kExitUringUnavailable if io_uring cannot be set up), with a message on stderr.
int run_uring_loop(int listen_fd, RequestHandler& handler, const UringOptions& options);

}  // namespace chronocache::loop_bench
