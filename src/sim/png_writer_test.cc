// encode_png checked byte by byte against the PNG specification, with zlib as the independent
// decoder of the image data.
#include "sim/png_writer.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace chronocache::sim {
namespace {

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (std::uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(s[at + 3])};
}

struct Chunk {
  std::string type;
  std::string data;
};

// Splits the file into chunks, checking each one's CRC on the way.
std::vector<Chunk> chunks_of(const std::string& png) {
  std::vector<Chunk> chunks;
  std::size_t at = 8;
  while (at + 12 <= png.size()) {
    const std::uint32_t length = be32(png, at);
    Chunk chunk{png.substr(at + 4, 4), png.substr(at + 8, length)};
    const auto* typed = reinterpret_cast<const Bytef*>(png.data() + at + 4);
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), typed, length + 4);
    EXPECT_EQ(be32(png, at + 8 + length), static_cast<std::uint32_t>(crc)) << chunk.type;
    chunks.push_back(std::move(chunk));
    at += 12 + length;
  }
  EXPECT_EQ(at, png.size()) << "trailing bytes";
  return chunks;
}

TEST(PngWriter, WritesSignatureHeaderDataAndEndWithCorrectCrcs) {
  constexpr std::uint32_t kWidth = 3;
  constexpr std::uint32_t kHeight = 2;
  std::vector<std::uint8_t> rgb(kWidth * kHeight * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i * 13);

  const std::string png = encode_png(kWidth, kHeight, rgb);
  ASSERT_GE(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));

  const std::vector<Chunk> chunks = chunks_of(png);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].type, "IHDR");
  ASSERT_EQ(chunks[0].data.size(), 13u);
  EXPECT_EQ(be32(chunks[0].data, 0), kWidth);
  EXPECT_EQ(be32(chunks[0].data, 4), kHeight);
  EXPECT_EQ(chunks[0].data[8], 8);   // bit depth
  EXPECT_EQ(chunks[0].data[9], 2);   // truecolour
  EXPECT_EQ(chunks[0].data[12], 0);  // not interlaced
  EXPECT_EQ(chunks[1].type, "IDAT");
  EXPECT_EQ(chunks[2].type, "IEND");
  EXPECT_TRUE(chunks[2].data.empty());

  // The image data inflates to one filter byte (0) plus the row's pixels, per row.
  std::vector<std::uint8_t> raw((kWidth * 3 + 1) * kHeight + 16);
  uLongf raw_size = static_cast<uLongf>(raw.size());
  ASSERT_EQ(uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(chunks[1].data.data()),
                       static_cast<uLong>(chunks[1].data.size())),
            Z_OK);
  ASSERT_EQ(raw_size, (kWidth * 3 + 1) * kHeight);
  for (std::uint32_t y = 0; y < kHeight; ++y) {
    EXPECT_EQ(raw[y * (kWidth * 3 + 1)], 0);
    for (std::uint32_t i = 0; i < kWidth * 3; ++i)
      EXPECT_EQ(raw[y * (kWidth * 3 + 1) + 1 + i], rgb[y * kWidth * 3 + i]);
  }
}

TEST(PngWriter, RejectsAPixelBufferOfTheWrongSize) {
  const std::vector<std::uint8_t> rgb(5);
  EXPECT_THROW(encode_png(2, 1, rgb), std::invalid_argument);
}

}  // namespace
}  // namespace chronocache::sim
