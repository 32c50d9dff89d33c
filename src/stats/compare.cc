#include "stats/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "stats/index_draw.h"
#include "stats/summary.h"

namespace stagegate::stats {
namespace {

__extension__ using Uint128 = unsigned __int128;

bool AllFinite(std::span<const double> values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

// numpy.percentile's "linear" method on unsorted values, reordering them: the same arithmetic
// as PercentileOfSorted (rank (p / 100) (n - 1), interpolated from the nearer neighbour), which
// needs fully sorted values, but selecting the two ranks in O(n) instead of sorting.
double SelectPercentile(std::vector<double>& values, double p) {
  const size_t n = values.size();
  const double rank = (p / 100) * static_cast<double>(n - 1);
  const double below = std::floor(rank);
  const auto lo = values.begin() + static_cast<std::ptrdiff_t>(below);
  std::nth_element(values.begin(), lo, values.end());
  const double t = rank - below;
  if (t == 0) return *lo;
  const double a = *lo, b = *std::min_element(lo + 1, values.end());
  return t < 0.5 ? a + (b - a) * t : b - (b - a) * (1 - t);
}

double PercentileOf(std::span<const double> values, double p) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return PercentileOfSorted(sorted, p);
}

double PercentileOfResample(std::span<const double> values, double p, IndexDraw& draw,
                            std::vector<double>& buffer) {
  buffer.resize(values.size());
  for (double& value : buffer)
    value = values[draw.Below(values.size())];
  return SelectPercentile(buffer, p);
}

double Sum(std::span<const double> values) {
  double sum = 0;
  for (double value : values)
    sum += value;
  return sum;
}

// `magnitude` (> 0) to `digits` significant digits, the way a person writes it: 180, 12.3, 0.2.
std::string FormatSignificant(double magnitude, int digits) {
  const int decimals = digits - 1 - static_cast<int>(std::floor(std::log10(magnitude)));
  return FormatNumber(magnitude, std::clamp(decimals, 0, 12));
}

}  // namespace

std::optional<MannWhitney> MannWhitneyU(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty() || !AllFinite(a) || !AllFinite(b)) return std::nullopt;
  // Values paired with whether they come from a; ranked together by one sort.
  std::vector<std::pair<double, bool>> pooled;
  pooled.reserve(a.size() + b.size());
  for (double value : a)
    pooled.emplace_back(value, true);
  for (double value : b)
    pooled.emplace_back(value, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });

  // Ranks are whole or half numbers and the sums stay far below 2^53, so U is exact.
  double rank_sum_a = 0, tie_term = 0;
  for (size_t first = 0; first < pooled.size();) {
    size_t last = first + 1;
    while (last < pooled.size() && pooled[last].first == pooled[first].first)
      ++last;
    const double mid_rank = (static_cast<double>(first + 1) + static_cast<double>(last)) / 2;
    const double ties = static_cast<double>(last - first);
    tie_term += ties * ties * ties - ties;
    for (size_t i = first; i < last; ++i) {
      if (pooled[i].second) rank_sum_a += mid_rank;
    }
    first = last;
  }

  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  const double n = n1 + n2;
  const double u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) return std::nullopt;
  // R's continuity correction: half a step towards the mean, so |U - mean| of 0 stays 0.
  const double deviation = u - n1 * n2 / 2;
  const double corrected = deviation - std::copysign(std::min(0.5, std::abs(deviation)), deviation);
  const double z = corrected / std::sqrt(variance);
  return MannWhitney{
      .u = u,
      .z = z,
      .p_two_sided = std::min(1.0, std::erfc(std::abs(z) / std::numbers::sqrt2)),
      .effect_rank_biserial = 2 * u / (n1 * n2) - 1,
  };
}

std::optional<DiffInterval> BootstrapPercentileDiff(std::span<const double> a,
                                                    std::span<const double> b, double percentile,
                                                    int resamples, uint64_t seed,
                                                    double confidence) {
  if (a.empty() || b.empty() || resamples < 100) return std::nullopt;
  if (!(percentile >= 0 && percentile <= 100) || !(confidence > 0 && confidence < 1))
    return std::nullopt;
  if (!AllFinite(a) || !AllFinite(b)) return std::nullopt;

  IndexDraw draw(seed);
  std::vector<double> buffer, differences;
  buffer.reserve(std::max(a.size(), b.size()));
  differences.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double from_a = PercentileOfResample(a, percentile, draw, buffer);
    differences.push_back(from_a - PercentileOfResample(b, percentile, draw, buffer));
  }
  std::sort(differences.begin(), differences.end());
  return DiffInterval{
      .estimate = PercentileOf(a, percentile) - PercentileOf(b, percentile),
      .low = PercentileOfSorted(differences, 100 * (1 - confidence) / 2),
      .high = PercentileOfSorted(differences, 100 * (1 + confidence) / 2),
  };
}

