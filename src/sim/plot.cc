// Layout and scales of the miss-ratio chart (see plot.h).
#include "sim/plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace chronocache::sim {
namespace {

constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kInk{30, 30, 30};
constexpr Rgb kGrid{225, 225, 225};
// Ten colours that stay distinct for the usual colour-vision deficiencies (Tableau 10).
constexpr std::array<Rgb, 10> kPalette = {{{31, 119, 180},
                                           {255, 127, 14},
                                           {44, 160, 44},
                                           {214, 39, 40},
                                           {148, 103, 189},
                                           {140, 86, 75},
                                           {227, 119, 194},
                                           {127, 127, 127},
                                           {188, 189, 34},
                                           {23, 190, 207}}};

constexpr int kTextScale = 2;
constexpr int kMarginLeft = 100;
constexpr int kMarginRight = 190;  // room for the legend
constexpr int kMarginTop = 56;
constexpr int kMarginBottom = 84;
constexpr int kTickLength = 6;
constexpr int kLineThickness = 3;
constexpr int kMarkerRadius = 5;
// Roughly how many y ticks to aim for; nice_step rounds to 1, 2 or 5 times a power of ten.
constexpr double kTargetTicks = 6.0;

// The smallest of 1, 2, 5 x 10^k at or above `raw`.
double nice_step(double raw) {
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= raw * (1 - 1e-9)) return m * decade;
  return 10.0 * decade;
}

std::string size_label(double v) {
  char buffer[32];
  if (v >= 1e6 && std::fmod(v, 1e5) == 0) {
    std::snprintf(buffer, sizeof buffer, "%gM", v / 1e6);
  } else if (v >= 1e3 && std::fmod(v, 100) == 0) {
    std::snprintf(buffer, sizeof buffer, "%gk", v / 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.0f", v);
  }
  return buffer;
}

// Maps data values to pixels along one axis (log or linear).
struct Scale {
  double lo;
  double hi;
  bool log;
  int pixel_lo;
  int pixel_hi;

  double transform(double v) const { return log ? std::log10(v) : v; }
  int pixel(double v) const {
    const double t = (transform(v) - lo) / (hi - lo);
    return pixel_lo + static_cast<int>(std::lround(t * (pixel_hi - pixel_lo)));
  }
};

// A point marker; each policy gets its own shape as well as its colour, so lines that coincide
// (two policies with equal hit ratios) still show both markers.
void draw_marker(Canvas& canvas, std::size_t series, int cx, int cy, Rgb colour) {
  const int r = kMarkerRadius;
  for (int dy = -r; dy <= r; ++dy) {
    for (int dx = -r; dx <= r; ++dx) {
      bool inside = false;
      switch (series % 6) {
        case 0:  // square
          inside = std::abs(dx) < r && std::abs(dy) < r;
          break;
        case 1:  // diamond
          inside = std::abs(dx) + std::abs(dy) <= r;
          break;
        case 2:  // disc
          inside = dx * dx + dy * dy <= r * r;
          break;
        case 3:  // triangle pointing up
          inside = 2 * std::abs(dx) <= dy + r;
          break;
        case 4:  // triangle pointing down
          inside = 2 * std::abs(dx) <= r - dy;
          break;
        default:  // plus
          inside = std::abs(dx) <= 1 || std::abs(dy) <= 1;
          break;
      }
      if (inside) canvas.set(cx + dx, cy + dy, colour);
    }
  }
}

}  // namespace

Rgb series_colour(std::size_t i) { return kPalette[i % kPalette.size()]; }

