#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace stagegate::stats {

/// A two-sided confidence interval, low <= high.
struct Interval {
  double low;
  double high;
};

/// The p-quantile of the standard normal distribution (R's qnorm(p)), to about 1e-15 relative:
/// Acklam's rational approximation refined with one Halley step. -infinity for p <= 0, +infinity
/// for p >= 1, NaN for NaN.
double NormalQuantile(double p);

/// The p-quantile of Student's t with `df` degrees of freedom (R's qt(p, df)); df need not be a
/// whole number. Inverts the t tail, computed with the regularized incomplete beta function
/// (continued fraction); for df >= 1e5, where that converges too slowly, an asymptotic expansion
/// in the normal quantile. Relative error below 1e-12 for any df and p (checked against 40-digit
/// mpmath). NaN unless df > 0 and 0 < p < 1; +-infinity where the quantile is beyond the range of
/// double (only for df well below 1).
double StudentTQuantile(double p, double df);

/// The Student t confidence interval for the mean of `values` (R's t.test(values,
/// conf.level = confidence)$conf.int): mean -+ qt((1 + confidence) / 2, n - 1) * s / sqrt(n),
/// with s the sample standard deviation (n - 1 in the denominator). When all values are equal,
/// low == high == that value. nullopt for fewer than 2 values, a value that is not finite, or a
/// confidence outside (0, 1).
std::optional<Interval> MeanConfidenceInterval(std::span<const double> values,
                                               double confidence = 0.95);

/// The Wilson score interval for a proportion of `successes` in `trials` (R's prop.test(successes,
/// trials, conf.level = confidence, correct = FALSE)$conf.int), with z = NormalQuantile((1 +
/// confidence) / 2); always within [0, 1]. nullopt when trials <= 0, successes is outside [0,
/// trials], or confidence is outside (0, 1).
std::optional<Interval> WilsonInterval(int64_t successes, int64_t trials, double confidence = 0.95);

}  // namespace stagegate::stats
