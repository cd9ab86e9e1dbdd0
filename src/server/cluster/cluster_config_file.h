// The cluster config file (cluster-config-file, in `dir`): where a node keeps its id and its
// view of the slot map across restarts. Written whole or not at all after every change.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "server/cluster/cluster_map.h"

namespace chronocached {

// The map in `path`; a new map of one node (this one, a new id) when the file does not exist;
// nullopt with `error` when it exists but cannot be read or parsed.
std::optional<ClusterMap> load_cluster_config(const std::string& path, std::mt19937_64& random,
                                              std::string& error);

// Saves the map after each change: a temporary file renamed over the old one, so a reader sees
// one map or the other. As in Redis, only a save whose epochs moved waits for the disk (fsync of
// the file and its directory): an epoch must never go back after a power cut, or two nodes could
// claim one slot with the same epoch. A save that only moves slots waits for the kernel alone; it
// survives the process crashing, and a power cut can lose the latest such changes (the other
// nodes still hold them: `redis-cli --cluster fix` puts them back). A reshard changes the map
// several times per slot, and an fsync on a busy disk takes milliseconds: waiting for each one
// made moving 4 096 slots take minutes.
class ClusterConfigFile {
 public:
  enum class Sync {
    kWhenEpochsMove,  // every change the node makes
    kAlways,          // CLUSTER SAVECONFIG: the operator asked for the map on disk, as Redis's does
  };

  explicit ClusterConfigFile(std::string path) : path_(std::move(path)) {}

  const std::string& path() const noexcept { return path_; }
  bool save(const ClusterMap& map, std::string& error, Sync when = Sync::kWhenEpochsMove);
  // How many saves waited for the disk.
  std::uint64_t syncs() const noexcept { return syncs_; }

 private:
  struct Epochs {
    unsigned long long current = 0;
    unsigned long long mine = 0;
    bool operator==(const Epochs&) const = default;
  };

  std::string path_;
  std::optional<Epochs> synced_;  // the epochs the disk holds; none before the first save
  std::uint64_t syncs_ = 0;
};

// Holds cluster-config-file's lock for the life of the process, as Redis's clusterLockConfig
// does: a second node started on the same file refuses to start instead of taking the first
// one's id and rewriting its map. The lock is flock() on "<file>.lock" beside the file, because
// every save replaces the file itself (a rename), which would drop a lock held on it.
class ClusterConfigLock {
 public:
  // nullopt with `error` (Redis's text when another process holds it).
  static std::optional<ClusterConfigLock> take(const std::string& config_path, std::string& error);
  ClusterConfigLock(ClusterConfigLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ClusterConfigLock& operator=(ClusterConfigLock&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ClusterConfigLock(const ClusterConfigLock&) = delete;
  ClusterConfigLock& operator=(const ClusterConfigLock&) = delete;
  ~ClusterConfigLock();

 private:
  explicit ClusterConfigLock(int fd) noexcept : fd_(fd) {}
  int fd_;
};

}  // namespace chronocached
