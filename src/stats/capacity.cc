#include "stats/capacity.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "base/strings.h"

namespace stagegate::stats {
namespace {

// Levels are offered rates or concurrencies; six decimals show any bisection of a sensible sweep.
std::string Level(double level, std::string_view unit) {
  return FormatNumber(level, 6) + " " + std::string(unit);
}

// The midpoint rounded to the nearest multiple of 10^exponent.
double RoundTo(double value, int exponent) {
  // Dividing by an exact power of ten (rather than multiplying by an inexact 0.001) gives the
  // double nearest the decimal: 4.25, not 4.2500000000000009.
  if (exponent < 0) {
    const double scale = std::pow(10.0, -exponent);
    return std::round(value * scale) / scale;
  }
  const double quantum = std::pow(10.0, exponent);
  return std::round(value / quantum) * quantum;
}

}  // namespace

CapacityFinding FindCapacity(std::span<const LevelOutcome> levels) {
  assert(std::all_of(levels.begin(), levels.end(),
                     [](const LevelOutcome& outcome) { return std::isfinite(outcome.level); }));
  CapacityFinding finding;
  for (const LevelOutcome& outcome : levels) {
    if (!outcome.passed && (!finding.fails_at || outcome.level < *finding.fails_at)) {
      finding.fails_at = outcome.level;
    }
  }
  for (const LevelOutcome& outcome : levels) {
    if (!outcome.passed) continue;
    if (finding.fails_at && outcome.level >= *finding.fails_at) {
      finding.monotonic = false;
    } else if (!finding.holds_up_to || outcome.level > *finding.holds_up_to) {
      finding.holds_up_to = outcome.level;
    }
  }
  if (finding.fails_at) {
    finding.inconclusive = true;
    for (const LevelOutcome& outcome : levels)
      if (outcome.level == *finding.fails_at && !outcome.passed && !outcome.inconclusive) {
        finding.inconclusive = false;
        if (finding.failed.empty()) finding.failed = outcome.failed;
      }
  }
  if (finding.holds_up_to)
    for (const LevelOutcome& outcome : levels)
      if (outcome.passed && outcome.level == *finding.holds_up_to) {
        finding.sustained_rate = outcome.sustained_rate;
        finding.goodput = outcome.goodput;
        finding.output_tokens_per_s = outcome.output_tokens_per_s;
        finding.window = outcome.window;
      }
  return finding;
}

std::optional<double> BisectLevel(double pass, double fail, bool integer) {
  if (!std::isfinite(pass) || !std::isfinite(fail) || fail <= pass) return std::nullopt;
  const double middle = pass + (fail - pass) / 2;
  if (integer) {
    const double lowest = std::floor(pass) + 1, highest = std::ceil(fail) - 1;
    if (lowest > highest) return std::nullopt;
    return std::clamp(std::round(middle), lowest, highest);
  }
  // Three significant digits of the step: the result moves from the midpoint by at most half of
  // a hundredth of the step, so it stays well inside (pass, fail).
  const int exponent = static_cast<int>(std::floor(std::log10(fail - pass))) - 2;
  const double level = RoundTo(middle, exponent);
  if (level <= pass || level >= fail) return std::nullopt;
  return level;
}

std::string DescribeCapacity(const CapacityFinding& finding, std::span<const LevelOutcome> levels,
                             std::string_view unit) {
  const std::string sustained =
      finding.sustained_rate ? "sustained " + FormatNumber(*finding.sustained_rate, 1) + " req/s; "
                             : "";
  if (!finding.fails_at) {
    if (!finding.holds_up_to) return "no levels";
    return sustained + "thresholds hold at every level tried (up to " +
           Level(*finding.holds_up_to, unit) + ")";
  }
  const std::string fails = Level(*finding.fails_at, unit);
  if (finding.inconclusive) {
    if (!finding.holds_up_to)
      return "inconclusive: " + fails + ", the lowest level tried, was too short to tell";
    return "inconclusive: " + sustained + "thresholds hold up to " +
           Level(*finding.holds_up_to, unit) + " and " + fails + " was too short to tell";
  }
  const std::string why = finding.failed.empty() ? "" : " (" + finding.failed + ")";
  std::optional<double> passed_above;
  for (const LevelOutcome& outcome : levels) {
    if (outcome.passed && outcome.level >= *finding.fails_at &&
        (!passed_above || outcome.level > *passed_above)) {
      passed_above = outcome.level;
    }
  }
  if (finding.monotonic || !passed_above) {
    if (!finding.holds_up_to)
      return "thresholds fail at every level tried (from " + fails +
             (finding.failed.empty() ? "" : ": " + finding.failed) + ")";
    return sustained + "thresholds hold up to " + Level(*finding.holds_up_to, unit) +
           " and fail at " + fails + why;
  }
  const std::string noise = ", but hold at " + Level(*passed_above, unit) + " (not monotonic)";
  if (!finding.holds_up_to) {
    return "thresholds fail at " + fails + why + ", the lowest level tried" + noise;
  }
  return sustained + "thresholds hold up to " + Level(*finding.holds_up_to, unit) +
         " and first fail at " + fails + why + noise;
}

std::string DescribeCapacityRates(const CapacityFinding& finding, std::string_view unit) {
  if (!finding.holds_up_to) return "";
  std::string line = "at " + Level(*finding.holds_up_to, unit) + ": ";
  const std::optional<RateWindow>& w = finding.window;
  if (w) {
    line += FormatNumber(w->Rate(static_cast<double>(w->answered)), 2) + " answered req/s";
    if (const int64_t denials = w->completed - w->answered; denials > 0)
      line +=
          " and " + FormatNumber(w->Rate(static_cast<double>(denials)), 2) + " expected denials/s";
    line += ", ";
  }
  line += "goodput " + FormatNumber(finding.goodput, 2) + " req/s, " +
          FormatNumber(finding.output_tokens_per_s, 0) + " output tokens/s";
  if (w) {
    const std::string seconds = FormatNumber(w->Seconds(), 2) + " s";
    line += w->arrivals
                ? " (the " + std::to_string(w->arrived) + " requests that arrived in its first " +
                      seconds + " and ended by its last arrival)"
                : " (its " + std::to_string(w->arrived) + " requests over " + seconds +
                      ", first send to last end)";
  }
  return line;
}

}  // namespace stagegate::stats
