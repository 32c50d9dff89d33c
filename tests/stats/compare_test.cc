#include "stats/compare.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace stagegate::stats {
namespace {

// The expected values in this file come from independent implementations, each with the exact
// command that printed it beside it, so anyone can re-run them:
// - SciPy 1.10.1 and NumPy 1.24.2 (Debian python3-scipy, python3-numpy), run by /usr/bin/python3
//   after `import numpy as np; from scipy.stats import mannwhitneyu, norm, bootstrap,
//   permutation_test`, printed with repr.
// - R 4.2.2 (Debian r-base-core), printed with print(x, digits = 17).
// The z of a Mann-Whitney test is not returned by either package; it is recovered from SciPy's p
// as np.sign(U - n1 * n2 / 2) * norm.isf(p / 2).

Approx Near(double value) {
  return Approx(value).epsilon(1e-12);
}

Approx Within1e6(double value) {
  return Approx(value).epsilon(1e-6);
}

// Ties within and across the samples, unequal sizes, a clearly larger.
const std::vector<double> kClearA = {12, 15, 15, 18, 20, 20, 20, 23, 25, 30};
const std::vector<double> kClearB = {8, 10, 12, 12, 13, 15, 16, 17};
// Ties, unequal sizes, no real difference.
const std::vector<double> kNullA = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
const std::vector<double> kNullB = {2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9};

TEST_CASE("MannWhitneyU matches SciPy and R on a clear difference with ties", "[compare]") {
  // mannwhitneyu(a, b, alternative='two-sided', method='asymptotic', use_continuity=True)
  //   -> statistic 70.0, pvalue 0.008351320056782073; z 2.637526092221144
  // R: wilcox.test(a, b, exact=FALSE, correct=TRUE) -> W 70, p.value 0.0083513200567820745
  const MannWhitney result = MannWhitneyU(kClearA, kClearB).value();
  CHECK(result.u == 70);
  CHECK(result.p_two_sided == Within1e6(0.008351320056782073));
  CHECK(result.p_two_sided == Within1e6(0.0083513200567820745));
  CHECK(result.z == Within1e6(2.637526092221144));
  CHECK(result.effect_rank_biserial == Near(2.0 * 70 / (10 * 8) - 1));
}

TEST_CASE("MannWhitneyU is antisymmetric in its samples", "[compare]") {
  // mannwhitneyu(b, a, alternative='two-sided', method='asymptotic')
  //   -> statistic 10.0, pvalue 0.008351320056782073
  const MannWhitney result = MannWhitneyU(kClearB, kClearA).value();
  CHECK(result.u == 10);
  CHECK(result.p_two_sided == Within1e6(0.008351320056782073));
  CHECK(result.z == Within1e6(-2.637526092221144));
  CHECK(result.effect_rank_biserial == Near(2.0 * 10 / (10 * 8) - 1));
}

TEST_CASE("MannWhitneyU matches SciPy and R when there is no difference", "[compare]") {
  // mannwhitneyu(a, b, alternative='two-sided', method='asymptotic')
  //   -> statistic 60.0, pvalue 0.5200007496800839; z -0.6433442497822526
  // R: wilcox.test(a, b, exact=FALSE, correct=TRUE) -> W 60, p.value 0.52000074968008403
  const MannWhitney result = MannWhitneyU(kNullA, kNullB).value();
  CHECK(result.u == 60);
  CHECK(result.p_two_sided == Within1e6(0.5200007496800839));
  CHECK(result.p_two_sided == Within1e6(0.52000074968008403));
  CHECK(result.z == Within1e6(-0.6433442497822526));
  CHECK(result.effect_rank_biserial == Near(2.0 * 60 / (11 * 13) - 1));
}

TEST_CASE("MannWhitneyU matches SciPy without ties and on many ties", "[compare]") {
  // mannwhitneyu([1.1, 2.2, 3.3, 4.4], [0.5, 2.5, 3.5, 5.5, 6.5], alternative='two-sided',
  //   method='asymptotic') -> statistic 7.0, pvalue 0.5402913746074199; z -0.6123724356957945
  const std::vector<double> a = {1.1, 2.2, 3.3, 4.4};
  const std::vector<double> b = {0.5, 2.5, 3.5, 5.5, 6.5};
  const MannWhitney no_ties = MannWhitneyU(a, b).value();
  CHECK(no_ties.u == 7);
  CHECK(no_ties.p_two_sided == Within1e6(0.5402913746074199));
  CHECK(no_ties.z == Within1e6(-0.6123724356957945));

  // Small integers, so nearly every value is tied:
  // mannwhitneyu([(i * 37) % 11 for i in range(60)], [(i * 53) % 13 for i in range(45)],
  //   alternative='two-sided', method='asymptotic') -> statistic 1227.0,
  //   pvalue 0.42601118043345887; z -0.796035880930157
  std::vector<double> x, y;
  for (int i = 0; i < 60; ++i)
    x.push_back((i * 37) % 11);
  for (int i = 0; i < 45; ++i)
    y.push_back((i * 53) % 13);
  const MannWhitney tied = MannWhitneyU(x, y).value();
  CHECK(tied.u == 1227);
  CHECK(tied.p_two_sided == Within1e6(0.42601118043345887));
  CHECK(tied.z == Within1e6(-0.796035880930157));
}

TEST_CASE("MannWhitneyU handles 100,000 values a side", "[compare]") {
  constexpr int n = 100000;
  std::vector<double> a(n), b_shifted(n), b_offset(n);
  for (int i = 0; i < n; ++i) {
    a[i] = i;
    b_shifted[i] = i + 0.5;
    b_offset[i] = i + 1000;
  }
  // a_i = i beats b_j = j + 0.5 for the i values j < i: U = n (n - 1) / 2, no ties.
  // x = np.arange(100000.0); mannwhitneyu(x, x + 0.5, alternative='two-sided',
  //   method='asymptotic') -> statistic 4999950000.0, pvalue 0.9969098527363054
  const MannWhitney close = MannWhitneyU(a, b_shifted).value();
  CHECK(close.u == 4999950000.0);
  CHECK(close.p_two_sided == Within1e6(0.9969098527363054));
  // 99,000 ties of two: U = (n - 1000)^2 / 2.
  // mannwhitneyu(x, x + 1000, alternative='two-sided', method='asymptotic')
  //   -> statistic 4900500000.0, pvalue 1.2859048932256085e-14
  const MannWhitney apart = MannWhitneyU(a, b_offset).value();
  CHECK(apart.u == 4900500000.0);
  CHECK(apart.p_two_sided == Within1e6(1.2859048932256085e-14));
}

TEST_CASE("MannWhitneyU is undefined without two samples that vary", "[compare]") {
  const std::vector<double> empty;
  const std::vector<double> fives = {5, 5, 5};
  const std::vector<double> more_fives = {5, 5};
  const std::vector<double> with_nan = {1, std::numeric_limits<double>::quiet_NaN()};
  CHECK_FALSE(MannWhitneyU(empty, kClearB).has_value());
  CHECK_FALSE(MannWhitneyU(kClearA, empty).has_value());
  CHECK_FALSE(MannWhitneyU(fives, more_fives).has_value());
  CHECK_FALSE(MannWhitneyU(with_nan, kClearB).has_value());
  // One differing value is enough spread.
  const std::vector<double> six = {6};
  CHECK(MannWhitneyU(fives, six).has_value());
}

// Latencies in ms of a run (a) and its baseline (b).
const std::vector<double> kRunMs = {212, 198, 305, 187, 240, 221, 199, 410, 233, 256,
                                    190, 205, 228, 271, 215, 330, 202, 245, 219, 260};
const std::vector<double> kBaselineMs = {180, 175, 220, 168, 199, 185, 172, 290, 190, 210, 171,
                                         183, 195, 230, 178, 260, 176, 201, 188, 215, 182, 169};

TEST_CASE("BootstrapPercentileDiff estimates the difference of numpy percentiles", "[compare]") {
  // np.percentile(a, p) - np.percentile(b, p) for each p:
  //   50 -> 38.0, 90 -> 78.50000000000003, 95 -> 75.50000000000006,
  //   99 -> 111.09999999999991, 0 -> 19.0, 100 -> 120.0, 33.3 -> 32.995000000000005
  const std::vector<std::pair<double, double>> expected = {{50, 38.0},
                                                           {90, 78.50000000000003},
                                                           {95, 75.50000000000006},
                                                           {99, 111.09999999999991},
                                                           {0, 19.0},
                                                           {100, 120.0},
                                                           {33.3, 32.995000000000005}};
  for (const auto& [percentile, difference] : expected) {
    INFO("percentile " << percentile);
    const DiffInterval result =
        BootstrapPercentileDiff(kRunMs, kBaselineMs, percentile, 200, 7).value();
    CHECK(result.estimate == Near(difference));
    CHECK(result.low <= result.estimate);
    CHECK(result.estimate <= result.high);
  }
}

TEST_CASE("BootstrapPercentileDiff's interval matches SciPy's percentile bootstrap", "[compare]") {
  // The reference is SciPy with 400,000 resamples, so its own Monte Carlo error is small:
  // bootstrap((a, b), lambda x, y, axis: np.percentile(x, P, axis=axis) - np.percentile(y, P,
  //   axis=axis), vectorized=True, method='percentile', n_resamples=400000, random_state=1,
  //   confidence_level=0.95).confidence_interval
  //   P = 50 -> (16.0, 65.0); P = 95 -> (-16.049999999999955, 190.25)
  // With 20,000 resamples, 30 SciPy runs (random_state=100..129) gave lows in [15.5, 16.5] and
  // highs in [64.5, 65.5] for P = 50, lows in [-17.3, -16.0] and highs in [190.25, 190.5] for
  // P = 95; the tolerances are about twice the largest of those deviations.
  const DiffInterval median = BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 20000, 11).value();
  CHECK(median.low == Approx(16.0).margin(1.5));
  CHECK(median.high == Approx(65.0).margin(1.5));
  const DiffInterval p95 = BootstrapPercentileDiff(kRunMs, kBaselineMs, 95, 20000, 11).value();
  CHECK(p95.low == Approx(-16.05).margin(3));
  CHECK(p95.high == Approx(190.25).margin(1));
}

