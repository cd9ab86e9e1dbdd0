// The decompressors behind ByteSource (see byte_source.h): one reading loop,
// DecompressingSource, over one fixed input buffer (no allocation after opening), and per library
// a small Codec that makes one streaming call and says how its stream ends. The loop is a
// template on the codec, so the only virtual call is ByteSource::read, once per caller's buffer.
#include "sim/byte_source.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <concepts>
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

// What one decoding step of a codec reports to DecompressingSource.
struct Step {
  bool ended = false;           // the compressed stream is complete: there is no more output
  const char* error = nullptr;  // corrupt or truncated input: the reason, static text
};

// A codec is one streaming decompressor: decode() moves bytes from the front of `in` to the front
// of `out`, advancing both past what it used, and keeps its own state between calls.
// `input_ended` says the file has no more bytes (`in` is then empty): after flushing any output it
// still holds, the codec must say whether that is the end of its stream (ended) or a truncated
// one (error). It is called once per input refill or output buffer, never per byte.
template <class C>
concept Codec = requires(C codec, std::span<const char>& in, std::span<char>& out,
                         bool input_ended) {
  { codec.decode(in, out, input_ended) } -> std::same_as<Step>;
};

// The loop every codec shares: refill a fixed input buffer from the file whenever the codec has
// used it all, and decode until the caller's buffer is full or the stream ends.
template <Codec C>
class DecompressingSource final : public ByteSource {
 public:
  explicit DecompressingSource(const std::string& path)
      : file_(path), input_(kInputChunkBytes), codec_(path) {}

  std::size_t read(std::span<char> out) override {
    std::span<char> rest = out;
    while (!rest.empty() && !ended_) {
      if (in_.empty() && !input_ended_) {
        const std::size_t got = file_.read(input_.data(), input_.size());
        in_ = std::span<const char>(input_.data(), got);
        input_ended_ = got == 0;
      }
      const Step step = codec_.decode(in_, rest, input_ended_);
      if (step.error != nullptr) throw failure(file_.path(), step.error);
      ended_ = step.ended;
    }
    return out.size() - rest.size();
  }
  std::uint64_t consumed_file_bytes() const override { return file_.consumed(); }
  std::uint64_t file_bytes() const override { return file_.size(); }

 private:
  File file_;
  std::vector<char> input_;
  std::span<const char> in_;  // the part of input_ the codec has not used yet
  bool input_ended_ = false;  // the file has no more bytes
  bool ended_ = false;        // the codec's stream is complete
  C codec_;
};

// Moves the codec's cursors past what one call used.
void advance(std::span<const char>& in, std::size_t left_in, std::span<char>& out,
             std::size_t left_out) {
  in = in.subspan(in.size() - left_in);
  out = out.subspan(out.size() - left_out);
}

// zlib: gzip or zlib streams; concatenated gzip members (what `cat a.gz b.gz` makes) continue
// the stream, so the file ends cleanly only between members.
class GzipCodec {
 public:
  explicit GzipCodec(const std::string& path) {
    // 15 + 32: the largest window, and accept both zlib and gzip headers.
    if (inflateInit2(&stream_, 15 + 32) != Z_OK) throw failure(path, "inflateInit failed");
  }
  GzipCodec(const GzipCodec&) = delete;
  GzipCodec& operator=(const GzipCodec&) = delete;
  ~GzipCodec() { inflateEnd(&stream_); }

  Step decode(std::span<const char>& in, std::span<char>& out, bool input_ended) {
    if (input_ended && between_members_) return {.ended = true};
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    stream_.avail_in = static_cast<uInt>(in.size());
    stream_.next_out = reinterpret_cast<Bytef*>(out.data());
    stream_.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&stream_, Z_NO_FLUSH);
    const bool used_input = stream_.avail_in != in.size();
    advance(in, stream_.avail_in, out, stream_.avail_out);
    if (rc == Z_STREAM_END) {
      inflateReset(&stream_);
      between_members_ = true;
      return {};
    }
    if (rc == Z_OK) {
      if (used_input) between_members_ = false;
      return {};
    }
    // Z_BUF_ERROR: no progress was possible, which with no input left means it ran out.
    return {.error =
                rc == Z_BUF_ERROR && input_ended ? "truncated gzip stream" : "corrupt gzip stream"};
  }

 private:
  z_stream stream_{};
  bool between_members_ = false;  // an empty file is not a gzip stream
};

// liblzma: .xz streams, concatenated ones included (LZMA_CONCATENATED); the decoder itself
// knows, once told LZMA_FINISH, whether the input ended at a stream boundary.
class XzCodec {
 public:
  explicit XzCodec(const std::string& path) {
    if (lzma_stream_decoder(&stream_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
      throw failure(path, "lzma_stream_decoder failed");
  }
  XzCodec(const XzCodec&) = delete;
  XzCodec& operator=(const XzCodec&) = delete;
  ~XzCodec() { lzma_end(&stream_); }

  Step decode(std::span<const char>& in, std::span<char>& out, bool input_ended) {
    stream_.next_in = reinterpret_cast<const std::uint8_t*>(in.data());
    stream_.avail_in = in.size();
    stream_.next_out = reinterpret_cast<std::uint8_t*>(out.data());
    stream_.avail_out = out.size();
    const lzma_ret rc = lzma_code(&stream_, input_ended ? LZMA_FINISH : LZMA_RUN);
    advance(in, stream_.avail_in, out, stream_.avail_out);
    if (rc == LZMA_STREAM_END) return {.ended = true};
    if (rc == LZMA_OK) return {};
    return {.error = rc == LZMA_BUF_ERROR ? "truncated xz stream" : "corrupt xz stream"};
  }

 private:
  lzma_stream stream_ = LZMA_STREAM_INIT;
};

// libzstd: one or more frames back to back; the file ends cleanly only after a complete frame
// (and an empty file is an empty stream).
class ZstdCodec {
 public:
  explicit ZstdCodec(const std::string& path) : stream_(ZSTD_createDStream()) {
    if (stream_ == nullptr) throw failure(path, "ZSTD_createDStream failed");
  }
  ZstdCodec(const ZstdCodec&) = delete;
  ZstdCodec& operator=(const ZstdCodec&) = delete;
  ~ZstdCodec() { ZSTD_freeDStream(stream_); }

  Step decode(std::span<const char>& in, std::span<char>& out, bool input_ended) {
    if (input_ended && frame_complete_) return {.ended = true};
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    ZSTD_outBuffer output{out.data(), out.size(), 0};
    const std::size_t rc = ZSTD_decompressStream(stream_, &output, &input);
    if (ZSTD_isError(rc)) return {.error = ZSTD_getErrorName(rc)};
    advance(in, input.size - input.pos, out, output.size - output.pos);
    frame_complete_ = rc == 0;
    // With no input left, a call that flushed nothing means the frame can never complete.
    if (input_ended && output.pos == 0 && !frame_complete_)
      return {.error = "truncated zstd stream"};
    return {};
  }

 private:
  ZSTD_DStream* stream_;
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
      return std::make_unique<DecompressingSource<GzipCodec>>(path);
    case Compression::kXz:
      return std::make_unique<DecompressingSource<XzCodec>>(path);
    case Compression::kZstd:
      return std::make_unique<DecompressingSource<ZstdCodec>>(path);
    case Compression::kNone:
      break;
  }
  return std::make_unique<PlainSource>(path);
}

}  // namespace chronocache::sim
