// The judge against the reviewers: the consensus rule, kappa, confusion matrix and bias checked
// against scikit-learn on a committed fixture, the bootstrap interval, and the gate of
// quality.judge on both sides of each limit.

#include "quality/judge_calibration.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace stagegate::quality {
namespace {

using json = nlohmann::json;

const std::vector<int64_t> kScale = {1, 2, 3, 4, 5};

// tests/testdata/judge_calibration/levels.csv: criterion -> each answer's reviewers' levels and
// the judge's, read here without stagegate's code.
std::map<std::string, std::vector<ScoredTwice>> ReadFixture() {
  std::istringstream in(testing::ReadText(testing::Testdata("judge_calibration/levels.csv")));
  std::map<std::string, std::vector<ScoredTwice>> out;
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string answer, criterion, reviewers, judge;
    std::getline(fields, answer, ',');
    std::getline(fields, criterion, ',');
    std::getline(fields, reviewers, ',');
    std::getline(fields, judge, ',');
    ScoredTwice scored{.judge = std::stoll(judge)};
    std::istringstream levels(reviewers);
    for (std::string level; std::getline(levels, level, ';');)
      scored.reviewers.push_back(std::stoll(level));
    out[criterion].push_back(scored);
  }
  return out;
}

// What tests/quality/judge_calibration_sklearn.py prints for the fixture (scikit-learn's
// figures), or a failed check saying why there are none.
json SklearnFigures() {
  return testing::PythonFigures("tests/quality/judge_calibration_sklearn.py",
                                {testing::Testdata("judge_calibration/levels.csv")},
                                "scikit-learn comes with Debian's python3-sklearn, in "
                                "scripts/test-packages.txt");
}

// `n` answers both scored on one criterion, reviewers and judge on the same level, cycling
// through the scale: a judge in full agreement.
std::vector<ScoredTwice> Agreeing(int n) {
  std::vector<ScoredTwice> answers;
  for (int i = 0; i < n; ++i) {
    const int64_t level = kScale[static_cast<size_t>(i) % kScale.size()];
    answers.push_back({.reviewers = {level, level}, .judge = level});
  }
  return answers;
}

TEST_CASE("the reviewers' consensus is the median, the lower middle for an even count",
          "[judge_calibration]") {
  CHECK(ConsensusLevel({}) == std::nullopt);
  CHECK(ConsensusLevel({4}) == 4);
  CHECK(ConsensusLevel({5, 1, 3}) == 3);
  CHECK(ConsensusLevel({4, 2}) == 2);
  CHECK(ConsensusLevel({5, 4, 1, 2}) == 2);
  CHECK(ConsensusLevel({3, 3, 5, 5}) == 3);
}

TEST_CASE("kappa, confusion matrix and bias equal scikit-learn's on the fixture",
          "[judge_calibration]") {
  const json expected = SklearnFigures();
  const std::map<std::string, std::vector<ScoredTwice>> fixture = ReadFixture();
  REQUIRE(fixture.size() == 2);
  const JudgeCalibration judge = CalibrateJudge(
      "judge:m", {{.id = "correctness", .levels = kScale}, {.id = "clarity", .levels = kScale}},
      fixture, std::nullopt);
  CHECK(judge.model == "m");
  CHECK(judge.overlap == 70);
  REQUIRE(judge.criteria.size() == 2);
  for (const CriterionCalibration& c : judge.criteria) {
    INFO(c.criterion);
    const json& e = expected.at(c.criterion);
    CHECK(c.overlap == e.at("answers").get<int64_t>());
    REQUIRE(c.kappa);
    CHECK(std::abs(*c.kappa - e.at("kappa").get<double>()) < 1e-9);
    CHECK(c.confusion == e.at("confusion").get<std::vector<std::vector<int64_t>>>());
    REQUIRE(c.bias);
    CHECK(std::abs(*c.bias - e.at("bias").get<double>()) < 1e-12);
    // The interval comes from resampling the same answers: it holds the estimate.
    REQUIRE(c.kappa_ci);
    CHECK(c.kappa_ci->low < *c.kappa);
    CHECK(*c.kappa < c.kappa_ci->high);
  }
  // The fixture's judge is the more generous one, more so on correctness.
  CHECK(*judge.criteria[0].bias > *judge.criteria[1].bias);
  CHECK(*judge.criteria[1].bias > 0);
}

