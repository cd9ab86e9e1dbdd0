#include "server/cluster/cluster_config_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "persistence/durable_file.h"

namespace chronocached {

std::optional<ClusterMap> load_cluster_config(const std::string& path, std::mt19937_64& random,
                                              std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) {
      ClusterNode myself;
      myself.id = ClusterMap::new_node_id(random);
      return ClusterMap(std::move(myself));
    }
    error = "open " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::optional<ClusterMap> map = ClusterMap::parse(text.str(), error);
  if (!map) error = path + ": " + error;
  return map;
}

bool ClusterConfigFile::save(const ClusterMap& map, std::string& error, Sync when) {
  std::unique_ptr<chronocache::persistence::DurableFile> file =
      chronocache::persistence::DurableFile::create(path_, &error);
  if (file == nullptr) return false;
  const std::string text = map.config_text();
  const Epochs epochs{map.current_epoch(), map.myself().config_epoch};
  const bool sync = when == Sync::kAlways || synced_ != epochs;
  if (!file->write(text.data(), text.size(), &error) || !file->commit(sync, &error)) {
    if (sync) synced_.reset();  // in doubt: the next save syncs again
    return false;
  }
  if (sync) {
    synced_ = epochs;
    ++syncs_;
  }
  return true;
}

std::optional<ClusterConfigLock> ClusterConfigLock::take(const std::string& config_path,
                                                         std::string& error) {
  const std::string lock_path = config_path + ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "Can't open " + lock_path + " in order to acquire a lock: " + std::strerror(errno);
    return std::nullopt;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int why = errno;
    ::close(fd);
    error = why == EWOULDBLOCK
                ? "Sorry, the cluster configuration file " + config_path +
                      " is already used by a different Redis Cluster node. Please make sure that "
                      "different nodes use different cluster configuration files."
                : "Impossible to lock " + lock_path + ": " + std::strerror(why);
    return std::nullopt;
  }
  return ClusterConfigLock(fd);
}

ClusterConfigLock::~ClusterConfigLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace chronocached
