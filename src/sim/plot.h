// plot_miss_ratios: the miss-ratio curve of each policy (miss ratio against cache size), the
// chart cache papers draw (S3-FIFO, SIEVE, LIRS), rendered onto a Canvas for --png.
//
//   +--------------------------------------------------+
//   |  title                                           |
//   | m 0.6 -+--*                                      |  one line + markers per policy,
//   | i      |    \*--*__          legend: ■ lru       |  colours from a fixed palette in
//   | s 0.4 -+           *--*              ■ s3fifo    |  the order policies were given
//   | s      +-----+-----+-----+                       |
//   |             1k    10k   100k                     |
//   |           cache size (objects, log scale)        |
//   +--------------------------------------------------+
//
// The x axis is logarithmic when the sizes span a factor of 10 or more (fractions of the unique
// keys usually do), linear otherwise; the y axis is zoomed to the data, on round ticks.
#pragma once

#include <span>
#include <string_view>

#include "sim/canvas.h"
#include "sim/experiment.h"

namespace chronocache::sim {

inline constexpr int kPlotWidth = 960;
inline constexpr int kPlotHeight = 600;

Canvas plot_miss_ratios(std::string_view title, std::span<const RunResult> results);

// The palette colour of the i-th policy (wraps around).
Rgb series_colour(std::size_t i);

}  // namespace chronocache::sim
