// Rasterising for Canvas (see canvas.h).
#include "sim/canvas.h"

#include <cstdlib>

#include "sim/bitmap_font.h"

namespace chronocache::sim {

Canvas::Canvas(int width, int height, Rgb background)
    : width_(width), height_(height), pixels_(static_cast<std::size_t>(width) * height * 3) {
  fill_rect(0, 0, width, height, background);
}

Rgb Canvas::at(int x, int y) const {
  const std::size_t i = (static_cast<std::size_t>(y) * width_ + x) * 3;
  return Rgb{pixels_[i], pixels_[i + 1], pixels_[i + 2]};
}

void Canvas::set(int x, int y, Rgb color) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  const std::size_t i = (static_cast<std::size_t>(y) * width_ + x) * 3;
  pixels_[i] = color.r;
  pixels_[i + 1] = color.g;
  pixels_[i + 2] = color.b;
}

void Canvas::fill_rect(int x, int y, int w, int h, Rgb color) {
  for (int row = y; row < y + h; ++row)
    for (int col = x; col < x + w; ++col) set(col, row, color);
}

void Canvas::draw_line(int x0, int y0, int x1, int y1, Rgb color, int thickness) {
  const int dx = std::abs(x1 - x0);
  const int dy = -std::abs(y1 - y0);
  const int step_x = x0 < x1 ? 1 : -1;
  const int step_y = y0 < y1 ? 1 : -1;
  const int half = (thickness - 1) / 2;
  int error = dx + dy;
  for (;;) {
    fill_rect(x0 - half, y0 - half, thickness, thickness, color);
    if (x0 == x1 && y0 == y1) break;
    const int twice = 2 * error;
    if (twice >= dy) {
      error += dy;
      x0 += step_x;
    }
    if (twice <= dx) {
      error += dx;
      y0 += step_y;
    }
  }
}

void Canvas::draw_text(int x, int y, std::string_view text, Rgb color, int scale) {
  for (const char c : text) {
    for (int row = 0; row < kGlyphHeight + kGlyphDescent; ++row) {
      const std::uint8_t bits = glyph_row(c, row);
      for (int col = 0; col < kGlyphWidth; ++col) {
        if (bits & (1U << (kGlyphWidth - 1 - col)))
          fill_rect(x + col * scale, y + row * scale, scale, scale, color);
      }
    }
    x += kGlyphAdvance * scale;
  }
}

void Canvas::draw_text_up(int x, int y, std::string_view text, Rgb color, int scale) {
  // Font pixel (col, row) of the n-th glyph lands at x + row, y - (n * advance + col).
  int along = 0;
  for (const char c : text) {
    for (int row = 0; row < kGlyphHeight + kGlyphDescent; ++row) {
      const std::uint8_t bits = glyph_row(c, row);
      for (int col = 0; col < kGlyphWidth; ++col) {
        if (bits & (1U << (kGlyphWidth - 1 - col)))
          fill_rect(x + row * scale, y - (along + col + 1) * scale, scale, scale, color);
      }
    }
    along += kGlyphAdvance;
  }
}

int Canvas::text_width(std::string_view text, int scale) {
  if (text.empty()) return 0;
  return (static_cast<int>(text.size()) * kGlyphAdvance - 1) * scale;
}

int Canvas::text_height(int scale) { return kGlyphHeight * scale; }

}  // namespace chronocache::sim
