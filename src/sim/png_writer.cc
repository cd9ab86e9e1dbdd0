// PNG chunks around zlib's deflate (see png_writer.h).
#include "sim/png_writer.h"

#include <zlib.h>

#include <fstream>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace chronocache::sim {
namespace {

constexpr std::string_view kSignature{"\x89PNG\r\n\x1a\n", 8};
constexpr std::uint8_t kBitDepth = 8;
constexpr std::uint8_t kColourTypeRgb = 2;

void put_u32(std::string& out, std::uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

// Length, type, data, then the CRC-32 of type and data.
void put_chunk(std::string& out, std::string_view type, std::string_view data) {
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t type_at = out.size();
  out.append(type);
  out.append(data);
  const auto* crc_start = reinterpret_cast<const Bytef*>(out.data() + type_at);
  const uLong crc = crc32(crc32(0L, Z_NULL, 0), crc_start, static_cast<uInt>(out.size() - type_at));
  put_u32(out, static_cast<std::uint32_t>(crc));
}

}  // namespace

std::string encode_png(std::uint32_t width, std::uint32_t height,
                       std::span<const std::uint8_t> rgb) {
  const std::size_t row_bytes = static_cast<std::size_t>(width) * 3;
  if (rgb.size() != row_bytes * height)
    throw std::invalid_argument("encode_png: wrong pixel count");

  // Each row is prefixed by its filter type (0 = None).
  std::vector<std::uint8_t> raw;
  raw.reserve((row_bytes + 1) * height);
  for (std::uint32_t y = 0; y < height; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), rgb.begin() + static_cast<std::ptrdiff_t>(y * row_bytes),
               rgb.begin() + static_cast<std::ptrdiff_t>((y + 1) * row_bytes));
  }
  uLongf deflated_size = compressBound(static_cast<uLong>(raw.size()));
  std::string deflated(deflated_size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &deflated_size, raw.data(),
                static_cast<uLong>(raw.size()), Z_BEST_COMPRESSION) != Z_OK) {
    throw std::runtime_error("encode_png: deflate failed");
  }
  deflated.resize(deflated_size);

  std::string header;
  put_u32(header, width);
  put_u32(header, height);
  header.push_back(static_cast<char>(kBitDepth));
  header.push_back(static_cast<char>(kColourTypeRgb));
  header.append(3, '\0');  // compression 0 (deflate), filter method 0, no interlace

  std::string png(kSignature);
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", deflated);
  put_chunk(png, "IEND", {});
  return png;
}

void write_png_file(const std::string& path, std::uint32_t width, std::uint32_t height,
                    std::span<const std::uint8_t> rgb) {
  const std::string png = encode_png(width, height, rgb);
  std::ofstream file(path, std::ios::binary);
  file.write(png.data(), static_cast<std::streamsize>(png.size()));
  if (!file) {
    std::string message = "cannot write ";
    message.append(path);
    throw std::runtime_error(message);
  }
}

}  // namespace chronocache::sim
