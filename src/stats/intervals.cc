#include "stats/intervals.h"

#include <math.h>  // lgamma_r

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

namespace stagegate::stats {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Acklam's rational approximation of the normal quantile, for 0 < p <= 0.5; relative error
// below 1.15e-9 before refinement.
double AcklamQuantile(double p) {
  constexpr std::array<double, 6> a = {-3.969683028665376e+01, 2.209460984245205e+02,
                                       -2.759285104469687e+02, 1.383577518672690e+02,
                                       -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr std::array<double, 5> b = {-5.447609879822406e+01, 1.615858368580409e+02,
                                       -1.556989798598866e+02, 6.680131188771972e+01,
                                       -1.328068155288572e+01};
  constexpr std::array<double, 6> c = {-7.784894002430293e-03, -3.223964580411365e-01,
                                       -2.400758277161838e+00, -2.549732539343734e+00,
                                       4.374664141464968e+00,  2.938163982698783e+00};
  constexpr std::array<double, 4> d = {7.784695709041462e-03, 3.224671290700398e-01,
                                       2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLowRegion = 0.02425;
  if (p < kLowRegion) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

// The continued fraction of the regularized incomplete beta function (Numerical Recipes'
// betacf, evaluated by the modified Lentz method). Converges fast for x < (a + 1) / (a + b + 2).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-16;
  constexpr int kMaxIterations = 100000;  // enough for a, b up to ~1e9
  const auto not_tiny = [](double v) { return std::abs(v) < kTiny ? kTiny : v; };
  double c = 1;
  double d = 1 / not_tiny(1 - (a + b) * x / (a + 1));
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
    d = 1 / not_tiny(1 + aa * d);
    c = not_tiny(1 + aa / c);
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
    d = 1 / not_tiny(1 + aa * d);
    c = not_tiny(1 + aa / c);
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < kEpsilon) break;
  }
  return h;
}

// log|Gamma(x)|. glibc's lgamma also writes the global `signgam`, a data race when two threads
// compute statistics at once; lgamma_r returns the sign instead.
double LogGamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}

// log(Gamma(a + b) / Gamma(a)). For large a the two lgamma values are huge and nearly equal, so
// their difference would lose most of its digits; Stirling's series lets the large terms cancel
// on paper instead (the omitted term is below 1e-17 for a >= 100).
double LogGammaRatio(double a, double b) {
  if (a < 100) return LogGamma(a + b) - LogGamma(a);
  const auto series = [](double x) {
    const double x2 = x * x;
    return 1 / (12 * x) - 1 / (360 * x * x2) + 1 / (1260 * x * x2 * x2);
  };
  return (a - 0.5) * std::log1p(b / a) + b * std::log(a + b) - b + series(a + b) - series(a);
}

// A point of the unit interval as x and y = 1 - x, each with its logarithm, all computed by the
// caller without cancellation: with a parameter of 1e6, an error of 1e-16 in log(x) would cost
// 1e-10 in the result.
struct BetaPoint {
  double x, y, log_x, log_y;
};

// I_x(a, b), the regularized incomplete beta function.
double RegularizedIncompleteBeta(double a, double b, const BetaPoint& point) {
  // x^a or y^b may be far below the smallest double while the other factors are not, so the
  // ends are recognised by the logarithms.
  if (point.log_x == -kInfinity) return 0;
  if (point.log_y == -kInfinity) return 1;
  const double log_inverse_beta =
      a >= b ? LogGammaRatio(a, b) - LogGamma(b) : LogGammaRatio(b, a) - LogGamma(a);
  const double front = std::exp(log_inverse_beta + a * point.log_x + b * point.log_y);
  if (point.x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, point.x) / a;
  return 1 - front * BetaContinuedFraction(b, a, point.y) / b;
}

// t^2 / df, with its logarithm and log(1 + t^2 / df) that stay finite for every finite t (the
// ratio itself overflows for t above ~1e154 * sqrt(df)).
struct TRatio {
  double ratio;
  double log_ratio;
  double log1p_ratio;
};

TRatio RatioOf(double t, double df) {
  const double s = t / std::sqrt(df);
  const double log_ratio = 2 * std::log(t) - std::log(df);  // finite even where s is not
  // Above e^700 the 1 in 1 + t^2 / df is far below the rounding of the ratio.
  if (log_ratio > 700) return {s * s, log_ratio, log_ratio};
  return {s * s, log_ratio, std::log1p(s * s)};
}

// P(T > t) for t >= 0: I_x(df/2, 1/2) / 2 with x = df / (df + t^2) = 1 / (1 + t^2 / df).
double StudentTUpperTail(double t, double df) {
  const TRatio r = RatioOf(t, df);
  const bool huge = std::isinf(r.ratio);
  const BetaPoint point = {.x = huge ? std::exp(-r.log1p_ratio) : 1 / (1 + r.ratio),
                           .y = huge ? 1 : r.ratio / (1 + r.ratio),
                           .log_x = -r.log1p_ratio,
                           .log_y = r.log_ratio - r.log1p_ratio};
  return RegularizedIncompleteBeta(df / 2, 0.5, point) / 2;
}

