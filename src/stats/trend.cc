#include "stats/trend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "stats/summary.h"

namespace stagegate::stats {
namespace {

// Sum of k (k - 1) (2k + 5) over the groups of equal values: the tie term of Var(S).
double TieTerm(std::span<const double> values) {
  std::map<double, int64_t> counts;
  for (double v : values)
    ++counts[v];
  double sum = 0;
  for (const auto& [value, k] : counts)
    if (k > 1) sum += static_cast<double>(k * (k - 1) * (2 * k + 5));
  return sum;
}

}  // namespace

std::optional<Trend> TheilSen(std::span<const double> x, std::span<const double> y,
                              double confidence) {
  const size_t n = x.size();
  if (n != y.size() || n < 3 || !(confidence > 0 && confidence < 1)) return std::nullopt;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return std::nullopt;
  std::vector<double> slopes;
  slopes.reserve(n * (n - 1) / 2);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      if (x[j] == x[i]) continue;
      slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
    }
  if (slopes.empty()) return std::nullopt;
  std::sort(slopes.begin(), slopes.end());
  Trend trend;
  trend.points = n;
  trend.slope = PercentileOfSorted(slopes, 50);
  trend.intercept =
      *Median({y.begin(), y.end()}) - trend.slope * *Median({x.begin(), x.end()});  // n >= 3

  // Sen (1968), equation 2.6, with the ranks scipy takes: the interval's ends are the order
  // statistics (N -+ z sigma) / 2 of the N sorted slopes, rounded half to even as numpy does.
  const double nd = static_cast<double>(n);
  const double variance = (nd * (nd - 1) * (2 * nd + 5) - TieTerm(x) - TieTerm(y)) / 18;
  const double z = NormalQuantile((1 + confidence) / 2);
  const double sigma = std::sqrt(std::max(0.0, variance));
  const double count = static_cast<double>(slopes.size());
  const auto last = static_cast<double>(slopes.size() - 1);
  const double upper = std::min(std::nearbyint((count + z * sigma) / 2), last);
  const double lower = std::max(std::nearbyint((count - z * sigma) / 2) - 1, 0.0);
  trend.interval = {slopes[static_cast<size_t>(lower)], slopes[static_cast<size_t>(upper)]};
  return trend;
}

}  // namespace stagegate::stats
