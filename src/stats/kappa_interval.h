#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "stats/intervals.h"

namespace stagegate::stats {

/// Quadratic-weighted kappa between two raters with a percentile-bootstrap interval.
struct KappaEstimate {
  double kappa;                // on every item, as WeightedKappaQuadratic
  std::optional<Interval> ci;  // none when fewer than half the rounds gave a kappa
  int resamples = 0;           // the rounds drawn
  int undefined = 0;           // rounds whose kappa was undefined (left out of the interval)
};

/// WeightedKappaQuadratic(a, b, levels) with a percentile-bootstrap interval: each of `resamples`
/// rounds draws a.size() items with replacement, keeping each item's pair (a[i], b[i]) together,
/// and computes kappa on them; the interval is the (1 -+ confidence) / 2 percentiles (linear
/// interpolation, numpy's default) of the rounds' kappas. A round whose kappa is undefined (every
/// drawn pair on one single level) is left out and counted in `undefined`; past half of the
/// rounds, there is no interval. Pure, and deterministic for a given seed on any platform
/// (IndexDraw). nullopt when kappa on every item is undefined (WeightedKappaQuadratic's cases),
/// resamples < 100, or a confidence outside (0, 1).
std::optional<KappaEstimate> BootstrapWeightedKappa(std::span<const int64_t> a,
                                                    std::span<const int64_t> b,
                                                    std::span<const int64_t> levels, int resamples,
                                                    uint64_t seed, double confidence = 0.95);

}  // namespace stagegate::stats
