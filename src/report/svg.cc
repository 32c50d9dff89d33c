#include "report/svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "base/strings.h"
#include "report/svg_axis.h"

namespace stagegate::report {
namespace {

using svg_axis::Axis;
using svg_axis::Extent;
using svg_axis::kMaxMagnitude;
using svg_axis::MakeAxis;
using svg_axis::MaxIntervals;
using svg_axis::Tick;
using svg_axis::TickLabel;

// Stands for the chart's id while the body is written; the id is a hash of the whole text. Caller
// text can never contain it: EscapeHtml turns every '<' into "&lt;".
constexpr std::string_view kIdToken = "<@id>";
// Okabe & Ito's colour-blind-safe palette, ordered so that the first few differ most; yellow,
// faint on white, comes last.
constexpr std::array<std::string_view, 8> kColours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                      "#E69F00", "#56B4E9", "#000000", "#F0E442"};
// With 8 colours and 6 dashes, the first 24 series all differ in both; the dashes keep them
// apart in greyscale print.
constexpr std::array<std::string_view, 6> kDashes = {"",         "8 4", "2 3",
                                                     "10 3 2 3", "4 2", "12 3 2 3 2 3"};
// A white halo under labels drawn over data.
constexpr std::string_view kHalo =
    R"( stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke")";

// XML 1.0 forbids these characters even as character references.
bool AllowedInXml(std::string_view sequence) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(sequence[i]); };
  if (sequence.size() == 1)
    return byte(0) >= 0x20 || byte(0) == '\t' || byte(0) == '\n' || byte(0) == '\r';
  return !(sequence.size() == 3 && byte(0) == 0xEF && byte(1) == 0xBF && byte(2) >= 0xBE);
}

size_t CodePoints(std::string_view text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// An estimate for layout: the average glyph of a sans-serif font is about 0.6 em wide.
double TextWidth(std::string_view text, double font_size) {
  return static_cast<double>(CodePoints(text)) * font_size * 0.6;
}

// `text` escaped, shortened with an ellipsis to about `max_width` pixels.
std::string FitText(std::string_view text, double max_width, double font_size) {
  if (TextWidth(text, font_size) <= max_width) return EscapeHtml(text);
  const double keep = std::floor(max_width / (font_size * 0.6)) - 1;
  size_t end = 0;
  for (double kept = 0; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) continue;
    if (kept++ >= keep) break;
  }
  return EscapeHtml(text.substr(0, end)) + "\xE2\x80\xA6";
}

// A pixel coordinate. Callers clip first; the guard keeps a missed case from printing "nan".
std::string Num(double value) {
  if (!std::isfinite(value)) return "0";
  return FormatNumber(std::clamp(value, -1e6, 1e6), 2);
}

struct Frame {
  double left = 0, top = 0, right = 0, bottom = 0;
  double Width() const { return right - left; }
  double Height() const { return bottom - top; }
  bool Contains(long double x, long double y) const {
    return x >= left - 0.01 && x <= right + 0.01 && y >= top - 0.01 && y <= bottom + 0.01;
  }
};

struct Canvas {
  double width = 0, height = 0;
};

Canvas MakeCanvas(int width, int height) {
  return {static_cast<double>(std::clamp(width, 240, 4000)),
          static_cast<double>(std::clamp(height, 160, 4000))};
}