std::optional<DiffInterval> BootstrapMeanDiff(std::span<const double> a, std::span<const double> b,
                                              int resamples, uint64_t seed, double confidence) {
  if (a.empty() || b.empty() || resamples < 100 || !(confidence > 0 && confidence < 1))
    return std::nullopt;
  if (!AllFinite(a) || !AllFinite(b)) return std::nullopt;
  IndexDraw draw(seed);
  const auto resampled_mean = [&draw](std::span<const double> values) {
    double sum = 0;
    for (size_t i = 0; i < values.size(); ++i)
      sum += values[draw.Below(values.size())];
    return sum / static_cast<double>(values.size());
  };
  std::vector<double> differences;
  differences.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double from_a = resampled_mean(a);
    differences.push_back(from_a - resampled_mean(b));
  }
  std::sort(differences.begin(), differences.end());
  return DiffInterval{
      .estimate = Sum(a) / static_cast<double>(a.size()) - Sum(b) / static_cast<double>(b.size()),
      .low = PercentileOfSorted(differences, 100 * (1 - confidence) / 2),
      .high = PercentileOfSorted(differences, 100 * (1 + confidence) / 2),
  };
}

namespace {

// The number of ways to choose k of n, or nullopt past `cap`.
std::optional<uint64_t> Choose(size_t n, size_t k, uint64_t cap) {
  k = std::min(k, n - k);
  Uint128 ways = 1;
  for (size_t i = 1; i <= k; ++i) {
    ways = ways * (n - k + i) / i;  // exact: a product of i consecutive integers divides by i!
    if (ways > cap) return std::nullopt;
  }
  return static_cast<uint64_t>(ways);
}

// The percentile difference of one assignment: `in_a` marks the pooled values given to a.
double AssignedDifference(std::span<const double> pooled, const std::vector<bool>& in_a,
                          double percentile, std::vector<double>& a, std::vector<double>& b) {
  a.clear();
  b.clear();
  for (size_t i = 0; i < pooled.size(); ++i)
    (in_a[i] ? a : b).push_back(pooled[i]);
  return SelectPercentile(a, percentile) - SelectPercentile(b, percentile);
}

}  // namespace

std::optional<PermutationResult> PermutationTestPercentile(std::span<const double> a,
                                                           std::span<const double> b,
                                                           double percentile, int permutations,
                                                           uint64_t seed) {
  if (a.empty() || b.empty() || permutations < 1) return std::nullopt;
  if (!(percentile >= 0 && percentile <= 100)) return std::nullopt;
  if (!AllFinite(a) || !AllFinite(b)) return std::nullopt;
  std::vector<double> pooled(a.begin(), a.end());
  pooled.insert(pooled.end(), b.begin(), b.end());
  const double observed = PercentileOf(a, percentile) - PercentileOf(b, percentile);
  const double gamma = std::abs(observed) * 100 * std::numeric_limits<double>::epsilon();
  int64_t at_least = 0, at_most = 0, tried = 0;
  std::vector<double> group_a, group_b;
  const auto count = [&](double difference) {
    at_least += difference >= observed - gamma;
    at_most += difference <= observed + gamma;
    ++tried;
  };
  const std::optional<uint64_t> all =
      Choose(pooled.size(), a.size(), static_cast<uint64_t>(permutations));
  if (all) {
    // Every assignment: the k-subsets of the pooled indices, in lexicographic order.
    std::vector<size_t> chosen(a.size());
    for (size_t i = 0; i < chosen.size(); ++i)
      chosen[i] = i;
    std::vector<bool> in_a(pooled.size());
    while (true) {
      std::fill(in_a.begin(), in_a.end(), false);
      for (size_t index : chosen)
        in_a[index] = true;
      count(AssignedDifference(pooled, in_a, percentile, group_a, group_b));
      size_t i = chosen.size();
      while (i > 0 && chosen[i - 1] == pooled.size() - chosen.size() + i - 1)
        --i;
      if (i == 0) break;
      ++chosen[i - 1];
      for (size_t j = i; j < chosen.size(); ++j)
        chosen[j] = chosen[j - 1] + 1;
    }
  } else {
    // Random assignments: a partial Fisher-Yates shuffle puts a's share first.
    IndexDraw draw(seed);
    std::vector<double> shuffled = pooled;
    for (int i = 0; i < permutations; ++i) {
      for (size_t j = 0; j < a.size(); ++j)
        std::swap(shuffled[j], shuffled[j + draw.Below(shuffled.size() - j)]);
      group_a.assign(shuffled.begin(), shuffled.begin() + static_cast<std::ptrdiff_t>(a.size()));
      group_b.assign(shuffled.begin() + static_cast<std::ptrdiff_t>(a.size()), shuffled.end());
      count(SelectPercentile(group_a, percentile) - SelectPercentile(group_b, percentile));
    }
  }
  const double adjustment = all ? 0 : 1;
  const double total = static_cast<double>(tried) + adjustment;
  const double p_greater = (static_cast<double>(at_least) + adjustment) / total;
  const double p_less = (static_cast<double>(at_most) + adjustment) / total;
  return PermutationResult{.difference = observed,
                           .p_two_sided = std::min(1.0, 2 * std::min(p_greater, p_less)),
                           .permutations = static_cast<int>(tried),
                           .exact = all.has_value()};
}

