// The correction figures on known judgements: shares with the Wilson interval, the median
// correction time, minutes of correction per 100 answers, and the reviewers' hours projected to
// the next release.

#include "quality/correction.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace stagegate::quality {
namespace {

using Catch::Matchers::WithinAbs;

UsabilityJudgement J(const std::string& usability, std::optional<double> seconds = std::nullopt,
                     const std::string& source = kAssistantSource) {
  return {.source = source, .usability = usability, .correction_seconds = seconds};
}

// The Wilson score interval at 95%, written out: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) /
// (1 + z^2/n).
std::pair<double, double> Wilson(double k, double n) {
  const double z = 1.959963984540054, p = k / n;
  const double centre = p + z * z / (2 * n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  return {(centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)};
}

TEST_CASE("correction figures from known judgements", "[correction]") {
  // 10 judgements: 5 as is, 4 corrected (60, 30, 90 and 120 s), 1 not usable.
  const std::vector<UsabilityJudgement> judged = {
      J("as_is"),          J("as_is"),         J("as_is"),         J("as_is"),
      J("as_is"),          J("corrected", 60), J("corrected", 30), J("corrected", 90),
      J("corrected", 120), J("unusable")};
  const std::vector<CorrectionFigures> figures = CorrectionBySource(judged);
  REQUIRE(figures.size() == 1);
  const CorrectionFigures& f = figures[0];
  CHECK(f.source == "assistant");
  CHECK(f.judgements == 10);
  CHECK(f.as_is == 5);
  CHECK(f.corrected == 4);
  CHECK(f.unusable == 1);
  CHECK(*f.Share(f.as_is) == 0.5);
  CHECK(*f.Share(f.corrected) == 0.4);
  CHECK(*f.Share(f.unusable) == 0.1);
  const auto [low, high] = Wilson(5, 10);
  REQUIRE(f.as_is_ci);
  CHECK_THAT(f.as_is_ci->low, WithinAbs(low, 1e-12));
  CHECK_THAT(f.as_is_ci->high, WithinAbs(high, 1e-12));
  CHECK_THAT(f.as_is_ci->low, WithinAbs(0.2366, 1e-4));  // R: prop.test(5, 10, correct = FALSE)
  CHECK(f.timed_corrections == 4);
  CHECK(*f.median_correction_s == 75);  // (60 + 90) / 2
  // 300 s over 10 answers: 30 s an answer, 3000 s per 100 answers, 50 minutes.
  CHECK_THAT(*f.minutes_per_100, WithinAbs(50, 1e-12));
}

TEST_CASE("correction figures are grouped by source, the assistant first", "[correction]") {
  const std::vector<UsabilityJudgement> judged = {J("corrected", 40, "service-desk"),
                                                  J("as_is", std::nullopt, "service-desk"),
                                                  J("corrected", 10),
                                                  J("corrected", 20),
                                                  J("corrected", 60),
                                                  J("bogus")};
  const std::vector<CorrectionFigures> figures = CorrectionBySource(judged);
  REQUIRE(figures.size() == 2);
  CHECK(figures[0].source == "assistant");
  CHECK(figures[0].judgements == 3);  // the unknown value is not counted
  CHECK(*figures[0].median_correction_s == 20);
  CHECK_THAT(*figures[0].minutes_per_100, WithinAbs(90.0 / 3 * 100 / 60, 1e-12));
  CHECK(figures[0].as_is == 0);
  CHECK(figures[0].as_is_ci->low == 0);
  CHECK(figures[1].source == "service-desk");
  CHECK(figures[1].judgements == 2);
  CHECK(*figures[1].Share(figures[1].as_is) == 0.5);
  CHECK(*figures[1].median_correction_s == 40);
  CHECK_THAT(*figures[1].minutes_per_100, WithinAbs(40.0 / 2 * 100 / 60, 1e-12));
}

TEST_CASE("without judgements, or without timed corrections, the figures say nothing",
          "[correction]") {
  const std::vector<CorrectionFigures> none = CorrectionBySource({});
  REQUIRE(none.size() == 1);
  CHECK(none[0].judgements == 0);
  CHECK_FALSE(none[0].Share(0));
  CHECK_FALSE(none[0].as_is_ci);
  CHECK_FALSE(none[0].median_correction_s);
  CHECK_FALSE(none[0].minutes_per_100);
  // Corrections without a time: a figure of 0 minutes would understate them.
  const CorrectionFigures untimed = CorrectionBySource({J("corrected"), J("as_is")})[0];
  CHECK_FALSE(untimed.minutes_per_100);
  CHECK_FALSE(untimed.median_correction_s);
  // Nothing to correct: zero minutes is the true figure.
  const CorrectionFigures clean = CorrectionBySource({J("as_is"), J("unusable")})[0];
  CHECK(clean.minutes_per_100 == 0.0);
}

TEST_CASE("reviewers' hours are projected to the next release at the same sample size",
          "[correction]") {
  // 2 h 30 min over 30 scored answers: 5 minutes an answer; 48 sampled: 4 hours.
  const ReviewerHours h = ReviewerHoursOf(9000, 30, 48);
  CHECK(h.hours == 2.5);
  CHECK_THAT(*h.hours_per_answer, WithinAbs(2.5 / 30, 1e-12));
  CHECK_THAT(*h.projected_hours, WithinAbs(4, 1e-12));
  const ReviewerHours unscored = ReviewerHoursOf(600, 0, 48);
  CHECK_THAT(unscored.hours, WithinAbs(1.0 / 6, 1e-12));
  CHECK_FALSE(unscored.projected_hours);
}

TEST_CASE("the correction lines and JSON carry every figure", "[correction]") {
  CorrectionSummary summary{.by_source = CorrectionBySource({J("as_is"), J("corrected", 30),
                                                             J("corrected", 90), J("unusable")}),
                            .reviewing = ReviewerHoursOf(7200, 24, 40)};
  CHECK(CorrectionLines(summary) ==
        std::vector<std::string>{
            "  usability, assistant (4 reviewer judgements): usable as it is 0.25 (95% Wilson "
            "interval 0.05 to 0.7), after correction 0.5, not usable 0.25",
            "  correction, assistant: median 60 s over 2 timed corrections, 50 min of correction "
            "per 100 answers",
            "  reviewers' hours for this run: 2 h over 24 scored answers (5 min each); next "
            "release at the same sample size (40 answers): about 3.33 h"});
  const nlohmann::json j = CorrectionToJson(summary);
  CHECK(j["label"] == "reviewers");
  CHECK(j["by_source"][0]["source"] == "assistant");
  CHECK(j["by_source"][0]["as_is_share"] == 0.25);
  CHECK(j["by_source"][0]["corrected_share"] == 0.5);
  CHECK(j["by_source"][0]["unusable_share"] == 0.25);
  CHECK(j["by_source"][0]["median_correction_s"] == 60.0);
  CHECK(j["by_source"][0]["correction_minutes_per_100_answers"] == 50.0);
  CHECK(j["by_source"][0]["as_is_share_ci95"].size() == 2);
  CHECK(j["reviewer_hours"]["hours"] == 2.0);
  CHECK(j["reviewer_hours"]["projected_hours_next_release"].get<double>() == Approx(40.0 * 2 / 24));
}

}  // namespace
}  // namespace stagegate::quality