// n values spread evenly over [100, 150), in a scrambled order (golden-ratio steps).
std::vector<double> EvenlySpread(int n) {
  std::vector<double> values;
  for (int i = 0; i < n; ++i) {
    const double step = i * 0.6180339887498949;
    values.push_back(100 + 50 * (step - std::floor(step)));
  }
  return values;
}

std::vector<double> Plus(std::vector<double> values, double offset) {
  for (double& value : values)
    value += offset;
  return values;
}

TEST_CASE("BootstrapPercentileDiff finds a constant shift", "[compare]") {
  // Every value of a is 10 more than one of b: the median differs by exactly 10, and the spread
  // of a median of 200 values over [100, 150) is about 2, so 0 is far outside a 95% interval.
  const std::vector<double> b = EvenlySpread(200);
  const DiffInterval result = BootstrapPercentileDiff(Plus(b, 10), b, 50, 2000, 3).value();
  CHECK(result.estimate == Near(10));
  CHECK(result.low < 10);
  CHECK(result.high > 10);
  CHECK(result.low > 0);
  CHECK(result.high < 20);
}

TEST_CASE("BootstrapPercentileDiff of constant samples is their difference", "[compare]") {
  const std::vector<double> fives = {5, 5, 5};
  const std::vector<double> twos = {2, 2};
  const DiffInterval result = BootstrapPercentileDiff(fives, twos, 90, 100, 1).value();
  CHECK(result.estimate == 3);
  CHECK(result.low == 3);
  CHECK(result.high == 3);
}

