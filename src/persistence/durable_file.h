// DurableFile: a file that appears at its path whole or not at all.
//
// Bytes go to a temporary file beside the target ("<path>.tmp-<pid>-<n>", same directory, so
// the rename cannot cross file systems). commit() fsyncs it, renames it over the target (atomic:
// a reader sees the old file or the new one) and fsyncs the directory, so the rename itself
// survives a power cut. Until then the target is untouched; abandon() or the destructor removes
// the temporary file. A process killed in between leaves a temporary file behind:
// remove_stale_temp_files() clears those at the next start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace chronocache::persistence {

class DurableFile {
 public:
  // Opens a new temporary file for `path`; nullptr and *error ("open <tmp>: <strerror>") on
  // failure.
  static std::unique_ptr<DurableFile> create(const std::string& path, std::string* error);
  ~DurableFile();
  DurableFile(const DurableFile&) = delete;
  DurableFile& operator=(const DurableFile&) = delete;

  // Writes all `size` bytes (retrying short writes and EINTR).
  bool write(const void* data, std::size_t size, std::string* error);
  // fsync (when `sync`), close, rename over the target, fsync the directory. On failure the
  // temporary file is removed and the target is untouched.
  bool commit(bool sync, std::string* error);
  // Closes and removes the temporary file (nothing happens after commit).
  void abandon() noexcept;

  std::uint64_t bytes_written() const noexcept { return written_; }
  const std::string& temp_path() const noexcept { return temp_path_; }

 private:
  DurableFile(std::string path, std::string temp_path, int fd)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}

  std::string path_;
  std::string temp_path_;
  int fd_;
  std::uint64_t written_ = 0;
  bool done_ = false;
};

// Removes temporary files a killed writer left beside `path` (those of a process still running
// stay: it may be saving to the same path); returns how many it removed.
std::size_t remove_stale_temp_files(const std::string& path);

}  // namespace chronocache::persistence
