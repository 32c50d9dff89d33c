// SummarizeQuality with an LLM judge beside the reviewers: the calibration is shown, and the
// judge's scores of answers the reviewers did not score count only when quality.judge's gate
// holds, each figure saying who scored.

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "quality/summary.h"
#include "store/review_data.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::quality {
namespace {

using testing::Ok;
using testing::RequireOk;

// One criterion, correctness on 1-5, and an answer passes at a mean of 3.
const char* kRubric =
    R"({"id":"support","criteria":[{"id":"correctness","weight":1,"hard":false,"floor":0,)"
    R"("levels":[{"level":1},{"level":2},{"level":3},{"level":4},{"level":5}]}],)"
    R"("pass_rule":{"min_weighted_mean":3}})";

// Twelve answers at rest. Reviewers r1 and r2 both score answers 1-8 (levels 1, 2, 3, 4, 5, 1,
// 2, 3, the same from both); the judge "m" scores all twelve: the reviewers' level on 1-8, and
// 5, 5, 5, 1 on 9-12, which no reviewer scored. With `answer_9_reviewed_by` at 1 or 2, answer 9
// is also given to r1 and r2, and that many of them (r1 first) score it 1.
struct JudgedRun {
  std::unique_ptr<store::Store> store = Ok(store::Store::OpenInMemory());
  store::RunInfo run;