// Liang-Barsky: clips the segment to the frame; false when none of it is inside. A far outlier
// (beyond a given range) loses all precision in `a + t * (b - a)` with t near 1, so a clipped end
// near b is reached from b instead, with 1 - t computed directly.
bool ClipSegment(long double& x0, long double& y0, long double& x1, long double& y1,
                 const Frame& frame) {
  struct Bound {
    long double t, rest;  // rest == 1 - t
  };
  Bound enter{0, 1}, leave{1, 0};
  const long double dx = x1 - x0, dy = y1 - y0;
  // Narrows enter..leave to where a + t * d is on the inner side of `at` (above it, or below).
  const auto edge = [&](long double a, long double b, long double d, long double at, bool above) {
    if (d == 0) return above ? a >= at : a <= at;
    const Bound cross{(at - a) / d, (b - at) / d};
    if (above == (d > 0)) {  // moving inwards
      if (cross.t > leave.t) return false;
      if (cross.t > enter.t) enter = cross;
    } else {
      if (cross.t < enter.t) return false;
      if (cross.t < leave.t) leave = cross;
    }
    return true;
  };
  if (!edge(x0, x1, dx, frame.left, true) || !edge(x0, x1, dx, frame.right, false) ||
      !edge(y0, y1, dy, frame.top, true) || !edge(y0, y1, dy, frame.bottom, false))
    return false;
  const auto along = [](const Bound& bound, long double a, long double b, long double d) {
    return bound.t <= 0.5 ? a + bound.t * d : b - bound.rest * d;
  };
  // With both ends far out no precision is left; the clamp keeps the result on the frame at least.
  const auto x = [&](long double v) { return std::clamp<long double>(v, frame.left, frame.right); };
  const auto y = [&](long double v) { return std::clamp<long double>(v, frame.top, frame.bottom); };
  const long double start_x = x(along(enter, x0, x1, dx)), start_y = y(along(enter, y0, y1, dy));
  x1 = x(along(leave, x0, x1, dx));
  y1 = y(along(leave, y0, y1, dy));
  x0 = start_x;
  y0 = start_y;
  return true;
}

std::string PathData(const std::vector<Point>& points, bool step, const Axis& x, const Axis& y,
                     const Frame& frame) {
  std::vector<std::pair<long double, long double>> vertices;
  for (const Point& point : points) {
    const long double px = x.Pixel(point.x), py = y.Pixel(point.y);
    if (step && !vertices.empty()) vertices.emplace_back(px, vertices.back().second);
    vertices.emplace_back(px, py);
  }
  std::string d;
  bool pen_down = false;
  std::pair<long double, long double> pen;
  for (size_t i = 1; i < vertices.size(); ++i) {
    auto [x0, y0] = vertices[i - 1];
    auto [x1, y1] = vertices[i];
    if (!ClipSegment(x0, y0, x1, y1, frame)) continue;
    if (!pen_down || pen != std::pair(x0, y0)) d += "M" + Num(x0) + " " + Num(y0);
    d += "L" + Num(x1) + " " + Num(y1);
    pen_down = true;
    pen = {x1, y1};
  }
  return d;
}

std::string Colour(size_t index) {
  return std::string(kColours[index % kColours.size()]);
}

// A bar's fill: plain colour for the first series, a patterned one (see PatternDefs) for others.
std::string BarFill(size_t index) {
  if (index % 6 == 0) return Colour(index);
  return "url(#" + std::string(kIdToken) + "-fill-" + std::to_string(index) + ")";
}

// White stripes at four angles, or white dots, over the series colour: tells bars apart in
// greyscale print.
std::string PatternDefs(size_t series_count) {
  std::string defs;
  for (size_t i = 0; i < series_count; ++i) {
    const size_t kind = i % 6;
    if (kind == 0) continue;
    defs += "<pattern id=\"" + std::string(kIdToken) + "-fill-" + std::to_string(i) +
            R"(" width="6" height="6" patternUnits="userSpaceOnUse")";
    if (kind <= 4) {
      constexpr std::array<int, 5> kAngles = {0, 45, -45, 0, 90};
      defs += " patternTransform=\"rotate(" + std::to_string(kAngles[kind]) +
              ")\"><rect width=\"6\" height=\"6\" fill=\"" + Colour(i) +
              R"("/><rect width="2.5" height="6" fill="#fff" fill-opacity="0.7"/></pattern>)";
    } else {
      defs += "><rect width=\"6\" height=\"6\" fill=\"" + Colour(i) +
              R"("/><circle cx="3" cy="3" r="1.4" fill="#fff" fill-opacity="0.8"/></pattern>)";
    }
    defs += "\n";
  }
  return defs.empty() ? "" : "<defs>\n" + defs + "</defs>\n";
}

enum class Swatch { kLine, kLineAndDot, kBox };

struct LegendEntry {
  std::string_view name;
  size_t index = 0;
  Swatch swatch = Swatch::kLine;
};

