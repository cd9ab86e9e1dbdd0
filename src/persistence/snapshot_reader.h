// SnapshotReader: a snapshot file (snapshot_format.h) back into entries, trusting nothing in it.
//
//   auto reader = SnapshotReader::open(path, {}, &error);   // header and trailer checked
//   bool ok = reader && reader->for_each([&](const SnapshotEntry& e) { ... }, &error);
//
// Every length read from the file is checked against ReaderLimits and against the bytes that
// remain before anything is allocated or copied, and every block's checksum before it is
// decompressed, so a corrupt or hostile file ends in a SnapshotError (file, offset, reason),
// never in a crash, a hang or an allocation the file's size does not justify. The trailer is read
// first: a file cut anywhere, even between blocks, is refused before any entry is delivered.
// Entries delivered before a later block turns out bad have been delivered: a caller that must be
// all-or-nothing undoes them (the server empties its keyspace again).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "persistence/snapshot_format.h"

namespace chronocache::persistence {

// Limits on what a file may claim. The defaults accept everything a SnapshotWriter can write
// (kMaxBlockBytes); buffers stay bounded anyway, by the file's size and max_raw_bytes(). A loader
// that knows its entries are smaller can refuse more.
struct ReaderLimits {
  std::uint64_t max_key_bytes = kMaxBlockBytes;
  std::uint64_t max_value_bytes = kMaxBlockBytes;
  std::uint64_t max_block_bytes = kMaxBlockBytes;
};

class SnapshotReader {
 public:
  static std::unique_ptr<SnapshotReader> open(const std::string& path, const ReaderLimits& limits,
                                              SnapshotError* error);
  ~SnapshotReader();
  SnapshotReader(const SnapshotReader&) = delete;
  SnapshotReader& operator=(const SnapshotReader&) = delete;

  std::int64_t created_unix_ms() const noexcept { return created_unix_ms_; }
  std::string_view engine_version() const noexcept { return engine_version_; }
  // From the trailer (checked against the blocks by for_each): lets a loader reserve room.
  std::uint64_t entry_count_hint() const noexcept { return trailer_entries_; }
  std::uint64_t file_bytes() const noexcept { return file_size_; }

  // Calls fn(entry) for each entry in file order; false and *error at the first problem.
  bool for_each(const std::function<void(const SnapshotEntry&)>& fn, SnapshotError* error);

  // Reads the whole file, delivering nothing: true if it is intact.
  static bool verify(const std::string& path, const ReaderLimits& limits, SnapshotError* error);

 private:
  SnapshotReader(std::string path, int fd, const ReaderLimits& limits)
      : path_(std::move(path)), fd_(fd), limits_(limits) {}
  bool read_at(std::uint64_t offset, void* out, std::size_t size);
  bool fail(SnapshotError* error, std::uint64_t offset, std::string reason) const;
  bool parse_block(std::string_view raw, std::uint32_t entries, std::uint64_t offset,
                   const std::function<void(const SnapshotEntry&)>& fn, SnapshotError* error);

  std::string path_;
  int fd_;
  ReaderLimits limits_;
  std::uint64_t file_size_ = 0;
  std::uint64_t body_start_ = 0;  // the first block's offset
  std::int64_t created_unix_ms_ = 0;
  std::string engine_version_;
  std::uint64_t trailer_entries_ = 0;
  std::uint64_t trailer_blocks_ = 0;
  std::uint64_t trailer_checksum_ = 0;
  std::string stored_;  // a block's stored bytes, reused
  std::string raw_;     // a block's decompressed bytes, reused
};

}  // namespace chronocache::persistence
