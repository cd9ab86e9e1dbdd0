// Encoders and one-shot compressors for test traces (see trace_writer.h).
#include "sim/trace_writer.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <fstream>
#include <stdexcept>

namespace chronocache::sim::test_support {
namespace {

// Low presets: the tests' traces are small and the codec's ratio is not what they check; xz's
// default preset 6 would spend most of a test's time compressing.
constexpr std::uint32_t kXzPreset = 1;
constexpr int kZstdLevel = 3;

// A LIRS checkpoint line after this many keys: sparse enough to keep the files small.
constexpr std::size_t kKeysPerCheckpoint = 100;

void append_little_endian(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

std::string gzip(std::string_view bytes) {
  z_stream stream{};
  // 15 + 16: the largest window, with a gzip header and trailer (what `gzip` writes).
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out(deflateBound(&stream, static_cast<uLong>(bytes.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

std::string xz(std::string_view bytes) {
  std::string out(lzma_stream_buffer_bound(bytes.size()), '\0');
  std::size_t written = 0;
  if (lzma_easy_buffer_encode(kXzPreset, LZMA_CHECK_CRC64, nullptr,
                              reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
                              reinterpret_cast<std::uint8_t*>(out.data()), &written,
                              out.size()) != LZMA_OK)
    throw std::runtime_error("lzma_easy_buffer_encode failed");
  out.resize(written);
  return out;
}

std::string zstd(std::string_view bytes) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  if (context == nullptr) throw std::runtime_error("ZSTD_createCCtx failed");
  // With the content checksum, a corrupted frame is an error rather than different bytes.
  ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, kZstdLevel);
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  const std::size_t written =
      ZSTD_compress2(context, out.data(), out.size(), bytes.data(), bytes.size());
  ZSTD_freeCCtx(context);
  if (ZSTD_isError(written)) throw std::runtime_error(ZSTD_getErrorName(written));
  out.resize(written);
  return out;
}

}  // namespace

std::vector<std::uint64_t> expand_runs(std::span<const KeyRun> runs) {
  std::vector<std::uint64_t> keys;
  for (const KeyRun& run : runs)
    for (std::uint64_t i = 0; i < run.count; ++i) keys.push_back(run.start + i);
  return keys;
}

std::string encode_text(std::span<const std::uint64_t> keys, std::string_view line_end) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out.append(std::to_string(keys[i])).append(line_end);
    if ((i + 1) % kKeysPerCheckpoint == 0) out.append("*").append(line_end);
  }
  return out;
}

std::string encode_csv(std::span<const std::uint64_t> keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i)
    out.append(std::to_string(i)).append(",").append(std::to_string(keys[i])).append(",512\n");
  return out;
}

std::string encode_csv_with_header(std::span<const std::uint64_t> keys) {
  std::string out = "version,time,op,size,lbn\n";
  for (std::size_t i = 0; i < keys.size(); ++i)
    out.append("1,")
        .append(std::to_string(i))
        .append(",2a,512,")
        .append(std::to_string(keys[i]))
        .append("\n");
  return out;
}

std::string encode_oracle_general(std::span<const std::uint64_t> keys) {
  std::string out;
  out.reserve(keys.size() * 24);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    append_little_endian(out, i, 4);                                 // time
    append_little_endian(out, keys[i], 8);                           // obj_id
    append_little_endian(out, 512, 4);                               // obj_size
    append_little_endian(out, static_cast<std::uint64_t>(-1LL), 8);  // next_access_vtime
  }
  return out;
}

std::string encode_int32_big_endian(std::span<const std::uint64_t> keys) {
  std::string out;
  out.reserve(keys.size() * 4);
  for (const std::uint64_t key : keys) {
    if (key >= (std::uint64_t{1} << 31)) throw std::invalid_argument("key does not fit an int32");
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(key >> shift));
  }
  return out;
}

std::string encode_arc_lis(std::span<const KeyRun> runs) {
  std::string out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out.append(std::to_string(runs[i].start)).append(" ").append(std::to_string(runs[i].count));
    out.append(" 0 ").append(std::to_string(i)).append("\n");
  }
  return out;
}

std::string compress(std::string_view bytes, Compression compression) {
  switch (compression) {
    case Compression::kGzip:
      return gzip(bytes);
    case Compression::kXz:
      return xz(bytes);
    case Compression::kZstd:
      return zstd(bytes);
    case Compression::kNone:
      break;
  }
  return std::string(bytes);
}

void write_trace_file(const std::string& path, std::string_view bytes) {
  const std::string stored = compress(bytes, compression_from_path(path));
  std::ofstream out(path, std::ios::binary);
  out.write(stored.data(), static_cast<std::streamsize>(stored.size()));
  if (!out.flush()) throw std::runtime_error(path + ": cannot write");
}

}  // namespace chronocache::sim::test_support