std::string SwatchSvg(const LegendEntry& entry, double x, double y) {
  if (entry.swatch == Swatch::kBox) {
    return "<rect x=\"" + Num(x) + "\" y=\"" + Num(y - 10) +
           "\" width=\"14\" height=\"12\" fill=\"" + BarFill(entry.index) +
           "\" stroke=\"#333\" stroke-width=\"0.5\"/>";
  }
  std::string svg = "<line x1=\"" + Num(x) + "\" y1=\"" + Num(y - 4) + "\" x2=\"" + Num(x + 24) +
                    "\" y2=\"" + Num(y - 4) + "\" stroke=\"" + Colour(entry.index) +
                    "\" stroke-width=\"2\"";
  const std::string_view dash = kDashes[entry.index % kDashes.size()];
  if (!dash.empty()) svg += " stroke-dasharray=\"" + std::string(dash) + "\"";
  svg += "/>";
  if (entry.swatch == Swatch::kLineAndDot)
    svg += "<circle cx=\"" + Num(x + 12) + "\" cy=\"" + Num(y - 4) + "\" r=\"2.5\" fill=\"" +
           Colour(entry.index) + "\"/>";
  return svg;
}

// The title and, for two entries or more, a legend wrapped into rows; returns the top of the plot.
double DrawHeading(std::string& out, const Canvas& canvas, std::string_view title,
                   const std::vector<LegendEntry>& legend) {
  out += R"(<text class="title" x="12" y="22" font-size="15" font-weight="bold">)" +
         FitText(title, canvas.width - 24, 15) + "</text>\n";
  if (legend.size() < 2) return 40;
  out += R"(<g class="legend" font-size="12">)";
  double x = 12, y = 44;
  for (const LegendEntry& entry : legend) {
    const double swatch = entry.swatch == Swatch::kBox ? 20 : 30;
    const double room = canvas.width - 12 - swatch;
    const double width = swatch + std::min(TextWidth(entry.name, 12), room) + 18;
    if (x > 12 && x + width > canvas.width - 12) {
      x = 12;
      y += 18;
    }
    out += "\n" + SwatchSvg(entry, x, y) + "<text x=\"" + Num(x + swatch) + "\" y=\"" + Num(y) +
           "\">" + FitText(entry.name, room, 12) + "</text>";
    x += width;
  }
  out += "</g>\n";
  return y + 20;
}

void DrawAxisLabels(std::string& out, const Canvas& canvas, const Frame& frame,
                    std::string_view x_label, std::string_view y_label) {
  if (!x_label.empty()) {
    out += R"(<text class="x-label" text-anchor="middle" x=")" +
           Num((frame.left + frame.right) / 2) + "\" y=\"" + Num(canvas.height - 10) + "\">" +
           FitText(x_label, canvas.width - 24, 12) + "</text>\n";
  }
  if (!y_label.empty()) {
    out += R"(<text class="y-label" text-anchor="middle" transform="translate(16 )" +
           Num((frame.top + frame.bottom) / 2) + ") rotate(-90)\">" +
           FitText(y_label, frame.Height(), 12) + "</text>\n";
  }
}

// The plot below the heading, without its left edge (that depends on the y ticks). A legend too
// tall for the chart makes the chart taller rather than the plot too short.
Frame PlotFrame(Canvas& canvas, double top, std::string_view x_label, double right_margin) {
  const double below = x_label.empty() ? 30 : 48;
  canvas.height = std::max(canvas.height, top + 100 + below);
  return {.top = top, .right = canvas.width - right_margin, .bottom = canvas.height - below};
}

// The left edge of the plot: room for the y tick labels and the y axis label.
double PlotLeft(const Axis& y, std::string_view y_label) {
  double widest = 0;
  for (const Tick& tick : y.ticks)
    widest = std::max(widest, TextWidth(tick.label, 11));
  return std::max(40.0, (y_label.empty() ? 10 : 30) + widest + 8);
}