TEST_CASE("the gate holds on min_overlap answers and not one fewer", "[judge_calibration]") {
  const JudgeGateRule gate{.model = "m", .min_kappa = 0.7, .min_overlap = 20};
  const std::vector<CriterionScale> scale = {{.id = "correctness", .levels = kScale}};
  const JudgeCalibration enough =
      CalibrateJudge("judge:m", scale, {{"correctness", Agreeing(20)}}, gate);
  CHECK(enough.calibrated);
  CHECK(enough.not_calibrated.empty());
  CHECK(GateLine(enough) ==
        "judge m calibrated: kappa lower bound >= 0.7 on every criterion, on 20 answers both "
        "scored (>= 20); it scores the answers the reviewers did not");
  const JudgeCalibration one_short =
      CalibrateJudge("judge:m", scale, {{"correctness", Agreeing(19)}}, gate);
  CHECK_FALSE(one_short.calibrated);
  CHECK(GateLine(one_short) ==
        "judge m not calibrated: overlap 19 < 20; its scores stay apart from the reviewers'");
  // A criterion the judge never scored has no overlap at all.
  const JudgeCalibration missing =
      CalibrateJudge("judge:m", {scale[0], {.id = "clarity", .levels = kScale}},
                     {{"correctness", Agreeing(20)}}, gate);
  CHECK_FALSE(missing.calibrated);
  CHECK(missing.not_calibrated ==
        std::vector<std::string>{"overlap 0 < 20",
                                 "kappa on clarity cannot be computed (fewer "
                                 "than 2 answers, or all on one level)"});
}

TEST_CASE("the gate holds at min_kappa on the interval's lower bound, not on the estimate",
          "[judge_calibration]") {
  const std::vector<CriterionScale> scale = {{.id = "correctness", .levels = kScale}};
  const std::map<std::string, std::vector<ScoredTwice>> fixture = ReadFixture();
  const std::map<std::string, std::vector<ScoredTwice>> input = {
      {"correctness", fixture.at("correctness")}};
  const JudgeCalibration measured = CalibrateJudge("judge:m", scale, input, std::nullopt);
  REQUIRE(measured.criteria[0].kappa_ci);
  const double low = measured.criteria[0].kappa_ci->low, kappa = *measured.criteria[0].kappa;
  REQUIRE(low < kappa);
  CHECK_FALSE(measured.gate);  // no quality.judge: the judge is measured, never gated

  const JudgeGateRule at_low{.model = "m", .min_kappa = low, .min_overlap = 50};
  CHECK(CalibrateJudge("judge:m", scale, input, at_low).calibrated);
  JudgeGateRule above_low = at_low;
  above_low.min_kappa = low + 1e-9;
  const JudgeCalibration failed = CalibrateJudge("judge:m", scale, input, above_low);
  CHECK_FALSE(failed.calibrated);
  // Below the estimate itself, and still refused: the lower bound decides.
  above_low.min_kappa = (low + kappa) / 2;
  const JudgeCalibration between = CalibrateJudge("judge:m", scale, input, above_low);
  CHECK_FALSE(between.calibrated);
  CHECK(between.not_calibrated ==
        std::vector<std::string>{"kappa lower bound " + FormatNumber(low, 2) + " < " +
                                 FormatNumber(above_low.min_kappa, 2) + " on correctness"});
  // The gate names another judge: this one is measured, not gated.
  above_low.model = "other";
  CHECK_FALSE(CalibrateJudge("judge:m", scale, input, above_low).gate);
  CHECK(GateLine(UnscoredJudge(at_low)) ==
        "judge m not calibrated: the judge scored no answer of this run; its scores stay apart "
        "from the reviewers'");
}

TEST_CASE("the calibration's lines and JSON carry every figure", "[judge_calibration]") {
  const JudgeGateRule gate{.model = "m", .min_kappa = 0.7, .min_overlap = 50};
  std::vector<ScoredTwice> answers = Agreeing(10);
  answers[0].judge = 2;  // consensus 1, judge 2
  const JudgeCalibration judge = CalibrateJudge(
      "judge:m", {{.id = "correctness", .levels = kScale}}, {{"correctness", answers}}, gate);
  const std::vector<std::string> lines = CalibrationLines(judge);
  REQUIRE(lines.size() == 9);
  CHECK(lines[0] ==
        "LLM judge m against the reviewers' consensus (median level), on 10 answers both scored:");
  CHECK(lines[1].rfind("  correctness: 10 answers, kappa " +
                           FormatNumber(*judge.criteria[0].kappa, 2) + " (95% bootstrap interval ",
                       0) == 0);
  CHECK(lines[1].find(", 2000 resamples), bias +0.1 (judge mean 3.1, reviewers' consensus 3)") !=
        std::string::npos);
  CHECK(lines[2] ==
        "    correctness rows: reviewers' consensus, columns: judge |    1    2    3    4    5");
  CHECK(lines[3] ==
        "                                               consensus 1 |    1    1    0    0    0");
  CHECK(lines[7] ==
        "                                               consensus 5 |    0    0    0    0    2");
  CHECK(lines[8] ==
        "  judge m not calibrated: overlap 10 < 50; its scores stay apart from the "
        "reviewers'");
  const json j = CalibrationJson(judge);
  CHECK(j["scorer"] == "judge:m");
  CHECK(j["bootstrap"]["resamples"] == 2000);
  CHECK(j["criteria"][0]["confusion_consensus_by_judge"][0] == json::array({1, 1, 0, 0, 0}));
  CHECK(j["criteria"][0]["bias"].get<double>() == Approx(0.1));
  CHECK(j["gate"]["calibrated"] == false);
  CHECK(j["gate"]["not_calibrated"] == json::array({"overlap 10 < 50"}));
}

}  // namespace
}  // namespace stagegate::quality