TEST_CASE("BootstrapPercentileDiff narrows as the samples grow", "[compare]") {
  const DiffInterval small =
      BootstrapPercentileDiff(Plus(EvenlySpread(50), 5), EvenlySpread(50), 90, 1000, 5).value();
  const DiffInterval large =
      BootstrapPercentileDiff(Plus(EvenlySpread(5000), 5), EvenlySpread(5000), 90, 1000, 5).value();
  // The width shrinks as 1 / sqrt(n): 10 times more here; 3 leaves room for Monte Carlo error.
  CHECK(large.high - large.low < (small.high - small.low) / 3);
  CHECK(large.low < 5);
  CHECK(large.high > 5);
}

TEST_CASE("BootstrapPercentileDiff is deterministic for a seed", "[compare]") {
  const DiffInterval first = BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 500, 42).value();
  const DiffInterval again = BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 500, 42).value();
  const DiffInterval other = BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 500, 43).value();
  CHECK(first.low == again.low);
  CHECK(first.high == again.high);
  CHECK((other.low != first.low || other.high != first.high));
  CHECK(other.estimate == first.estimate);
  // A narrower confidence gives a narrower interval within the same resamples.
  const DiffInterval narrow =
      BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 500, 42, 0.5).value();
  CHECK(narrow.low > first.low);
  CHECK(narrow.high < first.high);
}

