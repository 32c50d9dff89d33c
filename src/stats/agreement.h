#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace stagegate::stats {

/// Ratings of several raters on a set of units: ratings[u][r] is rater r's score of unit u, or
/// nullopt where rater r did not score it. Rows may differ in length; only the values count.
using UnitRatings = std::vector<std::vector<std::optional<int64_t>>>;

/// Cohen's kappa with quadratic weights for two raters who scored the same items: a[i] and b[i]
/// are the two ratings of item i. `levels` is the criterion's whole scale, strictly ascending; a
/// level that nobody used still counts, since the weight of a pair is (i - j)^2 / (k - 1)^2 with
/// i, j the positions of the two ratings in `levels` and k = levels.size() (scikit-learn's
/// cohen_kappa_score(a, b, weights="quadratic", labels=levels)).
/// nullopt when kappa is undefined or the input is unusable: fewer than 2 items, a.size() !=
/// b.size(), fewer than 2 levels or levels not strictly ascending, a rating not in `levels`, or
/// no expected disagreement (both raters gave every item the same single level).
std::optional<double> WeightedKappaQuadratic(std::span<const int64_t> a, std::span<const int64_t> b,
                                             std::span<const int64_t> levels);

/// The difference function of Krippendorff's alpha, i.e. the level of measurement.
enum class AlphaMetric { kNominal, kOrdinal, kInterval };

/// Krippendorff's alpha, as in Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability":
/// a coincidence matrix of the pairable values (units with fewer than 2 ratings are dropped), n =
/// the number of pairable values, alpha = 1 - (n - 1) * sum(o_ck * d_ck) / sum(n_c * n_k * d_ck).
/// d_ck is 1 for c != k (nominal); (n_c + ... + n_k - (n_c + n_k) / 2)^2 over the values present,
/// in order (ordinal); (c - k)^2 (interval). Any number of raters; missing ratings allowed.
/// nullopt when there is no pairable value, or no expected disagreement (a single value in all
/// pairable units; other tools report 1 or fail there).
std::optional<double> KrippendorffAlpha(const UnitRatings& units, AlphaMetric metric);

/// A unit whose ratings are far apart, for adjudication.
struct Disagreement {
  size_t unit;  // index into the ratings
  int64_t min;
  int64_t max;

  friend bool operator==(const Disagreement&, const Disagreement&) = default;
};

/// The units with at least two ratings that span more than `more_than` levels (max - min >
/// more_than), in unit order. Overflow-safe for any int64_t ratings.
std::vector<Disagreement> WideDisagreements(const UnitRatings& units, int64_t more_than);

}  // namespace stagegate::stats
