#include "stats/agreement.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

namespace stagegate::stats {
namespace {

// The position of `rating` in the ascending `levels`, or nullopt if it is not a level.
std::optional<size_t> LevelIndex(std::span<const int64_t> levels, int64_t rating) {
  const auto it = std::lower_bound(levels.begin(), levels.end(), rating);
  if (it == levels.end() || *it != rating) return std::nullopt;
  return static_cast<size_t>(it - levels.begin());
}

// Krippendorff's coincidences over the distinct pairable values, which are kept ascending so
// that the ordinal metric can sum the marginals between two values.
struct Coincidences {
  std::vector<int64_t> values;         // distinct pairable values, ascending
  std::vector<std::vector<double>> o;  // o[c][k], c and k indices into `values`
  std::vector<double> marginals;       // n_c = sum over k of o[c][k]
  double total = 0;                    // n
};

Coincidences CountCoincidences(const UnitRatings& units) {
  // Each unit as value -> count, keeping only the pairable ones.
  std::vector<std::map<int64_t, int64_t>> pairable;
  std::map<int64_t, size_t> index_of;
  for (const auto& unit : units) {
    std::map<int64_t, int64_t> counts;
    for (const auto& rating : unit) {
      if (rating) ++counts[*rating];
    }
    int64_t m = 0;
    for (const auto& [value, count] : counts)
      m += count;
    if (m < 2) continue;
    for (const auto& [value, count] : counts)
      index_of.emplace(value, 0);
    pairable.push_back(std::move(counts));
  }

  Coincidences result;
  for (auto& [value, index] : index_of) {
    index = result.values.size();
    result.values.push_back(value);
  }
  const size_t v = result.values.size();
  result.o.assign(v, std::vector<double>(v, 0));
  result.marginals.assign(v, 0);
  for (const auto& counts : pairable) {
    int64_t m = 0;
    for (const auto& [value, count] : counts)
      m += count;
    // Each of the m values pairs with the m - 1 others of its unit, each pair weighing 1/(m-1).
    const double weight = 1.0 / static_cast<double>(m - 1);
    for (const auto& [c_value, c_count] : counts) {
      const size_t c = index_of.at(c_value);
      for (const auto& [k_value, k_count] : counts) {
        const size_t k = index_of.at(k_value);
        const int64_t pairs = c == k ? c_count * (c_count - 1) : c_count * k_count;
        result.o[c][k] += static_cast<double>(pairs) * weight;
      }
      result.marginals[c] += static_cast<double>(c_count);
      result.total += static_cast<double>(c_count);
    }
  }
  return result;
}

// delta^2 between the c-th and k-th distinct values (c < k) under `metric`.
double SquaredDifference(const Coincidences& coincidences, size_t c, size_t k, AlphaMetric metric) {
  switch (metric) {
    case AlphaMetric::kNominal:
      return 1;
    case AlphaMetric::kOrdinal: {
      double between = 0;
      for (size_t g = c; g <= k; ++g)
        between += coincidences.marginals[g];
      const double d = between - (coincidences.marginals[c] + coincidences.marginals[k]) / 2;
      return d * d;
    }
    case AlphaMetric::kInterval: {
      const double d =
          static_cast<double>(coincidences.values[k]) - static_cast<double>(coincidences.values[c]);
      return d * d;
    }
  }
  return 0;
}

}  // namespace

std::optional<double> WeightedKappaQuadratic(std::span<const int64_t> a, std::span<const int64_t> b,
                                             std::span<const int64_t> levels) {
  if (a.size() != b.size() || a.size() < 2 || levels.size() < 2) return std::nullopt;
  if (std::adjacent_find(levels.begin(), levels.end(), std::greater_equal<>()) != levels.end()) {
    return std::nullopt;
  }
  const size_t k = levels.size();
  std::vector<double> rows(k, 0), columns(k, 0);
  // The common factor 1/(k-1)^2 of the weights cancels in the ratio, so it is left out.
  double observed = 0;
  for (size_t item = 0; item < a.size(); ++item) {
    const auto i = LevelIndex(levels, a[item]);
    const auto j = LevelIndex(levels, b[item]);
    if (!i || !j) return std::nullopt;
    ++rows[*i];
    ++columns[*j];
    const double d = static_cast<double>(*i) - static_cast<double>(*j);
    observed += d * d;
  }
  double expected = 0;
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < k; ++j) {
      const double d = static_cast<double>(i) - static_cast<double>(j);
      expected += rows[i] * columns[j] * d * d;
    }
  }
  expected /= static_cast<double>(a.size());
  if (expected == 0) return std::nullopt;
  return 1 - observed / expected;
}

std::optional<double> KrippendorffAlpha(const UnitRatings& units, AlphaMetric metric) {
  const Coincidences coincidences = CountCoincidences(units);
  if (coincidences.total == 0) return std::nullopt;
  // Both sums run over c < k: delta^2 is symmetric and zero on the diagonal.
  double observed = 0;
  double expected = 0;
  const size_t v = coincidences.values.size();
  for (size_t c = 0; c < v; ++c) {
    for (size_t k = c + 1; k < v; ++k) {
      const double delta = SquaredDifference(coincidences, c, k, metric);
      observed += coincidences.o[c][k] * delta;
      expected += coincidences.marginals[c] * coincidences.marginals[k] * delta;
    }
  }
  if (expected == 0) return std::nullopt;
  return 1 - (coincidences.total - 1) * observed / expected;
}

std::vector<Disagreement> WideDisagreements(const UnitRatings& units, int64_t more_than) {
  std::vector<Disagreement> wide;
  for (size_t u = 0; u < units.size(); ++u) {
    std::optional<Disagreement> span;
    int count = 0;
    for (const auto& rating : units[u]) {
      if (!rating) continue;
      ++count;
      if (!span) span = Disagreement{.unit = u, .min = *rating, .max = *rating};
      span->min = std::min(span->min, *rating);
      span->max = std::max(span->max, *rating);
    }
    if (count < 2) continue;
    // max - min can overflow int64_t, but never uint64_t (two's complement wrap-around).
    const uint64_t range = static_cast<uint64_t>(span->max) - static_cast<uint64_t>(span->min);
    if (more_than < 0 || range > static_cast<uint64_t>(more_than)) wide.push_back(*span);
  }
  return wide;
}

}  // namespace stagegate::stats
