// The chart, the canvas and the font: what a reader of the PNG relies on (series drawn in their
// colours, legend present, text legible), checked on pixels.
#include "sim/plot.h"

#include <gtest/gtest.h>

#include "sim/bitmap_font.h"
#include "sim/canvas.h"

namespace chronocache::sim {
namespace {

int count_pixels(const Canvas& canvas, Rgb colour) {
  int count = 0;
  for (int y = 0; y < canvas.height(); ++y)
    for (int x = 0; x < canvas.width(); ++x) count += canvas.at(x, y) == colour ? 1 : 0;
  return count;
}

RunResult run(std::string_view policy, std::size_t size, std::uint64_t hits) {
  return RunResult{policy, size, ReplayResult{1000, hits}};
}

TEST(Plot, DrawsEachPolicyInItsColourWithALegend) {
  const std::vector<RunResult> results = {run("lru", 100, 200),     run("lru", 1000, 500),
                                          run("lru", 10000, 800),   run("s3fifo", 100, 300),
                                          run("s3fifo", 1000, 600), run("s3fifo", 10000, 850)};
  const Canvas chart = plot_miss_ratios("test trace", results);
  EXPECT_EQ(chart.width(), kPlotWidth);
  EXPECT_EQ(chart.height(), kPlotHeight);
  // Lines are a few hundred pixels long and 3 wide: far more than the legend alone.
  EXPECT_GT(count_pixels(chart, series_colour(0)), 500);
  EXPECT_GT(count_pixels(chart, series_colour(1)), 500);
  EXPECT_EQ(count_pixels(chart, series_colour(2)), 0);  // no third policy
}

TEST(Plot, HandlesASingleSizeAndNoResults) {
  const std::vector<RunResult> one = {run("lru", 50, 100)};
  const Canvas chart = plot_miss_ratios("one point", one);
  EXPECT_GT(count_pixels(chart, series_colour(0)), 20);  // marker + legend
  const Canvas empty = plot_miss_ratios("nothing", {});
  EXPECT_EQ(count_pixels(empty, series_colour(0)), 0);
}

TEST(Canvas, ClipsDrawingOutsideTheImage) {
  Canvas canvas(10, 10, Rgb{0, 0, 0});
  canvas.draw_line(-20, 5, 30, 5, Rgb{255, 0, 0}, 3);
  canvas.fill_rect(8, 8, 100, 100, Rgb{0, 255, 0});
  EXPECT_EQ(count_pixels(canvas, Rgb{255, 0, 0}), 30);  // 10 columns x 3 rows
  EXPECT_EQ(count_pixels(canvas, Rgb{0, 255, 0}), 4);
}

TEST(Canvas, TextIsDrawnFromTheFontAndMeasured) {
  Canvas canvas(40, 20, Rgb{255, 255, 255});
  canvas.draw_text(1, 1, "A", Rgb{0, 0, 0});
  // 'A' is .###. / #...# / #...# / ##### / #...# x3: 3 + 2 + 2 + 5 + 2 + 2 + 2 pixels.
  EXPECT_EQ(count_pixels(canvas, Rgb{0, 0, 0}), 18);
  EXPECT_EQ(canvas.at(1, 1), (Rgb{255, 255, 255}));  // top-left of 'A' is blank
  EXPECT_EQ(canvas.at(2, 1), (Rgb{0, 0, 0}));
  EXPECT_EQ(Canvas::text_width("ab", 2), (2 * kGlyphAdvance - 1) * 2);
}

TEST(BitmapFont, GlyphRowsDescendersAndFallback) {
  EXPECT_EQ(glyph_row('A', 0), 0b01110);
  EXPECT_EQ(glyph_row('A', 3), 0b11111);
  EXPECT_EQ(glyph_row(' ', 3), 0);
  // g starts at the x-height and hangs below the baseline.
  EXPECT_EQ(glyph_row('g', 0), 0);
  EXPECT_NE(glyph_row('g', kGlyphHeight + kGlyphDescent - 1), 0);
  EXPECT_EQ(glyph_row('A', kGlyphHeight), 0);
  EXPECT_EQ(glyph_row('\x01', 0), glyph_row('?', 0));
}

}  // namespace
}  // namespace chronocache::sim
