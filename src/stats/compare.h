#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace stagegate::stats {

// Comparing a run (sample a) with its baseline (sample b). Every function here is pure: it reads
// the spans only during the call, keeps no reference to them and does no I/O. A value that is not
// finite (NaN, infinity) makes a comparison undefined: the tests and the bootstrap return nullopt.
// The randomised ones are deterministic: the same inputs and seed give the same result, bit for
// bit, on any platform, since they draw from std::mt19937_64 (whose output the standard fixes)
// through their own bounded draws rather than the implementation-defined std distributions.

/// The Mann-Whitney U test of a against b.
struct MannWhitney {
  double u;                     // pairs (a_i, b_j) with a_i > b_j, plus half the ties (scipy's U1)
  double z;                     // continuity-corrected normal score; > 0 when a tends to be larger
  double p_two_sided;           // in [0, 1]
  double effect_rank_biserial;  // 2U / (n_a n_b) - 1, in [-1, 1]; > 0 when a tends to be larger
};

/// The two-sided Mann-Whitney U test by the normal approximation, with tie and continuity
/// corrections: scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method='asymptotic') and
/// R's wilcox.test(a, b, exact = FALSE, correct = TRUE). O(n log n) in the total size. nullopt
/// when either sample is empty or all values are equal (the normal approximation has no spread).
std::optional<MannWhitney> MannWhitneyU(std::span<const double> a, std::span<const double> b);

/// An estimate of a difference with a confidence interval, low <= high.
struct DiffInterval {
  double estimate;
  double low;
  double high;
};

/// P(a) - P(b) for the `percentile` (0-100) of each sample by linear interpolation (numpy's
/// default), with a percentile-bootstrap interval: each of `resamples` rounds resamples a and b
/// independently, with replacement, and the interval is the (1 -+ confidence) / 2 percentiles of
/// the rounds' differences. Exact (no subsampling); O(resamples (n_a + n_b)). Deterministic for a
/// given seed. nullopt for an empty sample, resamples < 100, a percentile outside [0, 100] or a
/// confidence outside (0, 1).
std::optional<DiffInterval> BootstrapPercentileDiff(std::span<const double> a,
                                                    std::span<const double> b, double percentile,
                                                    int resamples, uint64_t seed,
                                                    double confidence = 0.95);

/// mean(a) - mean(b) with a percentile-bootstrap interval, drawn as BootstrapPercentileDiff draws
/// (each round resamples a and b independently, with replacement). nullopt as for it.
std::optional<DiffInterval> BootstrapMeanDiff(std::span<const double> a, std::span<const double> b,
                                              int resamples, uint64_t seed,
                                              double confidence = 0.95);

/// The result of a permutation test of mean(a) - mean(b).
struct PermutationResult {
  double difference;   // mean(a) - mean(b)
  double p_two_sided;  // (1 + permutations at least as extreme) / (1 + permutations), in (0, 1]
  int permutations;    // the reassignments drawn, or every one when `exact`
  bool exact = false;  // every reassignment of the pooled values was tried
};

/// A Monte Carlo permutation test of the difference of means: `permutations` random
/// reassignments of the pooled values to groups of the original sizes. A reassignment counts as
/// at least as extreme when |its difference| >= |observed| - 1e-12 max(1, max |value|), the
/// tolerance scaled to the data so that rounding in the sums cannot make an equal difference look
/// smaller. Deterministic for a given seed. nullopt for an empty sample or permutations < 1.
std::optional<PermutationResult> PermutationTestMeans(std::span<const double> a,
                                                      std::span<const double> b, int permutations,
                                                      uint64_t seed);

/// A permutation test of P(a) - P(b), the `percentile` (0-100) of each sample by linear
/// interpolation (numpy's default): the pooled values are reassigned to groups of the original
/// sizes, every reassignment when there are at most `permutations` of them (`exact`), else
/// `permutations` random ones. The two-sided p-value is scipy.stats.permutation_test's (with
/// permutation_type='independent'): twice the smaller one-sided p-value, at most 1, each
/// one-sided count taking differences within 100 machine epsilons of |observed| as equal, and a
/// random test adding one to the count and to the number of reassignments. `difference` is the
/// observed P(a) - P(b). nullopt as for BootstrapPercentileDiff, or permutations < 1.
std::optional<PermutationResult> PermutationTestPercentile(std::span<const double> a,
                                                           std::span<const double> b,
                                                           double percentile, int permutations,
                                                           uint64_t seed);

/// One plain-language line on a difference (run - baseline) in `metric`, e.g. "TTFT p95 is 180 ms
/// worse, significant (p = 0.003)", "mean score is 0.2 better, not significant (p = 0.41)",
/// "e2e p50 is unchanged" (a difference of exactly 0). The difference is shown to 3 significant
/// digits, the p-value to 2 ("p < 0.001" below that); significant means p < alpha. Without a
/// p-value (nullopt or NaN) the significance clause is left out. `unit` may be empty; "%" is
/// written without a space. A difference that is not finite gives "<metric> cannot be compared".
std::string DescribeDifference(const std::string& metric, double difference,
                               const std::string& unit, bool higher_is_worse,
                               std::optional<double> p_value, double alpha = 0.05);

/// A p-value as the lines above write it: "p = 0.035" (2 significant digits), "p < 0.001".
std::string DescribePValue(double p);

}  // namespace stagegate::stats