void DrawNoData(std::string& out, const Frame& frame) {
  out += R"(<rect class="plot-area" x=")" + Num(frame.left) + "\" y=\"" + Num(frame.top) +
         "\" width=\"" + Num(frame.Width()) + "\" height=\"" + Num(frame.Height()) +
         R"(" fill="#fafafa" stroke="#ccc"/>)" + "\n";
  out += R"(<text class="no-data" text-anchor="middle" font-size="14" fill="#666" x=")" +
         Num((frame.left + frame.right) / 2) + "\" y=\"" + Num((frame.top + frame.bottom) / 2) +
         "\">no data</text>\n";
}

void DrawPlotArea(std::string& out, const Frame& frame) {
  out += R"(<rect class="plot-area" x=")" + Num(frame.left) + "\" y=\"" + Num(frame.top) +
         "\" width=\"" + Num(frame.Width()) + "\" height=\"" + Num(frame.Height()) +
         "\" fill=\"#fff\"/>\n";
}

// Gridlines, axis lines, and the tick labels of both axes. `x` may have no ticks (bars).
void DrawAxes(std::string& out, const Frame& frame, const Axis& x, const Axis& y) {
  out += R"(<g class="grid" stroke-width="1">)";
  for (const Tick& tick : y.ticks) {
    const std::string py = Num(y.Pixel(tick.value));
    out += "\n<line x1=\"" + Num(frame.left) + "\" y1=\"" + py + "\" x2=\"" + Num(frame.right) +
           "\" y2=\"" + py + "\" stroke=\"" + (tick.minor ? "#f2f2f2" : "#e3e3e3") + "\"/>";
  }
  for (const Tick& tick : x.ticks) {
    const std::string px = Num(x.Pixel(tick.value));
    out += "\n<line x1=\"" + px + "\" y1=\"" + Num(frame.top) + "\" x2=\"" + px + "\" y2=\"" +
           Num(frame.bottom) + "\" stroke=\"" + (tick.minor ? "#f2f2f2" : "#e3e3e3") + "\"/>";
  }
  out += "</g>\n<g class=\"axes\" stroke=\"#555\" stroke-width=\"1\"><line x1=\"" +
         Num(frame.left) + "\" y1=\"" + Num(frame.bottom) + "\" x2=\"" + Num(frame.right) +
         "\" y2=\"" + Num(frame.bottom) + "\"/><line x1=\"" + Num(frame.left) + "\" y1=\"" +
         Num(frame.top) + "\" x2=\"" + Num(frame.left) + "\" y2=\"" + Num(frame.bottom) +
         "\"/></g>\n";
  out += R"(<g class="y-ticks" font-size="11" fill="#333" text-anchor="end">)";
  for (const Tick& tick : y.ticks) {
    out += "\n<text x=\"" + Num(frame.left - 6) + "\" y=\"" + Num(y.Pixel(tick.value) + 4) + "\">" +
           EscapeHtml(tick.label) + "</text>";
  }
  out += "</g>\n";
  if (x.ticks.empty()) return;
  out += R"(<g class="x-ticks" font-size="11" fill="#333" text-anchor="middle">)";
  for (const Tick& tick : x.ticks) {
    out += "\n<text x=\"" + Num(x.Pixel(tick.value)) + "\" y=\"" + Num(frame.bottom + 16) + "\">" +
           EscapeHtml(tick.label) + "</text>";
  }
  out += "</g>\n";
}

std::string Hex(uint64_t value, int digits) {
  std::string text(digits, '0');
  for (int i = digits - 1; i >= 0; --i, value >>= 4)
    text[i] = "0123456789abcdef"[value & 0xF];
  return text;
}