  explicit JudgedRun(const std::string& quality_json, int answer_9_reviewed_by = 0) {
    run = {.id = "run-j",
           .scenario_name = "judged",
           .scenario_file = "judged.yaml",
           .fingerprint = "sha256:j",
           .scenario_json = R"({"name":"judged","quality":)" + quality_json + "}",
           .started_unix_ms = 1};
    RequireOk(store->CreateRun(run));
    const int64_t phase = Ok(store->AddPhase(
        {.run_id = run.id, .ordinal = 1, .stage = "bare", .phase = "steady", .at_rest = true}));
    std::vector<load::RequestRecord> records;
    std::vector<std::pair<int64_t, int64_t>> sampled;
    for (int64_t n = 1; n <= 12; ++n) {
      load::RequestRecord r;
      r.run_id = run.id;
      r.phase_id = phase;
      r.sequence = n;
      r.task_id = "task-" + std::to_string(n);
      r.outcome = load::Outcome::kOk;
      r.answer_text = "answer " + std::to_string(n);
      records.push_back(r);
      sampled.push_back({phase, n});
    }
    RequireOk(store->AddRequests(records));
    RequireOk(store->AddAnswers(run.id, "at_rest", sampled));

    const std::vector<int64_t> levels = {1, 2, 3, 4, 5, 1, 2, 3, 5, 5, 5, 1};
    std::vector<store::ReviewItem> items;
    std::vector<store::Score> scores;
    for (const std::string reviewer : {"r1", "r2"})
      for (int64_t request = 1; request <= 8; ++request) {
        const std::string item = "i-" + reviewer + "-" + std::to_string(request);
        items.push_back({.item_id = item, .request_id = request, .reviewer = reviewer});
        scores.push_back({.item_id = item,
                          .reviewer = reviewer,
                          .criterion = "correctness",
                          .value = levels[static_cast<size_t>(request - 1)],
                          .imported_unix_ms = 2});
      }
    for (int n = 0; answer_9_reviewed_by > 0 && n < 2; ++n) {
      const std::string reviewer = n == 0 ? "r1" : "r2", item = "i-" + reviewer + "-9";
      items.push_back({.item_id = item, .request_id = 9, .reviewer = reviewer});
      if (n < answer_9_reviewed_by)
        scores.push_back({.item_id = item,
                          .reviewer = reviewer,
                          .criterion = "correctness",
                          .value = 1,
                          .imported_unix_ms = 2});
    }
    RequireOk(store->AddExport({.export_id = "x-1",
                                .run_id = run.id,
                                .created_unix_ms = 1000,
                                .reviewers = 2,
                                .per_item = 2,
                                .rubric_json = kRubric},
                               items));
    RequireOk(store->AddScores(scores));

    std::vector<store::ReviewItem> judge_items;
    std::vector<store::Score> judged;
    for (int64_t request = 1; request <= 12; ++request) {
      const std::string item = "j-" + std::to_string(request);
      judge_items.push_back({.item_id = item, .request_id = request, .reviewer = "judge"});
      judged.push_back({.item_id = item,
                        .reviewer = "judge",
                        .criterion = "correctness",
                        .value = levels[static_cast<size_t>(request - 1)],
                        .source = "judge",
                        .imported_unix_ms = 3});
    }
    RequireOk(store->AddExport({.export_id = "judge-1",
                                .run_id = run.id,
                                .created_unix_ms = 2000,
                                .reviewers = 1,
                                .per_item = 1,
                                .rubric_json = kRubric,
                                .scorer = "judge:m"},
                               judge_items, judged));
  }
};

bool HasLine(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST_CASE("a calibrated judge's scores count for the answers reviewers did not score, labelled",
          "[judge_calibration]") {
  JudgedRun judged(R"({"min_scored_answers":10,"min_agreement":0.5,)"
                   R"("judge":{"model":"m","min_kappa":0.7,"min_overlap":8}})");
  const QualitySummary s = Ok(SummarizeQuality(*judged.store, judged.run, nullptr));
  REQUIRE(s.calibration.size() == 1);
  const JudgeCalibration& c = s.calibration[0];
  CHECK(c.overlap == 8);
  CHECK(c.criteria[0].kappa == 1);
  REQUIRE(c.criteria[0].kappa_ci);
  CHECK(c.criteria[0].kappa_ci->low == 1);
  CHECK(c.calibrated);

  CHECK(s.scored == 12);
  CHECK(s.scored_by_judge == 4);
  CHECK(s.judge_model == "m");
  CHECK(s.groups[0].name == "all");
  CHECK(s.groups[0].answers == 12);
  CHECK(s.groups[0].by_judge == 4);
  CHECK(s.groups[0].passed == 7);             // 3, 4, 5, 3 by the reviewers; 5, 5, 5 by the judge
  CHECK(s.verdict == QualityVerdict::kPass);  // 12 >= 10 scored, with the judge's 4

  const std::vector<std::string> lines = QualityLines(s);
  CHECK(lines[0] ==
        "quality: pass (12 of 12 sampled answers fully scored: 8 by 2 reviewers, 4 by the "
        "calibrated judge m)");
  CHECK(HasLine(lines, "  all: 12 answers (8 by reviewers, 4 by the judge m), mean 3.08 [" +
                           FormatNumber(s.groups[0].weighted_mean_ci->low, 2) + ", " +
                           FormatNumber(s.groups[0].weighted_mean_ci->high, 2) +
                           "], pass rate 0.58"));
  CHECK(HasLine(lines,
                "  judge m calibrated: kappa lower bound >= 0.7 on every criterion, on 8 answers "
                "both scored (>= 8); it scores the answers the reviewers did not"));
  const nlohmann::json j = QualityToJson(s);
  CHECK(j["answers"]["scored_by_reviewers"] == 8);
  CHECK(j["answers"]["scored_by_judge"] == 4);
  CHECK(j["answers"]["judge"] == "m");
  CHECK(j["groups"][0]["by_judge"] == 4);
  CHECK(j["judge_calibration"][0]["gate"]["calibrated"] == true);
}

TEST_CASE("an answer waiting for one of its reviewers is the calibrated judge's until both scored",
          "[judge_calibration]") {
  // min_kappa -1: the gate holds whatever answer 9 does to kappa, so only who scored it changes.
  const std::string quality =
      R"({"min_scored_answers":10,"judge":{"model":"m","min_kappa":-1,"min_overlap":8}})";
  JudgedRun waiting(quality, 1);
  const QualitySummary s = Ok(SummarizeQuality(*waiting.store, waiting.run, nullptr));
  REQUIRE(s.calibration.size() == 1);
  CHECK(s.calibration[0].calibrated);
  CHECK(s.calibration[0].overlap == 8);  // r1's level alone is no consensus yet
  CHECK(s.scored == 12);
  CHECK(s.scored_by_judge == 4);
  CHECK(s.groups[0].passed == 7);  // answer 9 passes on the judge's 5, not r1's 1

  JudgedRun reviewed(quality, 2);
  const QualitySummary both = Ok(SummarizeQuality(*reviewed.store, reviewed.run, nullptr));
  CHECK(both.calibration[0].overlap == 9);
  CHECK(both.calibration[0].calibrated);
  CHECK(both.scored == 12);
  CHECK(both.scored_by_judge == 3);
  CHECK(both.groups[0].passed == 6);  // answer 9 now fails on the reviewers' 1
  CHECK(QualityLines(both)[0] ==
        "quality: pass (12 of 12 sampled answers fully scored: 9 by 2 reviewers, 3 by the "
        "calibrated judge m)");
}

TEST_CASE("an uncalibrated judge's scores stay apart and the report says why",
          "[judge_calibration]") {
  SECTION("too few answers both scored") {
    JudgedRun judged(
        R"({"min_scored_answers":10,"judge":{"model":"m","min_kappa":0.7,"min_overlap":9}})");
    const QualitySummary s = Ok(SummarizeQuality(*judged.store, judged.run, nullptr));
    CHECK(s.scored == 8);
    CHECK(s.scored_by_judge == 0);
    CHECK(s.groups[0].answers == 8);
    CHECK(s.groups[0].by_judge == 0);
    CHECK(s.verdict == QualityVerdict::kPending);  // 8 < 10: the judge does not make up for it
    const std::vector<std::string> lines = QualityLines(s);
    CHECK(lines[0] == "quality: pending (8 of 12 sampled answers fully scored by 2 reviewers)");
    CHECK(HasLine(lines,
                  "  judge m not calibrated: overlap 8 < 9; its scores stay apart from "
                  "the reviewers'"));
    CHECK(QualityToJson(s)["answers"]["scored_by_judge"] == 0);
  }
  SECTION("the scenario names a judge that did not score") {
    JudgedRun judged(R"({"min_scored_answers":10,"judge":{"model":"other","min_kappa":0.7,)"
                     R"("min_overlap":8}})");
    const QualitySummary s = Ok(SummarizeQuality(*judged.store, judged.run, nullptr));
    CHECK(s.scored == 8);
    REQUIRE(s.calibration.size() == 2);
    CHECK_FALSE(s.calibration[0].gate);  // m is measured all the same
    CHECK(s.calibration[0].overlap == 8);
    CHECK(GateLine(s.calibration[1]) ==
          "judge other not calibrated: the judge scored no answer of this run; its scores stay "
          "apart from the reviewers'");
  }
  SECTION("no quality.judge: measured, never counted") {
    JudgedRun judged(R"({"min_scored_answers":10})");
    const QualitySummary s = Ok(SummarizeQuality(*judged.store, judged.run, nullptr));
    CHECK(s.scored == 8);
    REQUIRE(s.calibration.size() == 1);
    CHECK(s.calibration[0].criteria[0].kappa == 1);
    CHECK_FALSE(s.calibration[0].calibrated);
  }
}

}  // namespace
}  // namespace stagegate::quality
