#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stagegate::report {

/// Charts as standalone SVG 1.1 text, for inline use in the one-file HTML report. Every function
/// here is pure (no I/O, no global state, thread-safe) and deterministic: the same input gives the
/// same bytes. Every piece of caller text goes through EscapeHtml, so names from corpora and models
/// may hold anything. The output refers to nothing outside itself: no href, no fonts, no scripts.
///
/// Ids (for aria-labelledby and bar fill patterns) are "sg" plus a hash of the chart's content, so
/// different charts on one page never share one; a page that shows the very same chart twice
/// would, so show each chart once.

/// Text for HTML and SVG (element content and quoted attributes): & < > " ' escaped (&amp; &lt;
/// &gt; &quot; &#39;). Bytes that are not valid UTF-8, and characters that XML 1.0 forbids even
/// when escaped (C0 controls other than tab, line feed and carriage return; U+FFFE, U+FFFF), are
/// replaced by U+FFFD.
std::string EscapeHtml(std::string_view text);

struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::string name;           // legend text
  std::vector<Point> points;  // drawn in order
  bool step = false;          // a step line (for CDFs and timelines), else straight segments
  bool dots = false;          // also a dot at every point
};

/// A threshold or a limit: a dashed line across the plot, with its label.
struct RefLine {
  bool horizontal = true;  // at y = value, else at x = value
  double value = 0;
  std::string label;
};

/// A shaded x interval (a burst, the overload), labelled at the top.
struct Band {
  double from = 0, to = 0;
  std::string label;
};

/// A marked point (the knee): a ring with a label.
struct Marker {
  Point at;
  std::string label;
};

/// A line chart. Non-finite points are left out; on a log axis (base 10) so are non-positive
/// values, and <desc> says how many were. Without any plottable point the chart says "no data".
///
/// An axis range not given is the data's (with ref lines, bands and markers on that axis),
/// extended to the next tick on each side; a linear y axis whose values are all >= 0 starts at 0.
/// A range given is kept as given, and what lies outside it is clipped. A given range that is
/// empty or reversed, not finite, or not positive on a log axis, is ignored.
///
/// Ticks on a linear axis: the smallest step of 1, 2 or 5 times a power of ten that needs at most
/// 8 intervals (fewer on a small chart: one per 30 px of height, one per 70 px of width, at least
/// 2); so y over 0..1370 gets 0, 200, ..., 1400. On a log axis: every decade (every 2nd, 3rd, ...
/// when there are more than 8), plus 2 and 5 within each decade when a decade spans 100 px or more.
struct Chart {
  std::string title;        // shown above, and as the SVG <title>
  std::string description;  // the SVG <desc>, for screen readers; a summary is made when empty
  std::string x_label, y_label;
  bool log_x = false, log_y = false;
  std::optional<double> x_min, x_max, y_min, y_max;
  std::vector<Series> series;
  std::vector<RefLine> lines;
  std::vector<Band> bands;
  std::vector<Marker> markers;
  // Pixels, clamped to 240..4000 and 160..4000; a legend of many rows makes the chart taller, so
  // that the plot keeps 100 pixels.
  int width = 720, height = 360;
};

std::string LineChartSvg(const Chart& chart);

/// One group of bars, one value per series (a missing or non-finite value draws no bar).
struct BarGroup {
  std::string label;
  std::vector<double> values;
};

/// A grouped bar chart on a linear y axis that always includes 0 (ticks as for Chart). Series are
/// told apart by colour and, for greyscale print, by a fill pattern (plain, stripes, dots).
struct BarChart {
  std::string title, description, x_label, y_label;
  std::vector<std::string> series_names;  // legend, shown when there are 2 or more
  std::vector<BarGroup> groups;           // e.g. score levels 1..5, each with a count per criterion
  int width = 720, height = 320;          // clamped as for Chart
};

std::string BarChartSvg(const BarChart& chart);

/// The empirical CDF of the finite `values` as a step series: one point per value, x sorted, y from
/// 1/n to 1 (ties keep one point each). With more than `max_points` values (counted as at least 2),
/// the points at ranks floor(j * (n - 1) / (max_points - 1)) are kept, j = 0 .. max_points - 1:
/// evenly spaced, always the first and the last.
Series CdfSeries(std::string name, std::span<const double> values, size_t max_points = 400);

}  // namespace stagegate::report
