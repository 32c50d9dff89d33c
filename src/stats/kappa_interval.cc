#include "stats/kappa_interval.h"

#include <algorithm>
#include <vector>

#include "stats/agreement.h"
#include "stats/index_draw.h"
#include "stats/summary.h"

namespace stagegate::stats {

std::optional<KappaEstimate> BootstrapWeightedKappa(std::span<const int64_t> a,
                                                    std::span<const int64_t> b,
                                                    std::span<const int64_t> levels, int resamples,
                                                    uint64_t seed, double confidence) {
  if (resamples < 100 || !(confidence > 0 && confidence < 1)) return std::nullopt;
  const std::optional<double> kappa = WeightedKappaQuadratic(a, b, levels);
  if (!kappa) return std::nullopt;  // also a.size() != b.size(), an unknown level, ...
  KappaEstimate out{.kappa = *kappa, .resamples = resamples};
  IndexDraw draw(seed);
  const size_t n = a.size();
  std::vector<int64_t> drawn_a(n), drawn_b(n);
  std::vector<double> kappas;
  kappas.reserve(static_cast<size_t>(resamples));
  for (int round = 0; round < resamples; ++round) {
    for (size_t i = 0; i < n; ++i) {
      const size_t item = draw.Below(n);
      drawn_a[i] = a[item];
      drawn_b[i] = b[item];
    }
    if (std::optional<double> k = WeightedKappaQuadratic(drawn_a, drawn_b, levels))
      kappas.push_back(*k);
    else
      ++out.undefined;
  }
  if (2 * out.undefined > resamples) return out;
  std::sort(kappas.begin(), kappas.end());
  out.ci = Interval{.low = PercentileOfSorted(kappas, 100 * (1 - confidence) / 2),
                    .high = PercentileOfSorted(kappas, 100 * (1 + confidence) / 2)};
  return out;
}

}  // namespace stagegate::stats