// The <svg> element around `body`, with its <title> and <desc>, and every kIdToken replaced by an
// id made from a hash (FNV-1a) of all of it.
std::string Finish(const Canvas& canvas, std::string_view title, std::string_view desc,
                   const std::string& body) {
  const std::string size = Num(canvas.width) + " " + Num(canvas.height);
  std::string svg = R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" + Num(canvas.width) +
                    "\" height=\"" + Num(canvas.height) + "\" viewBox=\"0 0 " + size +
                    "\" role=\"img\" aria-labelledby=\"" + std::string(kIdToken) + "-title " +
                    std::string(kIdToken) +
                    R"(-desc" font-family="system-ui, sans-serif" font-size="12">)" + "\n";
  svg += "<title id=\"" + std::string(kIdToken) + "-title\">" + EscapeHtml(title) + "</title>\n";
  svg += "<desc id=\"" + std::string(kIdToken) + "-desc\">" + EscapeHtml(desc) + "</desc>\n";
  svg += R"(<rect class="background" width=")" + Num(canvas.width) + "\" height=\"" +
         Num(canvas.height) + "\" fill=\"#fff\"/>\n";
  svg += body + "</svg>\n";
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : svg) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  const std::string id = "sg" + Hex(hash, 12);
  std::string out;
  size_t from = 0;
  for (size_t at = svg.find(kIdToken); at != std::string::npos; at = svg.find(kIdToken, from)) {
    out.append(svg, from, at - from);
    out += id;
    from = at + kIdToken.size();
  }
  out.append(svg, from);
  return out;
}

// The plottable points of a line chart, and what was left out.
struct Plotted {
  std::vector<std::vector<Point>> series;
  size_t count = 0;
  size_t non_finite = 0, non_positive_x = 0, non_positive_y = 0;
  Extent x, y;
};

Plotted Prepare(const Chart& chart) {
  Plotted plotted;
  for (const Series& series : chart.series) {
    std::vector<Point>& points = plotted.series.emplace_back();
    for (const Point& point : series.points) {
      if (!std::isfinite(point.x) || !std::isfinite(point.y)) {
        ++plotted.non_finite;
        continue;
      }
      const bool bad_x = chart.log_x && point.x <= 0, bad_y = chart.log_y && point.y <= 0;
      plotted.non_positive_x += bad_x;
      plotted.non_positive_y += bad_y;
      if (bad_x || bad_y) continue;
      points.push_back(point);
      plotted.x.Add(point.x);
      plotted.y.Add(point.y);
    }
    plotted.count += points.size();
  }
  // Ref lines, bands and markers widen the range, so a limit above all the data still shows.
  const auto fits = [](double value, bool log) {
    return std::isfinite(value) && (!log || value > 0);
  };
  for (const RefLine& line : chart.lines) {
    if (fits(line.value, line.horizontal ? chart.log_y : chart.log_x))
      (line.horizontal ? plotted.y : plotted.x).Add(line.value);
  }
  for (const Band& band : chart.bands) {
    for (double edge : {band.from, band.to}) {
      if (fits(edge, chart.log_x)) plotted.x.Add(edge);
    }
  }
  for (const Marker& marker : chart.markers) {
    if (fits(marker.at.x, chart.log_x) && fits(marker.at.y, chart.log_y)) {
      plotted.x.Add(marker.at.x);
      plotted.y.Add(marker.at.y);
    }
  }
  return plotted;
}

std::string Describe(const Chart& chart, const Plotted& plotted, size_t decorations_left_out) {
  std::string text = chart.description;
  if (text.empty()) {
    std::vector<std::string> names;
    for (const Series& series : chart.series)
      names.push_back(series.name);
    text = "Line chart" + (names.empty() ? "" : ": " + Join(names, "; ")) + ".";
  }
  const auto note = [&](std::string_view what, size_t count, std::string_view one,
                        std::string_view many) {
    if (count > 0)
      text += " " + std::string(what) + ": " + std::to_string(count) + " " +
              std::string(count == 1 ? one : many) + ".";
  };
  note("Left out as not finite", plotted.non_finite, "point", "points");
  note("Left out of the logarithmic x axis (x <= 0)", plotted.non_positive_x, "point", "points");
  note("Left out of the logarithmic y axis (y <= 0)", plotted.non_positive_y, "point", "points");
  note("Left out as outside the chart", decorations_left_out, "reference line, band or marker",
       "reference lines, bands or markers");
  if (plotted.count == 0) text += " No data to plot.";
  return text;
}

