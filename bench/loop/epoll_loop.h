// The epoll loop of loop_bench: chronocached's shape (src/server/net/event_loop.cc and
// src/server/session.cc), reduced to what a GET or SET at pipeline 1 touches.
//
// Level-triggered epoll. Per ready client: one read() of up to kReadChunkBytes, every complete
// command run, one write() of all their replies; EPOLLOUT is watched only while a write was
// short. Per request at pipeline 1 that is three system calls: epoll_wait (shared by the clients
// ready at once), read, write.
#pragma once

#include "bench/loop/request_handler.h"

namespace chronocache::loop_bench {

// Serves listen_fd (a listening, non-blocking TCP socket) until the process is killed.
// Returns only on a fatal error, with a message on stderr.
int run_epoll_loop(int listen_fd, RequestHandler& handler);

}  // namespace chronocache::loop_bench
