// Canvas: an RGB raster with the few drawing operations a line chart needs (plot.h).
//
// 8-bit RGB, row-major, top-left origin, no alpha and no anti-aliasing: charts of a handful of
// lines read fine without it and the PNG stays small (flat colours deflate well). Drawing outside
// the canvas is clipped, so callers need not check bounds.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace chronocache::sim {

struct Rgb {
  std::uint8_t r = 0;
  std::uint8_t g = 0;
  std::uint8_t b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

class Canvas {
 public:
  Canvas(int width, int height, Rgb background);

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  // width * height * 3 bytes, rows top to bottom.
  std::span<const std::uint8_t> pixels() const noexcept { return pixels_; }
  Rgb at(int x, int y) const;

  void set(int x, int y, Rgb color);
  void fill_rect(int x, int y, int w, int h, Rgb color);
  // A line `thickness` pixels wide (Bresenham, stamping a square brush).
  void draw_line(int x0, int y0, int x1, int y1, Rgb color, int thickness = 1);
  // Text from the 5x7 font with its top-left corner at (x, y), each font pixel drawn as a
  // scale x scale block.
  void draw_text(int x, int y, std::string_view text, Rgb color, int scale = 1);
  // The same text turned 90 degrees counter-clockwise (reading bottom to top: a y-axis label);
  // (x, y) is the bottom-left corner of the turned text.
  void draw_text_up(int x, int y, std::string_view text, Rgb color, int scale = 1);

  static int text_width(std::string_view text, int scale = 1);
  static int text_height(int scale = 1);

 private:
  int width_;
  int height_;
  std::vector<std::uint8_t> pixels_;
};

}  // namespace chronocache::sim