TEST_CASE("BootstrapPercentileDiff rejects unusable input", "[compare]") {
  const std::vector<double> empty;
  const std::vector<double> with_infinity = {1, std::numeric_limits<double>::infinity()};
  CHECK_FALSE(BootstrapPercentileDiff(empty, kBaselineMs, 50, 1000, 1).has_value());
  CHECK_FALSE(BootstrapPercentileDiff(kRunMs, empty, 50, 1000, 1).has_value());
  CHECK_FALSE(BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 99, 1).has_value());
  CHECK(BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 100, 1).has_value());
  CHECK_FALSE(BootstrapPercentileDiff(kRunMs, kBaselineMs, 101, 1000, 1).has_value());
  CHECK_FALSE(BootstrapPercentileDiff(kRunMs, kBaselineMs, -1, 1000, 1).has_value());
  CHECK_FALSE(BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 1000, 1, 1.0).has_value());
  CHECK_FALSE(BootstrapPercentileDiff(kRunMs, kBaselineMs, 50, 1000, 1, 0.0).has_value());
  CHECK_FALSE(BootstrapPercentileDiff(with_infinity, kBaselineMs, 50, 1000, 1).has_value());
}

TEST_CASE("BootstrapPercentileDiff of 2,000 resamples of 10,000 values", "[compare][.slow]") {
  // Timed in a Release build with `stagegate_tests "[compare][.slow]" -d yes`.
  const std::vector<double> b = EvenlySpread(10000);
  const DiffInterval result = BootstrapPercentileDiff(Plus(b, 1), b, 95, 2000, 9).value();
  CHECK(result.estimate == Near(1));
  CHECK(result.low < 1);
  CHECK(result.high > 1);
}

// Equal sizes, so the permutation distribution of the difference is symmetric and SciPy's
// two-sided p (twice the smaller tail) is the same as the |difference| p computed here.
const std::vector<double> kShiftA = {12.1, 14.3, 11.8, 15.2, 13.9, 16.0, 12.7, 14.8};
const std::vector<double> kShiftB = {11.2, 12.0, 10.9, 13.1, 12.4, 11.7, 13.5, 12.2};
const std::vector<double> kOverlapA = {5.1, 4.8, 6.2, 5.5, 4.9, 5.8, 6.0, 5.2};
const std::vector<double> kOverlapB = {5.0, 5.6, 4.7, 6.1, 5.3, 5.9, 4.6, 5.4};

TEST_CASE("PermutationTestMeans matches SciPy's exact permutation test", "[compare]") {
  // permutation_test((a, b), lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
  //   permutation_type='independent', vectorized=True, n_resamples=100000,
  //   alternative='two-sided', random_state=0).pvalue
  // SciPy enumerates all C(16, 8) = 12,870 splits here, so its p is exact:
  //   shift -> 0.017094017094017096 (= 220 / 12870), overlap -> 0.7058275058275059
  // (= 9084 / 12870; both counts confirmed by enumerating itertools.combinations).
  // a.mean() - b.mean() -> shift 1.7249999999999996, overlap 0.11250000000000071
  // 20,000 random permutations estimate p with standard error sqrt(p (1 - p) / 20000): 0.00092
  // for the shift and 0.0032 for the overlap; the tolerances are 4 standard errors.
  const PermutationResult shift = PermutationTestMeans(kShiftA, kShiftB, 20000, 1).value();
  CHECK(shift.difference == Near(1.7249999999999996));
  CHECK(shift.p_two_sided == Approx(0.017094017094017096).margin(0.0037));
  CHECK(shift.permutations == 20000);
  const PermutationResult overlap = PermutationTestMeans(kOverlapA, kOverlapB, 20000, 1).value();
  CHECK(overlap.difference == Near(0.11250000000000071));
  CHECK(overlap.p_two_sided == Approx(0.7058275058275059).margin(0.013));
}

