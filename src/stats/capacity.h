#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace stagegate::stats {

/// The verdict of one level of a load sweep.
struct LevelOutcome {
  double level = 0;     // offered rate (req/s) or concurrency
  bool passed = false;  // every threshold held at this level
};

/// Where acceptable responsiveness ends in a sweep. A plain value, built by FindCapacity.
struct CapacityFinding {
  std::optional<double> holds_up_to;  // the highest passing level below the first failing level
                                      // (levels compared by value, not run order)
  std::optional<double> fails_at;     // the lowest failing level
  bool monotonic = true;  // false when some level above fails_at passed (the finding is then
                          // "first failure at Y", noisy); also when fails_at itself was tried
                          // twice and passed once, which is the same noise
};

/// `levels` in any order (a sweep adds bisection levels at the end). Empty: both nullopt.
/// Levels must be finite (a programmer error otherwise: asserted).
CapacityFinding FindCapacity(std::span<const LevelOutcome> levels);

/// The level to try between a passing level `pass` and a failing level `fail` (pass < fail): the
/// midpoint. With `integer` (concurrency), rounded to the nearest integer, halves up (4 and 7:
/// 6), and nullopt when no integer lies strictly between (4 and 5). Rates are rounded to 3
/// significant decimals of the step fail - pass (4 and 6: 5; 4 and 4.5: 4.25; 1 and 1.1: 1.05),
/// so a bisection never asks for 4.333333 req/s. nullopt when fail <= pass, when either is not
/// finite, or when the two are so close that no double lies between them.
std::optional<double> BisectLevel(double pass, double fail, bool integer);

/// One line for people: "thresholds hold up to 8 req/s and fail at 10 req/s", "thresholds hold at
/// every level tried (up to 16 req/s)", "thresholds fail at every level tried (from 2 req/s)",
/// "no levels". A non-monotonic finding names the highest level that passed above the failure:
/// "thresholds hold up to 8 req/s and first fail at 10 req/s, but hold at 14 req/s (not
/// monotonic)", or "thresholds fail at 2 req/s, the lowest level tried, but hold at 4 req/s (not
/// monotonic)". `unit` is "req/s" or "concurrent" ("up to 8 concurrent"); `levels` are the
/// ones `finding` was built from. Numbers without trailing zeros (8, 7.5, 0.25).
std::string DescribeCapacity(const CapacityFinding& finding, std::span<const LevelOutcome> levels,
                             std::string_view unit);

}  // namespace stagegate::stats
