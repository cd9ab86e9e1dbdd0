// encode_png: an RGB raster as a PNG file (ISO/IEC 15948), written with zlib and nothing else.
//
// Only what a chart needs: 8-bit truecolour (colour type 2), no interlace, filter type 0 on every
// row, one IDAT chunk deflated at the best level. Layout of the bytes:
//
//   89 50 4E 47 0D 0A 1A 0A                       signature
//   [len=13]"IHDR" width height 8 2 0 0 0 [crc]   big-endian u32s; crc over type + data
//   [len]"IDAT" zlib( for each row: 0x00 r g b r g b ... ) [crc]
//   [len=0]"IEND" [crc]
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace chronocache::sim {

// `rgb` holds width * height * 3 bytes, rows top to bottom. Returns the file's bytes.
std::string encode_png(std::uint32_t width, std::uint32_t height,
                       std::span<const std::uint8_t> rgb);

// encode_png to `path`; throws std::runtime_error if the file cannot be written.
void write_png_file(const std::string& path, std::uint32_t width, std::uint32_t height,
                    std::span<const std::uint8_t> rgb);

}  // namespace chronocache::sim
