// A 5x7 bitmap font for printable ASCII, drawn for chronocache-sim's plots.
//
// Plots need axis numbers, policy names and a title, nothing more; a 95-glyph table in the binary
// keeps the PNG writer free of a font library (FreeType) and of fonts on the host. Each glyph is
// stored as seven 5-character rows of '#' and '.', so the table in bitmap_font.cc reads as the
// letters themselves and a glyph can be fixed by eye.
#pragma once

#include <cstdint>

namespace chronocache::sim {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;
// Rows below the baseline for the tails of g, p, q, y: a glyph cell is kGlyphHeight +
// kGlyphDescent rows tall.
inline constexpr int kGlyphDescent = 2;
// Horizontal distance from one glyph to the next, in font pixels (glyph + 1 blank column).
inline constexpr int kGlyphAdvance = kGlyphWidth + 1;

// Row `row` (0 = top, up to kGlyphHeight + kGlyphDescent - 1) of the glyph for `c`, as kGlyphWidth
// bits with bit 4 the leftmost column. Characters outside ' '..'~' draw as '?'.
std::uint8_t glyph_row(char c, int row);

}  // namespace chronocache::sim
