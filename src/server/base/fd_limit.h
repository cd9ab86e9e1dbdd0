// The process's descriptor limit, raised for maxclients as Redis's adjustOpenFilesLimit does:
// each client takes a descriptor, and the server keeps kReservedFds for itself (listeners,
// snapshot files, the metrics endpoint, cluster peers). Without the raise, accept() fails with
// EMFILE before maxclients is reached, and the client never gets Redis's "max number of clients"
// error.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <optional>

namespace chronocached {

inline constexpr long long kReservedFds = 32;

struct FdLimit {
  long long before;  // the soft limit found
  long long usable;  // the soft limit now: `wanted` or more, or as far as the hard limit allowed
};

// Raises the soft RLIMIT_NOFILE to `wanted` descriptors if it is lower, up to the hard limit.
// nullopt when the limit cannot be read or is unlimited (nothing to fit).
inline std::optional<FdLimit> raise_fd_limit(long long wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const auto before = static_cast<long long>(limit.rlim_cur);
  if (before >= wanted) return FdLimit{before, before};
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY
                       ? static_cast<rlim_t>(wanted)
                       : std::min(static_cast<rlim_t>(wanted), limit.rlim_max);
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return FdLimit{before, before};
  return FdLimit{before, static_cast<long long>(limit.rlim_cur)};
}

}  // namespace chronocached
