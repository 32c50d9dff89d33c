#include "stats/summary.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>

#include <nlohmann/json.hpp>

namespace stagegate::stats {
namespace {

// The JSON key of each entry of kPercentiles.
constexpr std::array<const char*, kPercentiles.size()> kPercentileKeys = {
    "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"};

// Neumaier's compensated sum: a plain running sum loses the low digits of each term once the
// sum is large, and latencies are summed by the hundred thousand.
class CompensatedSum {
 public:
  void Add(double term) {
    const double next = sum_ + term;
    compensation_ += std::abs(sum_) >= std::abs(term) ? (sum_ - next) + term : (term - next) + sum_;
    sum_ = next;
  }
  double Total() const { return sum_ + compensation_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

}  // namespace

double Summary::Percentile(double p) const {
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    if (kPercentiles[i] == p) return percentiles[i];
  }
  assert(false && "Summary::Percentile: p is not one of kPercentiles");
  return std::numeric_limits<double>::quiet_NaN();
}

nlohmann::json Summary::ToJson() const {
  nlohmann::json json = {{"count", count}};
  if (count == 0) return json;
  json["min"] = min;
  json["max"] = max;
  json["mean"] = mean;
  json["std"] = std;
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    json[kPercentileKeys[i]] = percentiles[i];
  }
  return json;
}

double PercentileOfSorted(std::span<const double> sorted, double p) {
  assert(!sorted.empty());
  assert(p >= 0 && p <= 100);
  assert(std::is_sorted(sorted.begin(), sorted.end()));
  // numpy computes the rank as (p / 100) * (n - 1), in that order; so do we, to agree with it.
  const double rank = (p / 100) * static_cast<double>(sorted.size() - 1);
  const double below = std::floor(rank);
  const size_t lo = static_cast<size_t>(below);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double t = rank - below;
  const double a = sorted[lo];
  const double b = sorted[hi];
  // numpy's _lerp: interpolating from the nearer neighbour keeps the result within [a, b] and
  // rounds as numpy does.
  return t < 0.5 ? a + (b - a) * t : b - (b - a) * (1 - t);
}

Summary Summarize(std::vector<double> values) {
  assert(std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }));
  Summary summary;
  if (values.empty()) return summary;
  std::sort(values.begin(), values.end());

  const double n = static_cast<double>(values.size());
  summary.count = static_cast<int64_t>(values.size());
  summary.min = values.front();
  summary.max = values.back();
  CompensatedSum sum;
  for (double value : values) {
    sum.Add(value);
  }
  // Rounding can push the mean of constant data just outside [min, max]; it cannot be.
  summary.mean = std::clamp(sum.Total() / n, summary.min, summary.max);

  // The second pass: deviations from the accurate mean, rather than E[x^2] - E[x]^2, which
  // cancels away the spread of values far from zero.
  CompensatedSum squares;
  for (double value : values) {
    squares.Add((value - summary.mean) * (value - summary.mean));
  }
  summary.std = std::sqrt(squares.Total() / n);

  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    summary.percentiles[i] = PercentileOfSorted(values, kPercentiles[i]);
  }
  return summary;
}

}  // namespace stagegate::stats