Canvas plot_miss_ratios(std::string_view title, std::span<const RunResult> results) {
  Canvas canvas(kPlotWidth, kPlotHeight, kBackground);
  const int left = kMarginLeft;
  const int right = kPlotWidth - kMarginRight;
  const int top = kMarginTop;
  const int bottom = kPlotHeight - kMarginBottom;

  std::vector<std::string_view> policies;
  std::vector<double> sizes;
  double miss_lo = 1.0;
  double miss_hi = 0.0;
  for (const RunResult& r : results) {
    if (std::find(policies.begin(), policies.end(), r.policy) == policies.end())
      policies.push_back(r.policy);
    sizes.push_back(static_cast<double>(std::max<std::size_t>(r.cache_size, 1)));
    miss_lo = std::min(miss_lo, r.miss_ratio());
    miss_hi = std::max(miss_hi, r.miss_ratio());
  }
  const int title_x = (kPlotWidth - Canvas::text_width(title, kTextScale)) / 2;
  canvas.draw_text(std::max(4, title_x), 16, title, kInk, kTextScale);
  if (results.empty()) return canvas;

  // x: log when the sizes span a decade or more.
  const auto [size_min_it, size_max_it] = std::minmax_element(sizes.begin(), sizes.end());
  const double size_min = *size_min_it;
  const double size_max = *size_max_it;
  Scale x{0, 1, size_max / size_min >= 10.0, left, right};
  x.lo = x.transform(size_min);
  x.hi = x.transform(size_max);
  const double x_pad = x.hi > x.lo ? (x.hi - x.lo) * 0.04 : (x.log ? 0.5 : std::max(1.0, x.lo / 2));
  x.lo -= x_pad;
  x.hi += x_pad;

  // y: zoomed to the data on round ticks, within [0, 1].
  const double y_step = nice_step(std::max(miss_hi - miss_lo, 0.01) / kTargetTicks);
  Scale y{std::max(0.0, std::floor(miss_lo / y_step) * y_step),
          std::min(1.0, std::ceil(miss_hi / y_step) * y_step), false, bottom, top};
  if (y.hi <= y.lo) y.hi = std::min(1.0, y.lo + y_step);
  if (y.hi <= y.lo) y.lo = y.hi - y_step;

  // Grid, ticks and labels.
  for (double v = y.lo; v <= y.hi + y_step / 2; v += y_step) {
    const int py = y.pixel(v);
    canvas.draw_line(left, py, right, py, kGrid);
    canvas.draw_line(left - kTickLength, py, left, py, kInk);
    char label[16];
    std::snprintf(label, sizeof label, y_step < 0.01 ? "%.3f" : "%.2f", v);
    canvas.draw_text(left - kTickLength - 4 - Canvas::text_width(label, kTextScale),
                     py - Canvas::text_height(kTextScale) / 2, label, kInk, kTextScale);
  }
  std::vector<double> x_ticks;
  if (x.log) {
    for (int decade = static_cast<int>(std::floor(x.lo)); decade <= std::ceil(x.hi); ++decade) {
      for (const double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, decade);
        if (x.transform(v) >= x.lo && x.transform(v) <= x.hi) x_ticks.push_back(v);
      }
    }
    // Too crowded: keep the powers of ten only.
    if (x_ticks.size() > 8)
      std::erase_if(x_ticks, [](double v) { return std::fmod(std::log10(v), 1.0) != 0.0; });
  } else {
    const double step = nice_step((x.hi - x.lo) / kTargetTicks);
    for (double v = std::ceil(x.lo / step) * step; v <= x.hi; v += step)
      if (v > 0) x_ticks.push_back(v);
  }
  for (const double v : x_ticks) {
    const int px = x.pixel(v);
    canvas.draw_line(px, top, px, bottom, kGrid);
    canvas.draw_line(px, bottom, px, bottom + kTickLength, kInk);
    const std::string label = size_label(v);
    canvas.draw_text(px - Canvas::text_width(label, kTextScale) / 2, bottom + kTickLength + 6,
                     label, kInk, kTextScale);
  }
  canvas.draw_line(left, top, left, bottom, kInk, 2);
  canvas.draw_line(left, bottom, right, bottom, kInk, 2);

  const std::string x_title = x.log ? "cache size (objects, log scale)" : "cache size (objects)";
  canvas.draw_text((left + right - Canvas::text_width(x_title, kTextScale)) / 2, bottom + 44,
                   x_title, kInk, kTextScale);
  const std::string_view y_title = "miss ratio";
  canvas.draw_text_up(18, (top + bottom + Canvas::text_width(y_title, kTextScale)) / 2, y_title,
                      kInk, kTextScale);

  // One polyline with square markers per policy, points in size order.
  for (std::size_t p = 0; p < policies.size(); ++p) {
    std::vector<const RunResult*> points;
    for (const RunResult& r : results)
      if (r.policy == policies[p]) points.push_back(&r);
    std::sort(points.begin(), points.end(),
              [](const RunResult* a, const RunResult* b) { return a->cache_size < b->cache_size; });
    const Rgb colour = series_colour(p);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const int px = x.pixel(std::max<double>(static_cast<double>(points[i]->cache_size), 1.0));
      const int py = y.pixel(points[i]->miss_ratio());
      if (i > 0) {
        const int qx = x.pixel(std::max<double>(static_cast<double>(points[i - 1]->cache_size), 1));
        const int qy = y.pixel(points[i - 1]->miss_ratio());
        canvas.draw_line(qx, qy, px, py, colour, kLineThickness);
      }
      draw_marker(canvas, p, px, py, colour);
    }
    const int legend_y = top + 10 + static_cast<int>(p) * 26;
    canvas.draw_line(right + 14, legend_y + 8, right + 38, legend_y + 8, colour, kLineThickness);
    draw_marker(canvas, p, right + 26, legend_y + 8, colour);
    canvas.draw_text(right + 44, legend_y + 1, policies[p], kInk, kTextScale);
  }
  return canvas;
}

}  // namespace chronocache::sim
