#include "stats/agreement.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace stagegate::stats {
namespace {

// The expected values in this file come from independent implementations, each with the exact
// command that printed it beside it, so anyone can re-run them:
// - Weighted kappa: scikit-learn 1.2.1 (Debian python3-sklearn), cohen_kappa_score(a, b,
//   weights="quadratic", labels=[1, 2, 3, 4, 5]), printed with repr; confirmed by R 4.2.2's
//   psych 2.2.9 (Debian r-cran-psych), cohen.kappa(cbind(a, b), levels=1:5)$weighted.kappa.
//   (R's irr is not packaged for Debian 12, so it was not used.)
// - Krippendorff's alpha: the worked example of Krippendorff (2011), "Computing Krippendorff's
//   Alpha-Reliability", and NLTK 3.8 (Debian python3-nltk), AnnotationTask.alpha(), which drops
//   units with fewer than 2 ratings as Krippendorff does. NLTK has no ordinal metric, so the
//   ordinal values pass it Krippendorff's ordinal difference as its distance function; that
//   same script reproduces the paper's 0.815. The script, with rows as raters, N = None:
//     from nltk.metrics.agreement import AnnotationTask
//     from nltk.metrics.distance import binary_distance, interval_distance
//     from collections import Counter
//     def alpha(rows, metric):
//         data = [(r, u, v) for r, row in enumerate(rows) for u, v in enumerate(row)
//                 if v is not None]
//         if metric == "ordinal":
//             per_unit = Counter(u for _, u, _ in data)
//             n = Counter(v for _, u, v in data if per_unit[u] >= 2)
//             def dist(c, k):
//                 lo, hi = min(c, k), max(c, k)
//                 return (sum(n[g] for g in n if lo <= g <= hi) - (n[lo] + n[hi]) / 2) ** 2
//         else:
//             dist = {"nominal": binary_distance, "interval": interval_distance}[metric]
//         return AnnotationTask(data, distance=dist).alpha()

Approx Near(double value) {
  return Approx(value).epsilon(1e-12);
}

const std::vector<int64_t> kScale = {1, 2, 3, 4, 5};
constexpr std::nullopt_t N = std::nullopt;

// Builds units (units[u][r]) from rows of raters (rows[r][u]), the layout the papers print.
UnitRatings FromRaterRows(const std::vector<std::vector<std::optional<int64_t>>>& rows) {
  UnitRatings units(rows.at(0).size());
  for (const auto& row : rows) {
    for (size_t u = 0; u < row.size(); ++u)
      units[u].push_back(row[u]);
  }
  return units;
}

// Krippendorff (2011), section C: 4 observers, 12 units, missing values. The matrix is also the
// fixture of the ordinal and ratio tests of fast-krippendorff (tests/test_krippendorff.py).
const UnitRatings kKrippendorff2011 = FromRaterRows({
    {1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N},  // observer A
    {1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3},  // observer B
    {N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N},  // observer C
    {1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N},  // observer D
});

// The example of Wikipedia's "Krippendorff's alpha" article: 3 coders, 15 units, many missing;
// the fixture of fast-krippendorff's nominal (0.691358) and interval (0.810845) tests.
const UnitRatings kWikipedia = FromRaterRows({
    {N, N, N, N, N, 3, 4, 1, 2, 1, 1, 3, 3, N, 3},
    {1, N, 2, 1, 3, 3, 4, 3, N, N, N, N, N, N, N},
    {N, N, 2, 1, 3, 4, 4, N, 2, 1, 1, 3, 3, N, 4},
});

// A rubric-like set: 3 raters, 10 items on a 1..5 scale, missing ratings; item 6 has a single
// rating and so is not pairable.
const UnitRatings kRubric = FromRaterRows({
    {4, 3, 5, 2, 1, 4, N, 3, 5, 2},
    {4, 4, 5, 1, 2, N, 3, 3, 4, 2},
    {5, 3, N, 2, 1, 3, N, N, 4, 3},
});

TEST_CASE("WeightedKappaQuadratic matches scikit-learn when every level is used", "[agreement]") {
  const std::vector<int64_t> a = {1, 2, 3, 4, 5, 3, 2, 4, 5, 1};
  const std::vector<int64_t> b = {1, 3, 3, 4, 4, 2, 2, 5, 5, 2};
  // cohen_kappa_score(a, b, weights="quadratic", labels=[1,2,3,4,5]) -> 0.8648648648648649
  // psych: cohen.kappa(cbind(a, b), levels=1:5)$weighted.kappa -> 0.864864864864865
  CHECK(WeightedKappaQuadratic(a, b, kScale).value() == Near(0.8648648648648649));
}

TEST_CASE("WeightedKappaQuadratic weights by the whole scale, unused levels included",
          "[agreement]") {
  // Nobody used level 3, so 2 and 4 are two steps apart on the scale, not neighbours.
  const std::vector<int64_t> a = {1, 2, 2, 4, 5, 4, 1, 5, 2, 4};
  const std::vector<int64_t> b = {2, 2, 1, 4, 4, 5, 1, 5, 2, 5};
  // cohen_kappa_score(a, b, weights="quadratic", labels=[1,2,3,4,5]) -> 0.8936170212765957
  // psych: cohen.kappa(cbind(a, b), levels=1:5)$weighted.kappa -> 0.893617021276596
  CHECK(WeightedKappaQuadratic(a, b, kScale).value() == Near(0.8936170212765957));
  // With only the observed levels as the scale (what irr::kappa2 does for numbers):
  // cohen_kappa_score(a, b, weights="quadratic") -> 0.782608695652174
  const std::vector<int64_t> observed = {1, 2, 4, 5};
  CHECK(WeightedKappaQuadratic(a, b, observed).value() == Near(0.782608695652174));
}

TEST_CASE("WeightedKappaQuadratic is negative for systematic disagreement", "[agreement]") {
  const std::vector<int64_t> a = {1, 1, 2, 2, 4, 5, 5, 4};
  const std::vector<int64_t> b = {5, 4, 5, 4, 1, 2, 1, 2};
  // cohen_kappa_score(a, b, weights="quadratic", labels=[1,2,3,4,5]) -> -0.8999999999999999
  // psych: cohen.kappa(cbind(a, b), levels=1:5)$weighted.kappa -> -0.9
  CHECK(WeightedKappaQuadratic(a, b, kScale).value() == Near(-0.9));
}

TEST_CASE("WeightedKappaQuadratic is 1 for perfect agreement", "[agreement]") {
  const std::vector<int64_t> a = {1, 3, 5, 2, 2};
  CHECK(WeightedKappaQuadratic(a, a, kScale) == 1.0);
}

TEST_CASE("WeightedKappaQuadratic is undefined on unusable input", "[agreement]") {
  const std::vector<int64_t> two = {1, 2};
  const std::vector<int64_t> three = {1, 2, 3};
  const std::vector<int64_t> one = {1};
  SECTION("fewer than 2 items") {
    CHECK(WeightedKappaQuadratic(one, one, kScale) == std::nullopt);
  }
  SECTION("mismatched sizes") {
    CHECK(WeightedKappaQuadratic(two, three, kScale) == std::nullopt);
  }
  SECTION("a rating off the scale") {
    const std::vector<int64_t> off = {1, 6};
    CHECK(WeightedKappaQuadratic(two, off, kScale) == std::nullopt);
    CHECK(WeightedKappaQuadratic(off, two, kScale) == std::nullopt);
  }
  SECTION("no expected disagreement: one level throughout") {
    const std::vector<int64_t> same = {3, 3, 3};
    CHECK(WeightedKappaQuadratic(same, same, kScale) == std::nullopt);
  }
  SECTION("a scale that is too short or not ascending") {
    const std::vector<int64_t> ones = {1, 1};
    CHECK(WeightedKappaQuadratic(ones, ones, one) == std::nullopt);
    const std::vector<int64_t> descending = {3, 2, 1};
    CHECK(WeightedKappaQuadratic(two, two, descending) == std::nullopt);
    const std::vector<int64_t> repeated = {1, 2, 2, 3};
    CHECK(WeightedKappaQuadratic(two, two, repeated) == std::nullopt);
  }
}

TEST_CASE("KrippendorffAlpha reproduces Krippendorff's (2011) worked example", "[agreement]") {
  // The paper: alpha nominal = 0.743, ordinal = 0.815, interval = 0.849.
  CHECK(KrippendorffAlpha(kKrippendorff2011, AlphaMetric::kNominal).value() ==
        Approx(0.743).margin(0.0005));
  CHECK(KrippendorffAlpha(kKrippendorff2011, AlphaMetric::kOrdinal).value() ==
        Approx(0.815).margin(0.0005));
  CHECK(KrippendorffAlpha(kKrippendorff2011, AlphaMetric::kInterval).value() ==
        Approx(0.849).margin(0.0005));
  // To full precision, NLTK (script above): alpha(rows, "nominal") -> 0.743421052631579,
  // "ordinal" -> 0.8153875037548813, "interval" -> 0.8491071428571428.
  CHECK(KrippendorffAlpha(kKrippendorff2011, AlphaMetric::kNominal).value() ==
        Near(0.743421052631579));
  CHECK(KrippendorffAlpha(kKrippendorff2011, AlphaMetric::kOrdinal).value() ==
        Near(0.8153875037548813));
  CHECK(KrippendorffAlpha(kKrippendorff2011, AlphaMetric::kInterval).value() ==
        Near(0.8491071428571428));
}

TEST_CASE("KrippendorffAlpha reproduces the Wikipedia example, with many ratings missing",
          "[agreement]") {
  // fast-krippendorff's tests: nominal 0.691358, interval 0.810845 (6 decimals). NLTK (script
  // above): "nominal" -> 0.691358024691358, "ordinal" -> 0.8067214199413152,
  // "interval" -> 0.8108448928121059.
  CHECK(KrippendorffAlpha(kWikipedia, AlphaMetric::kNominal).value() == Near(0.691358024691358));
  CHECK(KrippendorffAlpha(kWikipedia, AlphaMetric::kOrdinal).value() == Near(0.8067214199413152));
  CHECK(KrippendorffAlpha(kWikipedia, AlphaMetric::kInterval).value() == Near(0.8108448928121059));
}

TEST_CASE("KrippendorffAlpha matches NLTK on rubric scores with missing ratings", "[agreement]") {
  // NLTK (script above): "nominal" -> 0.290748898678414, "ordinal" -> 0.8391867789921068,
  // "interval" -> 0.8263214670981661.
  CHECK(KrippendorffAlpha(kRubric, AlphaMetric::kNominal).value() == Near(0.290748898678414));
  CHECK(KrippendorffAlpha(kRubric, AlphaMetric::kOrdinal).value() == Near(0.8391867789921068));
  CHECK(KrippendorffAlpha(kRubric, AlphaMetric::kInterval).value() == Near(0.8263214670981661));
}

TEST_CASE("KrippendorffAlpha falls below 0 for systematic disagreement", "[agreement]") {
  const UnitRatings flipped = FromRaterRows({{1, 2, 1, 2, 3}, {2, 1, 2, 1, 3}});
  // NLTK (script above): alpha([[1,2,1,2,3],[2,1,2,1,3]], "nominal") -> -0.125,
  // "ordinal" -> 0.19999999999999996, "interval" -> 0.3571428571428571.
  CHECK(KrippendorffAlpha(flipped, AlphaMetric::kNominal).value() == Near(-0.125));
  CHECK(KrippendorffAlpha(flipped, AlphaMetric::kOrdinal).value() == Near(0.2));
  CHECK(KrippendorffAlpha(flipped, AlphaMetric::kInterval).value() == Near(0.3571428571428571));
}

TEST_CASE("KrippendorffAlpha is 1 for perfect agreement, whatever is missing", "[agreement]") {
  const UnitRatings units = {{1, 1, N}, {3, N, 3}, {5, 5, 5}, {2}, {N, N}};
  CHECK(KrippendorffAlpha(units, AlphaMetric::kNominal) == 1.0);
  CHECK(KrippendorffAlpha(units, AlphaMetric::kOrdinal) == 1.0);
  CHECK(KrippendorffAlpha(units, AlphaMetric::kInterval) == 1.0);
}

TEST_CASE("KrippendorffAlpha ignores the units that have a single rating", "[agreement]") {
  // Adding unpairable units changes nothing (n counts pairable values only).
  UnitRatings padded = kRubric;
  padded.push_back({N, 1, N});
  padded.push_back({5});
  padded.push_back({});
  CHECK(KrippendorffAlpha(padded, AlphaMetric::kOrdinal).value() == Near(0.8391867789921068));
}

TEST_CASE("KrippendorffAlpha is undefined without pairable values or expected disagreement",
          "[agreement]") {
  CHECK(KrippendorffAlpha({}, AlphaMetric::kNominal) == std::nullopt);
  CHECK(KrippendorffAlpha({{1, N}, {N, 2}, {}}, AlphaMetric::kNominal) == std::nullopt);
  const UnitRatings one_value = {{4, 4}, {4, 4, 4}, {2}};
  CHECK(KrippendorffAlpha(one_value, AlphaMetric::kNominal) == std::nullopt);
  CHECK(KrippendorffAlpha(one_value, AlphaMetric::kOrdinal) == std::nullopt);
  CHECK(KrippendorffAlpha(one_value, AlphaMetric::kInterval) == std::nullopt);
}

TEST_CASE("WideDisagreements lists the units whose ratings span more than the limit",
          "[agreement]") {
  // Spans of kKrippendorff2011: unit 1 (2..3) is 1, unit 5 (1..4) is 3, unit 7 (1..2) is 1, the
  // rest 0; unit 11 has a single rating.
  CHECK(WideDisagreements(kKrippendorff2011, 1) ==
        std::vector<Disagreement>{{.unit = 5, .min = 1, .max = 4}});
  CHECK(WideDisagreements(kKrippendorff2011, 0) ==
        std::vector<Disagreement>{{.unit = 1, .min = 2, .max = 3},
                                  {.unit = 5, .min = 1, .max = 4},
                                  {.unit = 7, .min = 1, .max = 2}});
  CHECK(WideDisagreements(kKrippendorff2011, 2).size() == 1);
  CHECK(WideDisagreements(kKrippendorff2011, 3).empty());
}

TEST_CASE("WideDisagreements needs two ratings and survives extreme values", "[agreement]") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const UnitRatings units = {{kMin, N, kMax}, {7}, {}, {-3, -3}};
  CHECK(WideDisagreements(units, kMax) ==
        std::vector<Disagreement>{{.unit = 0, .min = kMin, .max = kMax}});
  // A negative limit takes every unit with two ratings, even one where they agree.
  CHECK(WideDisagreements(units, -1) ==
        std::vector<Disagreement>{{.unit = 0, .min = kMin, .max = kMax},
                                  {.unit = 3, .min = -3, .max = -3}});
}

}  // namespace
}  // namespace stagegate::stats