void DrawSeries(std::string& out, const Chart& chart, const Plotted& plotted, const Axis& x,
                const Axis& y, const Frame& frame) {
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& series = chart.series[i];
    const std::vector<Point>& points = plotted.series[i];
    if (points.empty()) continue;
    out += R"(<g class="series" fill="none" stroke=")" + Colour(i) +
           R"(" stroke-width="2" stroke-linejoin="round")";
    const std::string_view dash = kDashes[i % kDashes.size()];
    if (!dash.empty()) out += " stroke-dasharray=\"" + std::string(dash) + "\"";
    out += "><title>" + EscapeHtml(series.name) + "</title>";
    const std::string d = PathData(points, series.step, x, y, frame);
    if (!d.empty()) out += "<path d=\"" + d + "\"/>";
    // A lone point draws no line, so it gets a dot whatever was asked.
    if (series.dots || points.size() == 1) {
      out += "\n<g class=\"dots\" stroke=\"none\" fill=\"" + Colour(i) + "\">";
      for (const Point& point : points) {
        const long double px = x.Pixel(point.x), py = y.Pixel(point.y);
        if (frame.Contains(px, py))
          out += "<circle cx=\"" + Num(px) + "\" cy=\"" + Num(py) + "\" r=\"2.5\"/>";
      }
      out += "</g>";
    }
    out += "</g>\n";
  }
}

// Bands first (under everything), then ref lines and markers (over the series) by DrawOverlays.
// Each returns how many it left out as outside the chart.
size_t DrawBands(std::string& out, const Chart& chart, const Axis& x, const Frame& frame) {
  size_t left_out = 0;
  for (const Band& band : chart.bands) {
    const auto edge = [&](double value) -> long double {
      if (x.log && value <= 0) return frame.left;
      return std::clamp<long double>(x.Pixel(value), frame.left, frame.right);
    };
    const long double from = edge(std::min(band.from, band.to));
    const long double to = edge(std::max(band.from, band.to));
    if (!std::isfinite(band.from) || !std::isfinite(band.to) || to <= from) {
      ++left_out;
      continue;
    }
    out +=
        R"(<g class="band"><rect x=")" + Num(from) + "\" y=\"" + Num(frame.top) + "\" width=\"" +
        Num(to - from) + "\" height=\"" + Num(frame.Height()) +
        R"(" fill="#000" fill-opacity="0.07"/><text text-anchor="middle" font-size="11" fill="#333" x=")" +
        Num((from + to) / 2) + "\" y=\"" + Num(frame.top + 12) + "\"" + std::string(kHalo) + ">" +
        FitText(band.label, std::max<double>(to - from, 60), 11) + "</text></g>\n";
  }
  return left_out;
}

size_t DrawOverlays(std::string& out, const Chart& chart, const Axis& x, const Axis& y,
                    const Frame& frame) {
  size_t left_out = 0;
  for (const RefLine& line : chart.lines) {
    const Axis& axis = line.horizontal ? y : x;
    if (!axis.InRange(line.value)) {
      ++left_out;
      continue;
    }
    const std::string at = Num(axis.Pixel(line.value));
    out += R"(<g class="ref-line"><line stroke="#444" stroke-width="1.25" stroke-dasharray="6 4" )";
    if (line.horizontal) {
      out += "x1=\"" + Num(frame.left) + "\" y1=\"" + at + "\" x2=\"" + Num(frame.right) +
             "\" y2=\"" + at + "\"/><text text-anchor=\"end\" x=\"" + Num(frame.right - 4) +
             "\" y=\"" + Num(axis.Pixel(line.value) - 4) + "\"";
    } else {
      const bool near_right = axis.Pixel(line.value) > frame.right - 100;
      out += "x1=\"" + at + "\" y1=\"" + Num(frame.top) + "\" x2=\"" + at + "\" y2=\"" +
             Num(frame.bottom) + "\"/><text text-anchor=\"" + (near_right ? "end" : "start") +
             "\" x=\"" + Num(axis.Pixel(line.value) + (near_right ? -4 : 4)) + "\" y=\"" +
             Num(frame.top + 26) + "\"";
    }
    out += " font-size=\"11\" fill=\"#222\"" + std::string(kHalo) + ">" +
           FitText(line.label, frame.Width() - 8, 11) + "</text></g>\n";
  }
  for (const Marker& marker : chart.markers) {
    if (!x.InRange(marker.at.x) || !y.InRange(marker.at.y)) {
      ++left_out;
      continue;
    }
    const long double px = x.Pixel(marker.at.x), py = y.Pixel(marker.at.y);
    const bool near_right = px > frame.right - 100;
    out +=
        R"(<g class="marker"><circle cx=")" + Num(px) + "\" cy=\"" + Num(py) +
        R"(" r="6" fill="none" stroke="#000" stroke-width="1.5"/><text font-size="11" fill="#000" text-anchor=")" +
        (near_right ? "end" : "start") + "\" x=\"" + Num(px + (near_right ? -9 : 9)) + "\" y=\"" +
        Num(py - 9) + "\"" + std::string(kHalo) + ">" +
        FitText(marker.label, frame.Width() / 2, 11) + "</text></g>\n";
  }
  return left_out;
}

