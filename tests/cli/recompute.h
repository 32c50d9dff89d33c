#pragma once

// Figures recomputed in the tests from requests.jsonl, by the textbook formulas and without
// stagegate's statistics code, so that what a command reports is checked against a second
// measurement of the same requests.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace stagegate::testing {

/// numpy.percentile's default ("linear"): rank p/100 * (n - 1), interpolated.
inline double LinearPercentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double rank = p / 100 * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (rank - static_cast<double>(below));
}

inline double Mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

/// numpy.std's default (ddof 0).
inline double PopulationStd(const std::vector<double>& values) {
  const double mean = Mean(values);
  double sum = 0;
  for (double v : values)
    sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size()));
}

}  // namespace stagegate::testing
