#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

/// The axes of the report's SVG charts (report/svg.cc): ranges, steps of 1, 2 or 5 times a power
/// of ten, ticks and their labels, linear or log. Internal to the chart writer.
namespace stagegate::report::svg_axis {

constexpr int kMaxIntervals = 8;
constexpr double kEpsilon = 1e-9;
// Data beyond this is clamped for ranges, so that hi - lo stays finite.
constexpr double kMaxMagnitude = 1e300;

struct Extent {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double value) {
    lo = std::min(lo, value);
    hi = std::max(hi, value);
  }
  bool Empty() const { return lo > hi; }
};

struct Tick {
  double value = 0;
  std::string label;
  bool minor = false;  // 2 and 5 within a decade, drawn lighter
};

struct Axis {
  bool log = false;
  double t_lo = 0, t_hi = 1;  // the range, in log10 units on a log axis
  double p_lo = 0, p_hi = 1;  // the pixels of t_lo and t_hi
  std::vector<Tick> ticks;

  double T(double value) const { return log ? std::log10(value) : value; }
  bool Plottable(double value) const { return std::isfinite(value) && (!log || value > 0); }
  // Long double: a far outlier on a fixed range maps beyond double's range before it is clipped.
  long double Pixel(double value) const {
    return p_lo + (static_cast<long double>(T(value)) - t_lo) / (t_hi - t_lo) * (p_hi - p_lo);
  }
  bool InRange(double value) const {
    if (!Plottable(value)) return false;
    const double margin = kEpsilon * (t_hi - t_lo);
    return T(value) >= t_lo - margin && T(value) <= t_hi + margin;
  }
};

struct AxisSpec {
  Extent data;  // not empty
  std::optional<double> min, max;
  bool log = false;
  bool zero_based = false;  // a linear axis over values all >= 0 starts at 0
  double p_lo = 0, p_hi = 1;
  int max_intervals = kMaxIntervals;
};

/// How many intervals fit `pixels` at about `pixels_per_interval` each (2 to kMaxIntervals).
int MaxIntervals(double pixels, double pixels_per_interval);

/// A tick label for a multiple of `step`: as a person writes it, with the decimals the step needs;
/// very large and very small values in e-notation ("2e-7", "1.5e12").
std::string TickLabel(double value, double step);

/// The axis over the spec's data (or its fixed ends), with its ticks.
Axis MakeAxis(const AxisSpec& spec);

}  // namespace stagegate::report::svg_axis
