// exit_code_with_capped_address_space: runs `body` in a child process whose address space is
// capped at `cap_bytes` and returns the child's exit code (what body returned), or -1 if it did
// not exit normally. For tests of what our own allocators do when mmap fails. Not under
// sanitizers: they reserve terabytes of shadow memory and cannot run capped.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>

namespace chronocache::testing {

inline constexpr int kCapNotSet = 100;  // the child could not lower its limit

template <class Body>
int exit_code_with_capped_address_space(std::size_t cap_bytes, Body body) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    rlimit cap{};
    getrlimit(RLIMIT_AS, &cap);
    cap.rlim_cur = cap_bytes;
    if (setrlimit(RLIMIT_AS, &cap) != 0) _exit(kCapNotSet);
    _exit(body());
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace chronocache::testing
