#include "persistence/durable_file.h"

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace chronocache::persistence {
namespace {

std::string errno_text(std::string_view what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

// The directory a path lives in, for its fsync after a rename ("." for a bare file name).
std::string directory_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::string temp_prefix(const std::string& path) { return path + ".tmp-"; }

}  // namespace

std::unique_ptr<DurableFile> DurableFile::create(const std::string& path, std::string* error) {
  static std::atomic<unsigned> counter{0};
  std::string temp = temp_prefix(path) + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (error != nullptr) *error = errno_text("open", temp);
    return nullptr;
  }
  return std::unique_ptr<DurableFile>(new DurableFile(path, std::move(temp), fd));
}

DurableFile::~DurableFile() { abandon(); }

bool DurableFile::write(const void* data, std::size_t size, std::string* error) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (error != nullptr) *error = errno_text("write", temp_path_);
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    written_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

bool DurableFile::commit(bool sync, std::string* error) {
  if (sync && ::fsync(fd_) != 0) {
    if (error != nullptr) *error = errno_text("fsync", temp_path_);
    abandon();
    return false;
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    if (error != nullptr) *error = errno_text("close", temp_path_);
    abandon();
    return false;
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    if (error != nullptr) *error = errno_text("rename to " + path_ + ":", temp_path_);
    abandon();
    return false;
  }
  done_ = true;
  if (sync) {
    const std::string dir = directory_of(path_);
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool synced = dir_fd >= 0 && ::fsync(dir_fd) == 0;
    if (!synced && error != nullptr) *error = errno_text("fsync directory", dir);
    if (dir_fd >= 0) ::close(dir_fd);
    // The file is in place; only its durability across a power cut is in doubt.
    return synced;
  }
  return true;
}

void DurableFile::abandon() noexcept {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  if (!done_) {
    ::unlink(temp_path_.c_str());
    done_ = true;
  }
}

namespace {
// Whether the writer named in a temporary file's "<pid>-<n>" suffix is still running: another
// process saving to the same path (a second server started on the same dir) keeps its file, as
// Redis's temp-<pid>.rdb belongs to its process. A suffix without a pid counts as stale, and so
// does this process's own: at start nothing of ours writes yet, and DEBUG RELOAD (which loads at
// run time) refuses to run beside a BGSAVE.
bool writer_running(std::string_view suffix) {
  pid_t pid = 0;
  const char* const last = suffix.data() + suffix.size();
  const auto [end, ec] = std::from_chars(suffix.data(), last, pid);
  if (ec != std::errc() || end == last || *end != '-' || pid <= 0 || pid == ::getpid())
    return false;  // not "<pid>-<n>" (kill() of 0 or a negative pid probes process groups)
  return ::kill(pid, 0) == 0 || errno == EPERM;
}
}  // namespace

std::size_t remove_stale_temp_files(const std::string& path) {
  const std::filesystem::path target(path);
  const std::string prefix = target.filename().string() + ".tmp-";
  std::error_code ec;
  std::size_t removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory_of(path), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || writer_running(std::string_view(name).substr(prefix.size())))
      continue;
    if (entry.is_regular_file(ec) && std::filesystem::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace chronocache::persistence