TEST_CASE("PermutationTestMeans separates a clear difference from none", "[compare]") {
  // np.mean(a) - np.mean(b) -> 6.925000000000001, for the clear Mann-Whitney set
  const PermutationResult clear = PermutationTestMeans(kClearA, kClearB, 2000, 5).value();
  CHECK(clear.difference == Near(6.925000000000001));
  CHECK(clear.p_two_sided < 0.01);
  // Identical samples: every split is at least as extreme as a difference of 0.
  const PermutationResult same = PermutationTestMeans(kNullA, kNullA, 2000, 5).value();
  CHECK(same.difference == 0);
  CHECK(same.p_two_sided == 1);
  // b ten times over, a drawn from the same values: no evidence of a difference.
  std::vector<double> many_b;
  for (int i = 0; i < 10; ++i)
    many_b.insert(many_b.end(), kNullB.begin(), kNullB.end());
  const PermutationResult null = PermutationTestMeans(kNullB, many_b, 2000, 5).value();
  CHECK(null.p_two_sided > 0.5);
}

TEST_CASE("PermutationTestMeans is deterministic for a seed", "[compare]") {
  const double first = PermutationTestMeans(kOverlapA, kOverlapB, 1000, 8).value().p_two_sided;
  CHECK(PermutationTestMeans(kOverlapA, kOverlapB, 1000, 8).value().p_two_sided == first);
  // Counts from 1,000 permutations differ between seeds unless the tails coincide.
  CHECK(PermutationTestMeans(kOverlapA, kOverlapB, 1000, 9).value().p_two_sided != first);
}

TEST_CASE("PermutationTestMeans rejects unusable input", "[compare]") {
  const std::vector<double> empty;
  const std::vector<double> with_nan = {1, std::numeric_limits<double>::quiet_NaN()};
  CHECK_FALSE(PermutationTestMeans(empty, kShiftB, 100, 1).has_value());
  CHECK_FALSE(PermutationTestMeans(kShiftA, empty, 100, 1).has_value());
  CHECK_FALSE(PermutationTestMeans(kShiftA, kShiftB, 0, 1).has_value());
  CHECK_FALSE(PermutationTestMeans(with_nan, kShiftB, 100, 1).has_value());
  // One permutation: p is 1/2 or 1, by the formula (1 + count) / (1 + permutations).
  const double p = PermutationTestMeans(kShiftA, kShiftB, 1, 1).value().p_two_sided;
  CHECK((p == 0.5 || p == 1));
}

TEST_CASE("DescribeDifference writes one plain line", "[compare]") {
  CHECK(DescribeDifference("TTFT p95", 180.4, "ms", true, 0.003) ==
        "TTFT p95 is 180 ms worse, significant (p = 0.003)");
  CHECK(DescribeDifference("mean score", 0.2, "", false, 0.4123) ==
        "mean score is 0.2 better, not significant (p = 0.41)");
  CHECK(DescribeDifference("e2e p50", 0.0, "ms", true, 0.9) == "e2e p50 is unchanged");
  CHECK(DescribeDifference("TTFT p50", -12.345, "ms", true, 0.0004) ==
        "TTFT p50 is 12.3 ms better, significant (p < 0.001)");
  CHECK(DescribeDifference("throughput", -1234.4, "tok/s", false, 0.05) ==
        "throughput is 1234 tok/s worse, not significant (p = 0.05)");
  CHECK(DescribeDifference("error rate", 2.5, "%", true, std::nullopt) ==
        "error rate is 2.5% worse");
  CHECK(DescribeDifference("ITL p99", 0.000123, "s", true, 0.0234) ==
        "ITL p99 is 0.000123 s worse, significant (p = 0.023)");
  CHECK(DescribeDifference("mean score", -0.05, "", false, 1.0) ==
        "mean score is 0.05 worse, not significant (p = 1)");
  CHECK(DescribeDifference("TTFT p95", 3, "ms", true, 0.02, 0.01) ==
        "TTFT p95 is 3 ms worse, not significant (p = 0.02)");
  CHECK(DescribeDifference("TTFT p95", 3, "ms", true, std::numeric_limits<double>::quiet_NaN()) ==
        "TTFT p95 is 3 ms worse");
  CHECK(DescribeDifference("TTFT p95", std::numeric_limits<double>::infinity(), "ms", true, 0.5) ==
        "TTFT p95 cannot be compared");
}

}  // namespace
}  // namespace stagegate::stats

