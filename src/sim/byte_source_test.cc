// ByteSource: each codec returns the exact decompressed bytes however the caller chunks its
// reads, and a truncated or corrupt file is an error, never a silently shorter trace. The
// compressed files are written here (trace_writer.h) from bytes whose value the test knows.
#include "sim/byte_source.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "chronocache/base/hash.h"
#include "sim/trace_writer.h"
#include "testing/scratch_dir.h"

namespace chronocache::sim {
namespace {

using chronocache::test_support::ScratchDir;
using test_support::compress;

struct Codec {
  std::string_view suffix;
  Compression compression;
};

constexpr Codec kCodecs[] = {
    {".gz", Compression::kGzip}, {".xz", Compression::kXz}, {".zst", Compression::kZstd}};

// Bytes that do not compress (a hash of the position): the compressed file is about as large as
// the payload, so a 600 KB payload needs several of ByteSource's 256 KB input refills, and the
// codecs' block boundaries fall at places no test chose.
std::string incompressible_bytes(std::size_t size) {
  std::string bytes;
  bytes.reserve(size);
  for (std::uint64_t word = 0; bytes.size() < size; ++word) {
    const std::uint64_t bits = hash_integer(word);
    for (int i = 0; i < 8 && bytes.size() < size; ++i)
      bytes.push_back(static_cast<char>(bits >> (8 * i)));
  }
  return bytes;
}

constexpr std::size_t kPayloadBytes = 600 * 1024;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Everything the source yields, read `chunk` bytes at a time.
std::string read_all(ByteSource& source, std::size_t chunk) {
  std::string all;
  std::vector<char> buffer(chunk);
  for (std::size_t got; (got = source.read(buffer)) != 0;) all.append(buffer.data(), got);
  return all;
}

TEST(ByteSource, CompressionIsChosenBySuffix) {
  EXPECT_EQ(compression_from_path("a.trace.gz"), Compression::kGzip);
  EXPECT_EQ(compression_from_path("a.trace.xz"), Compression::kXz);
  EXPECT_EQ(compression_from_path("a.lis.zst"), Compression::kZstd);
  EXPECT_EQ(compression_from_path("a.bin"), Compression::kNone);
}

TEST(ByteSource, PlainFileIsReadAsIsWithProgressToItsSize) {
  const ScratchDir dir;
  const std::string path = dir.path("plain.bin");
  const std::string payload = incompressible_bytes(kPayloadBytes);
  write_file(path, payload);
  const auto source = open_byte_source(path);
  EXPECT_EQ(source->file_bytes(), kPayloadBytes);
  EXPECT_EQ(read_all(*source, 65536), payload);
  EXPECT_EQ(source->consumed_file_bytes(), kPayloadBytes);
}

TEST(ByteSource, EveryCodecGivesTheOriginalBytesInAnyChunkSize) {
  const ScratchDir dir;
  const std::string payload = incompressible_bytes(kPayloadBytes);
  for (const Codec& codec : kCodecs) {
    SCOPED_TRACE(codec.suffix);
    const std::string path = dir.path(std::string("payload") + std::string(codec.suffix));
    write_file(path, compress(payload, codec.compression));
    ASSERT_GT(file_bytes(path).size(), 2 * 256 * 1024u);  // several input refills

    const auto whole = open_byte_source(path);
    EXPECT_EQ(read_all(*whole, 1 << 20), payload);
    const auto small = open_byte_source(path);
    EXPECT_EQ(read_all(*small, 7), payload);
    EXPECT_EQ(small->consumed_file_bytes(), small->file_bytes());
    EXPECT_EQ(small->file_bytes(), file_bytes(path).size());
  }
}

TEST(ByteSource, CompressibleTextRoundTripsThroughEveryCodec) {
  // The opposite shape: a tiny file that decodes to much more than one read's buffer.
  const ScratchDir dir;
  std::string text;
  for (int i = 0; i < 50'000; ++i) text.append(std::to_string(i % 1000)).append("\n");
  for (const Codec& codec : kCodecs) {
    SCOPED_TRACE(codec.suffix);
    const std::string path = dir.path(std::string("text") + std::string(codec.suffix));
    write_file(path, compress(text, codec.compression));
    ASSERT_LT(file_bytes(path).size(), text.size() / 4);
    // One byte at a time, the codec still holds decoded output when the file's last byte is in:
    // the end of the file is not yet the end of the stream.
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{4096}}) {
      const auto source = open_byte_source(path);
      EXPECT_EQ(read_all(*source, chunk), text) << "chunk " << chunk;
    }
  }
}

TEST(ByteSource, TruncatedStreamsAreErrors) {
  const ScratchDir dir;
  const std::string payload = incompressible_bytes(kPayloadBytes);
  for (const Codec& codec : kCodecs) {
    SCOPED_TRACE(codec.suffix);
    const std::string compressed = compress(payload, codec.compression);
    const std::string path = dir.path(std::string("half") + std::string(codec.suffix));
    write_file(path, std::string_view(compressed).substr(0, compressed.size() / 2));
    const auto source = open_byte_source(path);
    EXPECT_THROW(read_all(*source, 1 << 16), std::runtime_error);
  }
}

TEST(ByteSource, CorruptStreamsAreErrors) {
  const ScratchDir dir;
  const std::string payload = incompressible_bytes(kPayloadBytes);
  for (const Codec& codec : kCodecs) {
    SCOPED_TRACE(codec.suffix);
    std::string compressed = compress(payload, codec.compression);
    compressed[compressed.size() / 2] ^= 0x5a;  // the checksum (or the stream itself) disagrees
    const std::string path = dir.path(std::string("corrupt") + std::string(codec.suffix));
    write_file(path, compressed);
    const auto source = open_byte_source(path);
    EXPECT_THROW(read_all(*source, 1 << 16), std::runtime_error);
  }
}

TEST(ByteSource, ConcatenatedStreamsReadAsOneStream) {
  // What `cat a.gz b.gz` makes: gzip members, xz streams and zstd frames continue the stream.
  const ScratchDir dir;
  for (const Codec& codec : kCodecs) {
    SCOPED_TRACE(codec.suffix);
    const std::string path = dir.path(std::string("two_parts.txt") + std::string(codec.suffix));
    write_file(path, compress("first part\n", codec.compression) +
                         compress("second part\n", codec.compression));
    const auto source = open_byte_source(path);
    EXPECT_EQ(read_all(*source, 3), "first part\nsecond part\n");
  }
}

TEST(ByteSource, EmptyStreamsReadAsEmpty) {
  const ScratchDir dir;
  for (const Codec& codec : kCodecs) {
    SCOPED_TRACE(codec.suffix);
    const std::string path = dir.path(std::string("empty") + std::string(codec.suffix));
    write_file(path, compress("", codec.compression));
    const auto source = open_byte_source(path);
    EXPECT_EQ(read_all(*source, 16), "");
  }
}

TEST(ByteSource, MissingFileIsAnError) {
  const ScratchDir dir;
  EXPECT_THROW(open_byte_source(dir.path("does_not_exist.gz")), std::runtime_error);
}

}  // namespace
}  // namespace chronocache::sim
