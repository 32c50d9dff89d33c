#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace stagegate::stats {

/// The percentiles every summary carries, in this order.
inline constexpr std::array<double, 9> kPercentiles = {1, 5, 10, 25, 50, 75, 90, 95, 99};

/// Whether `p` is one of kPercentiles: the only percentiles a threshold or SLO can be checked at.
/// Inline, so that the loaders of outside input (stagegate_input, which the fuzz build links
/// alone) need nothing of the statistics library.
inline bool IsCarriedPercentile(double p) {
  for (double carried : kPercentiles)
    if (carried == p) return true;
  return false;
}

/// "1, 5, 10, 25, 50, 75, 90, 95 or 99": for messages that refuse another percentile.
inline constexpr const char* kCarriedPercentilesText = "1, 5, 10, 25, 50, 75, 90, 95 or 99";

/// The distribution of one metric (e.g. TTFT in ms) over a set of requests. A plain value: no I/O,
/// no references into the data it was built from. Build it with Summarize.
struct Summary {
  int64_t count = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double std = 0;  // population standard deviation (ddof=0), as numpy.std's default
  std::array<double, kPercentiles.size()> percentiles{};  // matching kPercentiles

  /// The value at percentile `p`, which must be one of kPercentiles (anything else is a programmer
  /// error: asserted, and NaN in a release build). 0 for an empty summary.
  double Percentile(double p) const;

  /// {"count":..,"min":..,"max":..,"mean":..,"std":..,"p1":..,"p5":..,..,"p99":..}; an empty
  /// summary is {"count":0}. The values are finite, as JSON requires (see Summarize).
  nlohmann::json ToJson() const;
};

/// numpy.percentile's default method ("linear"): for sorted values v[0..n-1], rank = p/100*(n-1),
/// interpolated between v[floor(rank)] and v[ceil(rank)]; p=0 is the minimum, p=100 the maximum.
/// `sorted` must be non-empty and sorted ascending, and p in [0, 100] (programmer errors:
/// asserted). Uses numpy's own arithmetic (including its interpolation from the nearer neighbour),
/// so results agree with numpy to within rounding, and bit for bit on a plain x86-64 build.
double PercentileOfSorted(std::span<const double> sorted, double p);

/// The median of `values`, in any order (the mean of the two middle ones for an even count, as
/// PercentileOfSorted's 50th); nullopt for none.
std::optional<double> Median(std::vector<double> values);

/// Summarises `values`, given in any order; reorders them in place (selecting the ranks the
/// percentiles need, in O(n) rather than a sort), so pass by std::move when the caller no longer
/// needs them. Every value must be finite: NaN or infinity is a programmer error
/// (asserted), since neither sorts nor serialises. No values: count 0 and everything else 0.
/// Numerically stable: the mean is a compensated sum, kept within [min, max], and the std a second
/// pass over deviations from it, so values far from zero (e.g. epoch timestamps) keep their
/// spread and constant values have exactly that mean and std 0. Within rounding of numpy's.
Summary Summarize(std::vector<double> values);

}  // namespace stagegate::stats
