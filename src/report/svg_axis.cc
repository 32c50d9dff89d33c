#include "report/svg_axis.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

#include "base/strings.h"

namespace stagegate::report::svg_axis {
namespace {

// The smallest step of 1, 2 or 5 times a power of ten that covers lo..hi (extended to multiples
// of the step on the sides not fixed) in at most `max_intervals`; lo and hi become the extended
// range. Returns the step.
double NiceStep(double& lo, double& hi, bool fix_lo, bool fix_hi, int max_intervals) {
  constexpr std::array<double, 3> kMultipliers = {1, 2, 5};
  const double base = std::pow(10.0, std::floor(std::log10((hi - lo) / max_intervals)));
  for (int i = 0;; ++i) {
    const double step = base * kMultipliers[i % 3] * std::pow(10.0, i / 3);
    const double first = fix_lo ? lo : std::floor(lo / step + kEpsilon) * step;
    const double last = fix_hi ? hi : std::ceil(hi / step - kEpsilon) * step;
    if ((last - first) / step <= max_intervals + kEpsilon || i > 60) {
      lo = first;
      hi = last;
      return step;
    }
  }
}

std::vector<Tick> LinearTicks(double lo, double hi, double step) {
  std::vector<Tick> ticks;
  const double first = std::ceil(lo / step - kEpsilon);
  for (int i = 0; i <= kMaxIntervals + 2; ++i) {
    double value = (first + i) * step;
    if (value > hi + kEpsilon * step) break;
    if (std::fabs(value) < kEpsilon * step) value = 0;
    ticks.push_back({.value = value, .label = TickLabel(value, step)});
  }
  return ticks;
}

// Decades, every `every` of them, plus 2 and 5 where a decade has room for three labels; too
// short a range for two of those gets linear ticks instead.
std::vector<Tick> LogTicks(const Axis& axis, int max_intervals) {
  const double decades = axis.t_hi - axis.t_lo;
  const double every = std::max(1.0, std::ceil(decades / max_intervals - kEpsilon));
  const bool minors = every == 1 && std::fabs(axis.p_hi - axis.p_lo) / decades >= 100;
  std::vector<Tick> ticks;
  for (double e = std::floor(axis.t_lo); e <= axis.t_hi + kEpsilon; e += 1) {
    const double value = std::pow(10.0, e);
    if (e >= axis.t_lo - kEpsilon && std::fmod(e, every) == 0)
      ticks.push_back({.value = value, .label = TickLabel(value, value)});
    for (double m : {2.0, 5.0}) {
      const double t = e + std::log10(m);
      if (!minors || t < axis.t_lo - kEpsilon || t > axis.t_hi + kEpsilon) continue;
      ticks.push_back({.value = m * value, .label = TickLabel(m * value, value), .minor = true});
    }
  }
  if (ticks.size() >= 2) return ticks;
  double lo = std::pow(10.0, axis.t_lo), hi = std::pow(10.0, axis.t_hi);
  const double step = NiceStep(lo, hi, true, true, max_intervals);
  ticks = LinearTicks(lo, hi, step);
  std::erase_if(ticks, [](const Tick& tick) { return tick.value <= 0; });
  return ticks;
}

}  // namespace

int MaxIntervals(double pixels, double pixels_per_interval) {
  return std::clamp(static_cast<int>(pixels / pixels_per_interval), 2, kMaxIntervals);
}

std::string TickLabel(double value, double step) {
  if (value == 0 || !std::isfinite(value)) return "0";  // not finite: a guard, never expected
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + kEpsilon)));
  const double magnitude = std::fabs(value);
  if (magnitude < 1e12 && magnitude >= 1e-4 && decimals <= 9) return FormatNumber(value, decimals);
  const int digits = std::clamp(static_cast<int>(std::floor(std::log10(magnitude) + kEpsilon) -
                                                 std::floor(std::log10(step) + kEpsilon)) +
                                    1,
                                1, 17);
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*e", digits - 1, value);
  std::string text = buffer;
  const size_t e = text.find('e');
  std::string mantissa = text.substr(0, e);
  if (mantissa.find('.') != std::string::npos) {
    while (mantissa.back() == '0')
      mantissa.pop_back();
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  return mantissa + "e" + std::to_string(std::strtol(text.c_str() + e + 1, nullptr, 10));
}

Axis MakeAxis(const AxisSpec& spec) {
  Axis axis{.log = spec.log, .p_lo = spec.p_lo, .p_hi = spec.p_hi};
  // Within these bounds hi - lo stays finite and, unless 0, a normal number (as does a tenth of
  // it), and so do 10^t and 1/10^t on a log axis.
  const auto limit = [&](double value) {
    if (spec.log) return std::clamp(value, 1 / kMaxMagnitude, kMaxMagnitude);
    return std::fabs(value) < 1e-200 ? 0 : std::clamp(value, -kMaxMagnitude, kMaxMagnitude);
  };
  const auto usable = [&](const std::optional<double>& value) {
    return value && axis.Plottable(*value) && limit(*value) == *value;
  };
  bool fix_lo = usable(spec.min), fix_hi = usable(spec.max);
  if (fix_lo && fix_hi && !(*spec.min < *spec.max)) fix_lo = fix_hi = false;
  const Extent data = spec.data.Empty() ? Extent{1, 10} : spec.data;
  double lo = axis.T(fix_lo ? *spec.min : limit(data.lo));
  double hi = axis.T(fix_hi ? *spec.max : limit(data.hi));
  if (spec.zero_based && !spec.log && !fix_lo && data.lo >= 0) lo = 0;
  if (!(hi > lo)) {  // one value, or data on the wrong side of the one end given
    const auto pad = [&](double at) { return spec.log || at == 0 ? 1 : std::fabs(at) / 2; };
    if (fix_lo) {
      hi = lo + pad(lo);
    } else if (fix_hi) {
      lo = hi - pad(hi);
    } else if (lo == 0 && spec.zero_based) {
      hi = 1;
    } else {
      const double at = lo;
      lo = at - pad(at);
      hi = at + pad(at);
    }
  }
  if (spec.log) {
    axis.t_lo = fix_lo ? lo : std::floor(lo + kEpsilon);
    axis.t_hi = fix_hi ? hi : std::ceil(hi - kEpsilon);
    axis.ticks = LogTicks(axis, spec.max_intervals);
  } else {
    const double step = NiceStep(lo, hi, fix_lo, fix_hi, spec.max_intervals);
    axis.t_lo = lo;
    axis.t_hi = hi;
    axis.ticks = LinearTicks(lo, hi, step);
  }
  return axis;
}

}  // namespace stagegate::report::svg_axis
