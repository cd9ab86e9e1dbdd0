// ByteSource: a trace file's bytes, decompressed on the fly, read in chunks.
//
// Traces ship compressed (.gz, .xz, .zst); decompressing to a temporary file or to one big string
// would cost disk or memory proportional to the raw trace (OLTP.lis is 2.3 MB compressed, 20 MB
// raw; the ARC P-traces are gigabytes raw). A ByteSource decodes at most one chunk at a time, so
// reading costs the caller's buffer plus the codec's window whatever the trace's size.
//
// The codec is picked by the file name's suffix (.gz -> zlib, .xz -> liblzma, .zst -> libzstd,
// anything else is read as is). Errors (missing file, corrupt stream) throw std::runtime_error:
// this is the tool's edge, not the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace chronocache::sim {

enum class Compression { kNone, kGzip, kXz, kZstd };

Compression compression_from_path(std::string_view path);

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Fills up to out.size() bytes; returns how many. 0 means the end of the stream.
  virtual std::size_t read(std::span<char> out) = 0;
  // Compressed bytes consumed so far, against file_bytes(): what a progress bar can show before
  // the decoded length is known.
  virtual std::uint64_t consumed_file_bytes() const = 0;
  virtual std::uint64_t file_bytes() const = 0;
};

// Opens `path` with the codec its suffix names. Throws std::runtime_error on failure.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path);

}  // namespace chronocache::sim
