// The three decompressors behind ByteSource (see byte_source.h). Each wraps the library's
// streaming API over one fixed input buffer: no allocation after opening.
#include "sim/byte_source.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

namespace chronocache::sim {
namespace {

// Compressed bytes read from the file per refill: large enough that the syscall cost vanishes,
// small enough to stay in L2 next to the codec's window.
constexpr std::size_t kInputChunkBytes = 256 * 1024;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::runtime_error failure(const std::string& path, std::string_view what) {
  std::string message = path;
  message.append(": ");
  message.append(what);
  return std::runtime_error(message);
}

// A FILE* with its size, shared by every codec.
class File {
 public:
  explicit File(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "rb")) {
    if (file_ == nullptr) throw failure(path, "cannot open");
    std::fseek(file_, 0, SEEK_END);
    size_ = static_cast<std::uint64_t>(std::ftell(file_));
    std::fseek(file_, 0, SEEK_SET);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() { std::fclose(file_); }

  std::size_t read(char* out, std::size_t n) {
    const std::size_t got = std::fread(out, 1, n, file_);
    if (got < n && std::ferror(file_)) throw failure(path_, "read error");
    consumed_ += got;
    return got;
  }
  std::uint64_t size() const { return size_; }
  std::uint64_t consumed() const { return consumed_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_;
  std::uint64_t size_ = 0;
  std::uint64_t consumed_ = 0;
};

class PlainSource final : public ByteSource {
 public:
  explicit PlainSource(const std::string& path) : file_(path) {}
  std::size_t read(std::span<char> out) override { return file_.read(out.data(), out.size()); }
  std::uint64_t consumed_file_bytes() const override { return file_.consumed(); }
  std::uint64_t file_bytes() const override { return file_.size(); }

 private:
  File file_;
};

class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(const std::string& path) : file_(path), input_(kInputChunkBytes) {
    // 15 + 32: the largest window, and accept both zlib and gzip headers.
    if (inflateInit2(&stream_, 15 + 32) != Z_OK) throw failure(path, "inflateInit failed");
  }
  ~GzipSource() override { inflateEnd(&stream_); }

  std::size_t read(std::span<char> out) override {
    stream_.next_out = reinterpret_cast<Bytef*>(out.data());
    stream_.avail_out = static_cast<uInt>(out.size());
    while (stream_.avail_out != 0 && !done_) {
      if (stream_.avail_in == 0) {
        const std::size_t got = file_.read(input_.data(), input_.size());
        if (got == 0) throw failure(file_.path(), "truncated gzip stream");
        stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
        stream_.avail_in = static_cast<uInt>(got);
      }
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Concatenated gzip members (what `cat a.gz b.gz` makes) continue the stream.
        if (stream_.avail_in == 0 && file_.consumed() == file_.size()) {
          done_ = true;
        } else {
          inflateReset(&stream_);
        }
      } else if (rc != Z_OK) {
        throw failure(file_.path(), "corrupt gzip stream");
      }
    }
    return out.size() - stream_.avail_out;
  }
  std::uint64_t consumed_file_bytes() const override { return file_.consumed(); }
  std::uint64_t file_bytes() const override { return file_.size(); }

 private:
  File file_;
  std::vector<char> input_;
  z_stream stream_{};
  bool done_ = false;
};

class XzSource final : public ByteSource {
 public:
  explicit XzSource(const std::string& path) : file_(path), input_(kInputChunkBytes) {
    if (lzma_stream_decoder(&stream_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
      throw failure(path, "lzma_stream_decoder failed");
  }
  ~XzSource() override { lzma_end(&stream_); }

  std::size_t read(std::span<char> out) override {
    stream_.next_out = reinterpret_cast<std::uint8_t*>(out.data());
    stream_.avail_out = out.size();
    while (stream_.avail_out != 0 && !done_) {
      lzma_action action = LZMA_RUN;
      if (stream_.avail_in == 0) {
        const std::size_t got = file_.read(input_.data(), input_.size());
        stream_.next_in = reinterpret_cast<const std::uint8_t*>(input_.data());
        stream_.avail_in = got;
        if (got == 0) action = LZMA_FINISH;
      }
      const lzma_ret rc = lzma_code(&stream_, action);
      if (rc == LZMA_STREAM_END) {
        done_ = true;
      } else if (rc != LZMA_OK) {
        throw failure(file_.path(), "corrupt xz stream");
      }
    }
    return out.size() - stream_.avail_out;
  }
  std::uint64_t consumed_file_bytes() const override { return file_.consumed(); }
  std::uint64_t file_bytes() const override { return file_.size(); }

 private:
  File file_;
  std::vector<char> input_;
  lzma_stream stream_ = LZMA_STREAM_INIT;
  bool done_ = false;
};

class ZstdSource final : public ByteSource {
 public:
  explicit ZstdSource(const std::string& path)
      : file_(path), input_(kInputChunkBytes), stream_(ZSTD_createDStream()) {
    if (stream_ == nullptr) throw failure(path, "ZSTD_createDStream failed");
  }
  ~ZstdSource() override { ZSTD_freeDStream(stream_); }

  std::size_t read(std::span<char> out) override {
    ZSTD_outBuffer output{out.data(), out.size(), 0};
    while (output.pos < output.size) {
      if (in_.pos == in_.size) {
        const std::size_t got = file_.read(input_.data(), input_.size());
        if (got == 0) {
          if (!frame_complete_) throw failure(file_.path(), "truncated zstd stream");
          break;
        }
        in_ = ZSTD_inBuffer{input_.data(), got, 0};
      }
      const std::size_t rc = ZSTD_decompressStream(stream_, &output, &in_);
      if (ZSTD_isError(rc)) throw failure(file_.path(), ZSTD_getErrorName(rc));
      frame_complete_ = rc == 0;
    }
    return output.pos;
  }
  std::uint64_t consumed_file_bytes() const override { return file_.consumed(); }
  std::uint64_t file_bytes() const override { return file_.size(); }

 private:
  File file_;
  std::vector<char> input_;
  ZSTD_DStream* stream_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  bool frame_complete_ = true;
};

}  // namespace

Compression compression_from_path(std::string_view path) {
  if (ends_with(path, ".gz")) return Compression::kGzip;
  if (ends_with(path, ".xz")) return Compression::kXz;
  if (ends_with(path, ".zst")) return Compression::kZstd;
  return Compression::kNone;
}

std::unique_ptr<ByteSource> open_byte_source(const std::string& path) {
  switch (compression_from_path(path)) {
    case Compression::kGzip:
      return std::make_unique<GzipSource>(path);
    case Compression::kXz:
      return std::make_unique<XzSource>(path);
    case Compression::kZstd:
      return std::make_unique<ZstdSource>(path);
    case Compression::kNone:
      break;
  }
  return std::make_unique<PlainSource>(path);
}

}  // namespace chronocache::sim