std::string DefaultTitle(std::string_view title, std::string_view fallback) {
  return std::string(title.empty() ? fallback : title);
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  while (!text.empty()) {
    const size_t length = Utf8SequenceLength(text);
    if (length == 0 || !AllowedInXml(text.substr(0, length))) {
      escaped += "\xEF\xBF\xBD";
      text.remove_prefix(std::max<size_t>(length, 1));
      continue;
    }
    switch (text[0]) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped.append(text.substr(0, length));
    }
    text.remove_prefix(length);
  }
  return escaped;
}

std::string LineChartSvg(const Chart& chart) {
  Canvas canvas = MakeCanvas(chart.width, chart.height);
  const Plotted plotted = Prepare(chart);
  std::string body;
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    legend.push_back({.name = chart.series[i].name,
                      .index = i,
                      .swatch = chart.series[i].dots ? Swatch::kLineAndDot : Swatch::kLine});
  }
  Frame frame =
      PlotFrame(canvas, DrawHeading(body, canvas, chart.title, legend), chart.x_label, 24);
  if (plotted.count == 0) {
    frame.left = 40;
    DrawNoData(body, frame);
    DrawAxisLabels(body, canvas, frame, chart.x_label, chart.y_label);
    return Finish(canvas, DefaultTitle(chart.title, "Line chart"), Describe(chart, plotted, 0),
                  body);
  }
  const Axis y = MakeAxis({.data = plotted.y,
                           .min = chart.y_min,
                           .max = chart.y_max,
                           .log = chart.log_y,
                           .zero_based = true,
                           .p_lo = frame.bottom,
                           .p_hi = frame.top,
                           .max_intervals = MaxIntervals(frame.Height(), 30)});
  frame.left = PlotLeft(y, chart.y_label);
  const Axis x = MakeAxis({.data = plotted.x,
                           .min = chart.x_min,
                           .max = chart.x_max,
                           .log = chart.log_x,
                           .p_lo = frame.left,
                           .p_hi = frame.right,
                           .max_intervals = MaxIntervals(frame.Width(), 70)});
  DrawPlotArea(body, frame);
  size_t left_out = DrawBands(body, chart, x, frame);
  DrawAxes(body, frame, x, y);
  DrawSeries(body, chart, plotted, x, y, frame);
  left_out += DrawOverlays(body, chart, x, y, frame);
  DrawAxisLabels(body, canvas, frame, chart.x_label, chart.y_label);
  return Finish(canvas, DefaultTitle(chart.title, "Line chart"), Describe(chart, plotted, left_out),
                body);
}