double StudentTDensity(double t, double df) {
  return std::exp(LogGammaRatio(df / 2, 0.5) - 0.5 * std::log(df * std::numbers::pi) -
                  (df + 1) / 2 * RatioOf(t, df).log1p_ratio);
}

// The t quantile for large df from the normal quantile z, by the asymptotic expansion of
// Abramowitz & Stegun 26.7.5. For df >= 1e5 the omitted terms are below 1e-13 relative even at
// z = 37 (p = 1e-300), while the continued fraction converges ever more slowly as df grows.
double StudentTQuantileForLargeDf(double z, double df) {
  const double z2 = z * z;
  const double g1 = (z2 + 1) * z / 4;
  const double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  const double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  const double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

bool IsProbability(double p) {
  return p > 0 && p < 1;
}

}  // namespace

double NormalQuantile(double p) {
  if (std::isnan(p)) return kNaN;
  if (p <= 0) return -kInfinity;
  if (p >= 1) return kInfinity;
  // Work in the lower half, where the normal CDF (via erfc) keeps its relative precision;
  // 1 - p is exact for p >= 0.5.
  if (p > 0.5) return -NormalQuantile(1 - p);
  double x = AcklamQuantile(p);
  // One step of Halley's method on Phi(x) - p.
  const double e = 0.5 * std::erfc(-x / std::numbers::sqrt2) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  if (std::isfinite(u)) x -= u / (1 + x * u / 2);
  return x;
}

double StudentTQuantile(double p, double df) {
  if (!IsProbability(p) || !(df > 0)) return kNaN;
  // Solve P(T > t) = tail for t >= 0 and give it the sign of p - 0.5; 1 - p is exact here.
  const double tail = p < 0.5 ? p : 1 - p;
  const double sign = p < 0.5 ? -1 : 1;
  if (tail == 0.5) return 0;
  if (df >= 1e5) return StudentTQuantileForLargeDf(NormalQuantile(p), df);
  // Bracket the root, then Newton's method, falling back to bisection whenever a step would
  // leave the bracket (the t tail is too heavy for plain Newton from far away).
  double low = 0;
  double high = 1;
  while (StudentTUpperTail(high, df) > tail) {
    low = high;
    high *= 2;
    if (!std::isfinite(high)) return sign * kInfinity;
  }
  double t = (low + high) / 2;
  for (int i = 0; i < 2000; ++i) {
    const double excess = StudentTUpperTail(t, df) - tail;
    if (excess == 0) break;
    (excess > 0 ? low : high) = t;
    double next = t + excess / StudentTDensity(t, df);
    if (!(next > low && next < high)) next = (low + high) / 2;
    const bool converged = std::abs(next - t) <= 1e-15 * t;
    t = next;
    if (converged || high - low <= 1e-16 * high) break;
  }
  return sign * t;
}

std::optional<Interval> MeanConfidenceInterval(std::span<const double> values, double confidence) {
  if (values.size() < 2 || !IsProbability(confidence)) return std::nullopt;
  if (!std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); })) {
    return std::nullopt;
  }
  const auto [min, max] = std::minmax_element(values.begin(), values.end());
  // Equal values have no spread; rounding in the mean must not invent one.
  if (*min == *max) return Interval{*min, *min};
  const double n = static_cast<double>(values.size());
  double sum = 0;
  for (double v : values)
    sum += v;
  double mean = sum / n;
  // A second pass corrects the rounding of the first sum (the residuals are small).
  double residual = 0;
  for (double v : values)
    residual += v - mean;
  mean = std::clamp(mean + residual / n, *min, *max);
  double squares = 0;
  for (double v : values)
    squares += (v - mean) * (v - mean);
  const double standard_error = std::sqrt(squares / (n - 1) / n);
  const double half = StudentTQuantile((1 + confidence) / 2, n - 1) * standard_error;
  return Interval{mean - half, mean + half};
}

std::optional<Interval> WilsonInterval(int64_t successes, int64_t trials, double confidence) {
  if (trials <= 0 || successes < 0 || successes > trials || !IsProbability(confidence)) {
    return std::nullopt;
  }
  const double z = NormalQuantile((1 + confidence) / 2);
  const double n = static_cast<double>(trials);
  const double share = static_cast<double>(successes) / n;
  const double z2 = z * z;
  const double denominator = 1 + z2 / n;
  const double center = (share + z2 / (2 * n)) / denominator;
  const double half = z * std::sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / denominator;
  // At 0 or all successes the bound is exactly 0 or 1; rounding must not move it off.
  const double low = successes == 0 ? 0 : std::max(0.0, center - half);
  const double high = successes == trials ? 1 : std::min(1.0, center + half);
  return Interval{low, high};
}

}  // namespace stagegate::stats
