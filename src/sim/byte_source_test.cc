// ByteSource: each codec returns the exact decompressed bytes however the caller chunks its
// reads, and a truncated or corrupt file is an error, never a silently shorter trace.
#include "sim/byte_source.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace chronocache::sim {
namespace {

std::string sample(std::string_view relative) {
  std::string path = CC_TRACES_DIR;
  path.append("/");
  path.append(relative);
  return path;
}

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

std::string temp_path(std::string_view name) {
  std::string path = testing::TempDir();
  path.append("byte_source_test_");
  path.append(name);
  return path;
}

TEST(ByteSource, CompressionIsChosenBySuffix) {
  EXPECT_EQ(compression_from_path("a.trace.gz"), Compression::kGzip);
  EXPECT_EQ(compression_from_path("a.trace.xz"), Compression::kXz);
  EXPECT_EQ(compression_from_path("a.lis.zst"), Compression::kZstd);
  EXPECT_EQ(compression_from_path("a.bin"), Compression::kNone);
}

TEST(ByteSource, PlainFileIsReadAsIsWithProgressToItsSize) {
  const std::string path = sample("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
  const auto source = open_byte_source(path);
  EXPECT_EQ(read_all(*source, 65536), file_bytes(path));
  EXPECT_EQ(source->consumed_file_bytes(), source->file_bytes());
  EXPECT_EQ(source->file_bytes(), 2'732'928u);  // the traces README's size
}

TEST(ByteSource, EveryCodecGivesTheSameBytesInAnyChunkSize) {
  for (const std::string_view file :
       {"lirs/cpp.trace.gz", "cache2k/web07.trace.xz", "arc/OLTP.lis.zst"}) {
    SCOPED_TRACE(file);
    const auto whole = open_byte_source(sample(file));
    const std::string reference = read_all(*whole, 1 << 20);
    ASSERT_GT(reference.size(), 10'000u);
    const auto small = open_byte_source(sample(file));
    EXPECT_EQ(read_all(*small, 7), reference);
    EXPECT_EQ(small->consumed_file_bytes(), small->file_bytes());
  }
  // The decoded size matches the README's count: web07 is 76,118 four-byte keys.
  const auto web07 = open_byte_source(sample("cache2k/web07.trace.xz"));
  EXPECT_EQ(read_all(*web07, 4096).size(), 76'118u * 4);
}

TEST(ByteSource, TruncatedStreamsAreErrors) {
  for (const std::string_view file :
       {"lirs/cpp.trace.gz", "cache2k/web07.trace.xz", "arc/OLTP.lis.zst"}) {
    SCOPED_TRACE(file);
    const std::string bytes = file_bytes(sample(file));
    const std::string path = temp_path(file.substr(file.find('/') + 1));
    write_file(path, std::string_view(bytes).substr(0, bytes.size() / 2));
    const auto source = open_byte_source(path);
    EXPECT_THROW(read_all(*source, 1 << 16), std::runtime_error);
  }
}

TEST(ByteSource, ConcatenatedGzipMembersReadAsOneStream) {
  const std::string path = temp_path("two_members.txt.gz");
  for (const char* mode : {"wb", "ab"}) {  // "ab" appends a second gzip member
    gzFile gz = gzopen(path.c_str(), mode);
    ASSERT_NE(gz, nullptr);
    const std::string text = std::string(mode) + " part\n";
    gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
    gzclose(gz);
  }
  const auto source = open_byte_source(path);
  EXPECT_EQ(read_all(*source, 3), "wb part\nab part\n");
}

TEST(ByteSource, MissingFileIsAnError) {
  EXPECT_THROW(open_byte_source(temp_path("does_not_exist.gz")), std::runtime_error);
}

}  // namespace
}  // namespace chronocache::sim
