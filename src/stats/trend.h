#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "stats/intervals.h"

namespace stagegate::stats {

/// The Theil–Sen estimate of a trend: the median of the slopes between every pair of points
/// with distinct x, and Sen's (1968) confidence interval for it from the variance of Kendall's S
/// (ties in x and in y corrected). The same figures as scipy.stats.theilslopes(y, x, alpha).
struct Trend {
  double slope = 0;
  double intercept = 0;  // median(y) - slope * median(x)
  Interval interval{0, 0};
  size_t points = 0;
};

/// `x` and `y` of equal length, finite. nullopt for fewer than 3 points, fewer than 2 distinct
/// x values, mismatched lengths, a value that is not finite, or a confidence outside (0, 1).
std::optional<Trend> TheilSen(std::span<const double> x, std::span<const double> y,
                              double confidence = 0.95);

}  // namespace stagegate::stats
