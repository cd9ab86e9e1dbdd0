// libFuzzer target over the snapshot loader (persistence/snapshot_reader.h): any bytes as a
// snapshot file must end in success or a SnapshotError, never a crash, a sanitizer report, a
// hang or an allocation beyond the limits. The bytes are handed over as a memory file
// (memfd), so the reader runs its real file path without touching the disk.
//   make fuzz-snapshot FUZZ_SECONDS=60
#include <cstddef>
#include <cstdint>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#include "persistence/snapshot_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("snapshot_fuzz", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  // The defaults, as the server loads: buffers must stay bounded by the input's size alone.
  const chronocache::persistence::ReaderLimits limits;
  chronocache::persistence::SnapshotError error;
  auto reader = chronocache::persistence::SnapshotReader::open(path, limits, &error);
  if (reader == nullptr) return 0;
  std::size_t bytes = 0;
  reader->for_each(
      [&](const chronocache::persistence::SnapshotEntry& e) {
        bytes += e.key.size() + e.value.size();  // touch what the entry points to
        if (!e.key.empty()) bytes += static_cast<unsigned char>(e.key.back());
        if (!e.value.empty()) bytes += static_cast<unsigned char>(e.value.front());
      },
      &error);
  return bytes == 1 ? 1 : 0;
}