namespace stagegate::stats {
namespace {

// The percentile permutation test against scipy.stats.permutation_test((a, b), statistic,
// permutation_type='independent', n_resamples=np.inf, alternative='two-sided',
// vectorized=True), statistic = lambda x, y, axis: np.percentile(x, P, axis=axis) -
// np.percentile(y, P, axis=axis): an exact test, so the p-values must agree to rounding.
const std::vector<double> kSlower = {12.0, 15.5, 11.2, 19.8, 14.1, 13.3};
const std::vector<double> kFaster = {10.1, 12.4, 9.8, 11.7, 10.9, 13.0, 12.2};
constexpr double kExactP95 = 0.04195804195804196;  // SciPy's, for kSlower against kFaster

TEST_CASE("PermutationTestPercentile is exact where it can be and matches SciPy's",
          "[stats][compare]") {
  const std::vector<double>& a = kSlower;
  const std::vector<double>& b = kFaster;
  // 13 choose 6 = 1716 reassignments, within the 2000 allowed: exact.
  std::optional<PermutationResult> p95 = PermutationTestPercentile(a, b, 95, 2000, 1);
  REQUIRE(p95);
  CHECK(p95->exact);
  CHECK(p95->permutations == 1716);
  CHECK(p95->difference == Near(5.905000000000001));
  CHECK(p95->p_two_sided == Near(kExactP95));
  std::optional<PermutationResult> p50 = PermutationTestPercentile(a, b, 50, 2000, 1);
  REQUIRE(p50);
  CHECK(p50->difference == Near(2.0));
  CHECK(p50->p_two_sided == Near(0.04079254079254079));

  // Ties, and a smaller than b: 11 choose 6 = 462.
  const std::vector<double> c = {1, 2, 2, 3, 3, 3};
  const std::vector<double> d = {2, 3, 3, 4, 4};
  std::optional<PermutationResult> tied = PermutationTestPercentile(c, d, 95, 2000, 1);
  REQUIRE(tied);
  CHECK(tied->permutations == 462);
  CHECK(tied->difference == Near(-1.0));
  CHECK(tied->p_two_sided == Near(0.36363636363636365));
  CHECK(PermutationTestPercentile(c, d, 50, 2000, 1)->p_two_sided == Near(0.696969696969697));
}

TEST_CASE("PermutationTestPercentile draws at random past its budget, reproducibly",
          "[stats][compare]") {
  const std::vector<double>& a = kSlower;
  const std::vector<double>& b = kFaster;
  // 1000 < 1716: random reassignments, with SciPy's +1 adjustment; near the exact p-value.
  std::optional<PermutationResult> random = PermutationTestPercentile(a, b, 95, 1000, 7);
  REQUIRE(random);
  CHECK_FALSE(random->exact);
  CHECK(random->permutations == 1000);
  CHECK(PermutationTestPercentile(a, b, 95, 1000, 7)->p_two_sided == random->p_two_sided);
  // Unbiased: over 100 seeds the mean p-value is the exact one, plus what the +1 adjustment
  // adds (about 2 / 1001), within 4 standard errors of the mean (one test's is about 0.01).
  double sum = 0;
  for (uint64_t seed = 100; seed < 200; ++seed)
    sum += PermutationTestPercentile(a, b, 95, 1000, seed)->p_two_sided;
  CHECK(std::abs(sum / 100 - (kExactP95 + 2.0 / 1001)) < 0.004);
  // Identical samples: nothing is extreme but everything is as extreme: p = 1.
  const std::vector<double> same = {5, 5, 5, 5};
  CHECK(PermutationTestPercentile(same, same, 95, 2000, 1)->p_two_sided == 1.0);
  // What the test cannot take.
  const std::vector<double> empty, nan = {1, std::nan("")};
  CHECK_FALSE(PermutationTestPercentile(empty, b, 95, 2000, 1));
  CHECK_FALSE(PermutationTestPercentile(nan, b, 95, 2000, 1));
  CHECK_FALSE(PermutationTestPercentile(a, b, 101, 2000, 1));
  CHECK_FALSE(PermutationTestPercentile(a, b, 95, 0, 1));
}

}  // namespace
}  // namespace stagegate::stats