std::optional<PermutationResult> PermutationTestMeans(std::span<const double> a,
                                                      std::span<const double> b, int permutations,
                                                      uint64_t seed) {
  if (a.empty() || b.empty() || permutations < 1) return std::nullopt;
  if (!AllFinite(a) || !AllFinite(b)) return std::nullopt;

  // Each permutation draws the smaller group as a random subset of the pooled values (a partial
  // Fisher-Yates shuffle: O(smaller size)), and gets the larger group's sum by subtraction, whose
  // rounding error divided by the larger size stays near one ulp of the values.
  const bool a_is_smaller = a.size() <= b.size();
  const std::span<const double> smaller = a_is_smaller ? a : b;
  std::vector<double> pooled(smaller.begin(), smaller.end());
  pooled.insert(pooled.end(), (a_is_smaller ? b : a).begin(), (a_is_smaller ? b : a).end());
  const size_t k = smaller.size();
  const double n_small = static_cast<double>(k);
  const double n_large = static_cast<double>(pooled.size() - k);
  const double total = Sum(pooled);
  const auto difference_of = [&](double small_sum) {
    const double small_minus_large = small_sum / n_small - (total - small_sum) / n_large;
    return a_is_smaller ? small_minus_large : -small_minus_large;
  };
  const double observed = std::abs(difference_of(Sum(smaller)));
  double scale = 1;
  for (double value : pooled)
    scale = std::max(scale, std::abs(value));
  const double threshold = observed - 1e-12 * scale;

  IndexDraw draw(seed);
  int at_least_as_extreme = 0;
  for (int i = 0; i < permutations; ++i) {
    double small_sum = 0;
    for (size_t j = 0; j < k; ++j) {
      std::swap(pooled[j], pooled[j + draw.Below(pooled.size() - j)]);
      small_sum += pooled[j];
    }
    if (std::abs(difference_of(small_sum)) >= threshold) ++at_least_as_extreme;
  }
  return PermutationResult{
      .difference = Sum(a) / static_cast<double>(a.size()) - Sum(b) / static_cast<double>(b.size()),
      .p_two_sided = (1.0 + at_least_as_extreme) / (1.0 + permutations),
      .permutations = permutations,
  };
}

std::string DescribeDifference(const std::string& metric, double difference,
                               const std::string& unit, bool higher_is_worse,
                               std::optional<double> p_value, double alpha) {
  if (!std::isfinite(difference)) return metric + " cannot be compared";
  if (difference == 0) return metric + " is unchanged";
  std::string line = metric + " is " + FormatSignificant(std::abs(difference), 3);
  if (!unit.empty()) line += (unit == "%" ? "" : " ") + unit;
  line += (difference > 0) == higher_is_worse ? " worse" : " better";
  if (!p_value || std::isnan(*p_value)) return line;
  line += *p_value < alpha ? ", significant" : ", not significant";
  return line + " (" + DescribePValue(*p_value) + ")";
}

std::string DescribePValue(double p) {
  return p < 0.001 ? "p < 0.001" : "p = " + FormatSignificant(p, 2);
}

}  // namespace stagegate::stats