namespace {

std::string DescribeBars(const BarChart& chart, size_t values, size_t non_finite) {
  std::string text = chart.description;
  if (text.empty()) {
    text = "Bar chart" + (chart.series_names.empty() ? "" : ": " + Join(chart.series_names, "; ")) +
           ".";
  }
  if (non_finite > 0) {
    text += " Left out as not finite: " + std::to_string(non_finite) +
            (non_finite == 1 ? " value." : " values.");
  }
  if (values == 0) text += " No data to plot.";
  return text;
}

void DrawBars(std::string& out, const BarChart& chart, size_t series_count, const Axis& y,
              const Frame& frame) {
  const double slot = frame.Width() / static_cast<double>(chart.groups.size());
  const double bar = std::min(slot * 0.8 / static_cast<double>(series_count), 60.0);
  const long double zero = y.Pixel(std::clamp(0.0, y.t_lo, y.t_hi));
  for (size_t g = 0; g < chart.groups.size(); ++g) {
    const BarGroup& group = chart.groups[g];
    const double start = frame.left + slot * static_cast<double>(g) +
                         (slot - bar * static_cast<double>(series_count)) / 2;
    out += "<g class=\"bar-group\">";
    for (size_t s = 0; s < group.values.size(); ++s) {
      const double value = group.values[s];
      if (!std::isfinite(value)) continue;
      const long double top = std::clamp<long double>(y.Pixel(value), frame.top, frame.bottom);
      const std::string name = s < chart.series_names.size() ? chart.series_names[s] : "";
      out += "\n<rect x=\"" + Num(start + bar * static_cast<double>(s)) + "\" y=\"" +
             Num(std::min(top, zero)) + "\" width=\"" + Num(bar) + "\" height=\"" +
             Num(std::fabs(top - zero)) + "\" fill=\"" + BarFill(s) +
             R"(" stroke="#333" stroke-width="0.5"><title>)" +
             EscapeHtml((name.empty() ? "" : name + ", ") + group.label + ": " +
                        TickLabel(value, 1e-6)) +
             "</title></rect>";
    }
    out += "\n<text text-anchor=\"middle\" font-size=\"11\" fill=\"#333\" x=\"" +
           Num(frame.left + slot * (static_cast<double>(g) + 0.5)) + "\" y=\"" +
           Num(frame.bottom + 16) + "\">" + FitText(group.label, slot - 4, 11) + "</text></g>\n";
  }
}

}  // namespace

std::string BarChartSvg(const BarChart& chart) {
  Canvas canvas = MakeCanvas(chart.width, chart.height);
  size_t series_count = chart.series_names.size(), values = 0, non_finite = 0;
  Extent data;
  data.Add(0);
  for (const BarGroup& group : chart.groups) {
    series_count = std::max(series_count, group.values.size());
    for (double value : group.values) {
      if (!std::isfinite(value)) {
        ++non_finite;
        continue;
      }
      ++values;
      data.Add(std::clamp(value, -kMaxMagnitude, kMaxMagnitude));
    }
  }
  std::string body = PatternDefs(series_count);
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < chart.series_names.size(); ++i)
    legend.push_back({.name = chart.series_names[i], .index = i, .swatch = Swatch::kBox});
  Frame frame =
      PlotFrame(canvas, DrawHeading(body, canvas, chart.title, legend), chart.x_label, 16);
  const std::string title = DefaultTitle(chart.title, "Bar chart");
  if (values == 0) {
    frame.left = 40;
    DrawNoData(body, frame);
    DrawAxisLabels(body, canvas, frame, chart.x_label, chart.y_label);
    return Finish(canvas, title, DescribeBars(chart, values, non_finite), body);
  }
  const Axis y = MakeAxis({.data = data,
                           .zero_based = true,
                           .p_lo = frame.bottom,
                           .p_hi = frame.top,
                           .max_intervals = MaxIntervals(frame.Height(), 30)});
  frame.left = PlotLeft(y, chart.y_label);
  DrawPlotArea(body, frame);
  DrawAxes(body, frame, Axis{}, y);
  DrawBars(body, chart, series_count, y, frame);
  DrawAxisLabels(body, canvas, frame, chart.x_label, chart.y_label);
  return Finish(canvas, title, DescribeBars(chart, values, non_finite), body);
}

Series CdfSeries(std::string name, std::span<const double> values, size_t max_points) {
  std::vector<double> sorted;
  for (double value : values) {
    if (std::isfinite(value)) sorted.push_back(value);
  }
  std::sort(sorted.begin(), sorted.end());
  Series series{.name = std::move(name), .step = true};
  const size_t n = sorted.size(), kept = std::min(n, std::max<size_t>(max_points, 2));
  for (size_t j = 0; j < kept; ++j) {
    // Evenly spaced ranks; with kept == n this is every rank.
    const size_t rank = kept == 1 ? 0 : j * (n - 1) / (kept - 1);
    series.points.push_back({sorted[rank], static_cast<double>(rank + 1) / static_cast<double>(n)});
  }
  return series;
}

}  // namespace stagegate::report
