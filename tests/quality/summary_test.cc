// SummarizeQuality over a store in memory: four answers scored by two reviewers and an LLM judge,
// against the run's quality thresholds.

#include "quality/summary.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/review_data.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::quality {
namespace {

using Strings = std::vector<std::string>;

using testing::Ok;
using testing::RequireOk;

// Correctness (weight 2), clarity (weight 1) and safety (hard, floor 1, weight 0), with the pass
// rule's minimum weighted mean.
std::string RubricJson(double min_weighted_mean) {
  return R"({"id":"support","criteria":[)"
         R"({"id":"correctness","weight":2,"hard":false,"floor":0,"levels":)"
         R"([{"level":1},{"level":2},{"level":3},{"level":4},{"level":5}]},)"
         R"({"id":"clarity","weight":1,"hard":false,"floor":0,"levels":)"
         R"([{"level":1},{"level":2},{"level":3},{"level":4},{"level":5}]},)"
         R"({"id":"safety","weight":0,"hard":true,"floor":1,"levels":[{"level":0},{"level":1}]}],)"
         R"("pass_rule":{"min_weighted_mean":)" +
         std::to_string(min_weighted_mean) + "}}";
}

// Levels of correctness, clarity and safety, and the seconds on the item.
struct Levels {
  int64_t correctness, clarity, safety;
  double seconds;
};

// A run whose quality section is `quality_json`, with four answers sampled: requests 1 and 2 at
// rest (stage "steady", a phase at rest), 3 and 4 under load (stage "steady"). Both reviewers score
// every answer:
//   request 1: r1 5/4/1, r2 5/4/1   weighted 14/3, passes
//   request 2: r1 4/4/1, r2 4/4/1   weighted 4, passes
//   request 3: r1 2/2/1, r2 4/2/1   weighted 8/3, below the pass rule; correctness 2 apart
//   request 4: r1 3/3/0, r2 3/3/0   weighted 3, below the hard floor of safety (with
//              `request_4_safety` 1: 3/3/1, passes)
// r1 spends 10, 20, 30 and 40 s an item, r2 60 s. An LLM judge, exported later with a stricter
// pass rule, scores request 1 only: 3/3/1.
struct ScoredRun {
  std::unique_ptr<store::Store> store = Ok(store::Store::OpenInMemory());
  store::RunInfo run;

  explicit ScoredRun(const std::string& quality_json, int64_t request_4_safety = 0) {
    run = {.id = "run-q",
           .scenario_name = "quality",
           .scenario_file = "quality.yaml",
           .fingerprint = "sha256:q",
           .scenario_json = R"({"name":"quality","quality":)" + quality_json + "}",
           .started_unix_ms = 1};
    RequireOk(store->CreateRun(run));
    const int64_t at_rest = Ok(store->AddPhase(
        {.run_id = run.id, .ordinal = 1, .stage = "steady", .phase = "steady", .at_rest = true}));
    const int64_t under_load =
        Ok(store->AddPhase({.run_id = run.id, .ordinal = 2, .stage = "steady", .phase = "load"}));
    std::vector<load::RequestRecord> records;
    for (int64_t n = 1; n <= 4; ++n) {
      load::RequestRecord r;
      r.run_id = run.id;
      r.phase_id = n <= 2 ? at_rest : under_load;
      r.sequence = n;
      r.task_id = "task-" + std::to_string(n);
      r.outcome = load::Outcome::kOk;
      r.answer_text = "answer " + std::to_string(n);
      records.push_back(r);
    }
    RequireOk(store->AddRequests(records));
    RequireOk(store->AddAnswers(run.id, "at_rest", {{at_rest, 1}, {at_rest, 2}}));
    RequireOk(store->AddAnswers(run.id, "under_load", {{under_load, 3}, {under_load, 4}}));

    const int64_t safety = request_4_safety;
    const std::map<std::string, std::vector<Levels>> levels = {
        {"r1", {{5, 4, 1, 10}, {4, 4, 1, 20}, {2, 2, 1, 30}, {3, 3, safety, 40}}},
        {"r2", {{5, 4, 1, 60}, {4, 4, 1, 60}, {4, 2, 1, 60}, {3, 3, safety, 60}}}};
    std::vector<store::ReviewItem> items;
    std::vector<store::Score> scores;
    for (const auto& [reviewer, of_reviewer] : levels)
      for (int64_t request = 1; request <= 4; ++request) {
        const std::string item = "i-" + reviewer + "-" + std::to_string(request);
        items.push_back({.item_id = item, .request_id = request, .reviewer = reviewer});
        const Levels& l = of_reviewer[static_cast<size_t>(request - 1)];
        for (auto [criterion, value] :
             {std::pair<std::string, int64_t>{"correctness", l.correctness},
              {"clarity", l.clarity},
              {"safety", l.safety}})
          scores.push_back(
              {.item_id = item,
               .reviewer = reviewer,
               .criterion = criterion,
               .value = value,
               // The item's time on one criterion only, as a page may record it.
               .seconds = criterion == "correctness" ? std::optional(l.seconds) : std::nullopt,
               .imported_unix_ms = 2});
      }
    RequireOk(store->AddExport({.export_id = "x-1",
                                .run_id = run.id,
                                .created_unix_ms = 1000,
                                .reviewers = 2,
                                .per_item = 2,
                                .rubric_json = RubricJson(3)},
                               items));
    RequireOk(store->AddScores(scores));

    std::vector<store::Score> judged;
    for (auto [criterion, value] :
         {std::pair<std::string, int64_t>{"correctness", 3}, {"clarity", 3}, {"safety", 1}})
      judged.push_back({.item_id = "j-1",
                        .reviewer = "judge",
                        .criterion = criterion,
                        .value = value,
                        .source = "judge",
                        .imported_unix_ms = 3});
    RequireOk(store->AddExport({.export_id = "judge-1",
                                .run_id = run.id,
                                .created_unix_ms = 2000,
                                .reviewers = 1,
                                .per_item = 1,
                                .rubric_json = RubricJson(4.5),
                                .scorer = "judge:m"},
                               {{.item_id = "j-1", .request_id = 1, .reviewer = "judge"}}, judged));
  }
};

const GroupScores& Group(const QualitySummary& s, const std::string& name) {
  auto found = std::find_if(s.groups.begin(), s.groups.end(),
                            [&](const GroupScores& g) { return g.name == name; });
  INFO("group " << name);
  REQUIRE(found != s.groups.end());
  return *found;
}

TEST_CASE("SummarizeQuality groups, agrees, times and judges the reviewers' scores",
          "[quality][summary]") {
  ScoredRun scored(
      R"({"min_scored_answers":2,"min_agreement":0.4,"min_mean":3,"min_pass_rate":0.5,)"
      R"("criterion_floors":{"clarity":3}})");

  const QualitySummary s = Ok(SummarizeQuality(*scored.store, scored.run, nullptr));

  CHECK(s.sampled == 4);
  CHECK(s.assigned == 4);
  CHECK(s.scored == 4);
  CHECK(s.reviewers == 2);
  REQUIRE(s.answer_scores.size() == 4u);
  CHECK(s.answer_scores[0] == Approx(14.0 / 3));
  CHECK(s.answer_scores[2] == Approx(8.0 / 3));

  Strings names;
  for (const GroupScores& g : s.groups)
    names.push_back(g.name);
  CHECK(names == Strings{"all", "at_rest", "under_load", "stage steady"});
  const GroupScores& all = Group(s, "all");
  CHECK(all.answers == 4);
  CHECK(all.passed == 2);  // the reviewers' pass rule, not the judge's stricter one
  CHECK(all.weighted_mean.value_or(-1) == Approx((14.0 / 3 + 4 + 8.0 / 3 + 3) / 4));
  CHECK(all.mean.at("correctness") == Approx(3.75));
  const GroupScores& at_rest = Group(s, "at_rest");
  CHECK(at_rest.answers == 2);
  CHECK(at_rest.passed == 2);
  CHECK(at_rest.mean.at("clarity") == Approx(4));
  const GroupScores& under_load = Group(s, "under_load");
  CHECK(under_load.answers == 2);
  CHECK(under_load.passed == 0);
  CHECK(under_load.hard_floor_failures == 1);
  CHECK(under_load.weighted_mean.value_or(-1) == Approx((8.0 / 3 + 3) / 2));
  CHECK(Group(s, "stage steady").answers == 4);

  REQUIRE(s.agreement.size() == 3u);
  CHECK(s.agreement[0].criterion == "correctness");
  CHECK(s.agreement[0].units == 4);
  // Quadratic weights over levels 1-5: disagreement observed 0.0625, expected by chance 0.125.
  CHECK(s.agreement[0].kappa.value_or(-1) == Approx(0.5));
  CHECK(s.agreement[1].kappa.value_or(-1) == Approx(1));
  REQUIRE(s.adjudication.size() == 1u);
  CHECK(s.adjudication[0].request_id == 3);
  CHECK(s.adjudication[0].task_id == "task-3");
  CHECK(s.adjudication[0].criterion == "correctness");
  CHECK(s.adjudication[0].ratings == std::map<std::string, int64_t>{{"r1", 2}, {"r2", 4}});

  REQUIRE(s.effort.size() == 3u);
  CHECK(s.effort[0].reviewer == "r1");
  CHECK(s.effort[0].items == 4);
  CHECK(s.effort[0].total_s == Approx(100));
  CHECK(s.effort[0].median_s.value_or(-1) == Approx(25));
  CHECK(s.effort[1].reviewer == "r2");
  CHECK(s.effort[1].total_s == Approx(240));
  CHECK(s.effort[2].reviewer == "all");
  CHECK(s.effort[2].items == 8);
  CHECK(s.effort[2].median_s.value_or(-1) == Approx(50));

  REQUIRE(s.judges.size() == 1u);
  CHECK(s.judges[0].name == "judge:m");
  CHECK(s.judges[0].answers == 1);
  CHECK(s.judges[0].weighted_mean.value_or(-1) == Approx(3));
  CHECK(s.judges[0].passed == 1);

  CHECK(s.verdict == QualityVerdict::kFail);
  CHECK(s.reasons == Strings{"under load: mean score 2.83 < 3", "under load: pass rate 0 < 0.5",
                             "under load: clarity mean 2.5 < 3",
                             "under load: 1 answers below the floor of a hard criterion"});
  CHECK(s.pending_reasons == 0);  // every reason is a failure
  CHECK_FALSE(s.Provisional());   // 4 scored, 2 needed
  CHECK(s.provisional_misses.empty());
  for (const std::string& line : QualityLines(s))
    CHECK(line.find("provisional") == std::string::npos);
  CHECK(s.notes ==
        Strings{"automated checks not run: the run's scenario and corpus could not be read"});
}

TEST_CASE("SummarizeQuality reads min_mean and min_pass_rate of null as not set",
          "[quality][summary]") {
  // What the canonical scenario stores for a quality section without them.
  ScoredRun scored(
      R"({"min_scored_answers":2,"min_agreement":0.4,"min_mean":null,"min_pass_rate":null,)"
      R"("criterion_floors":{"correctness":4,"clarity":null}})");

  const Result<QualitySummary> s = SummarizeQuality(*scored.store, scored.run, nullptr);

  INFO(s.status().message());
  REQUIRE(s.ok());
  CHECK(s->scored == 4);
  CHECK(s->verdict == QualityVerdict::kFail);
  CHECK(s->reasons == Strings{"under load: correctness mean 3 < 4",
                              "under load: 1 answers below the floor of a hard criterion"});
}

TEST_CASE("SummarizeQuality takes the default of a threshold that is null or not a number",
          "[quality][summary]") {
  // Defaults: 30 answers scored, agreement 0.6, no minimum mean, pass rate or floor.
  const std::string quality =
      GENERATE(std::string("null"), std::string("[]"),
               std::string(R"({"min_scored_answers":null,"min_agreement":"high","min_mean":"3",)"
                           R"("min_pass_rate":[0.5],"criterion_floors":null})"),
               std::string(R"({"criterion_floors":{"correctness":"4","clarity":{}}})"));
  INFO("quality: " << quality);
  ScoredRun scored(quality);

  const Result<QualitySummary> s = SummarizeQuality(*scored.store, scored.run, nullptr);

  INFO(s.status().message());
  REQUIRE(s.ok());
  CHECK(s->needed == 30);
  // Too few scored: the agreement is provisional, the answer below a hard floor final.
  CHECK(s->verdict == QualityVerdict::kFail);
  CHECK(s->reasons == Strings{"4 answers are fully scored; at least 30 are needed",
                              "final: answer 4 (task-4) is below the hard floor of safety (0 < 1); "
                              "no further score can change that"});
  CHECK(s->provisional_misses ==
        Strings{"provisional: from 4 of the 30 answers needed: reviewers do not agree enough on "
                "correctness (kappa 0.5 < 0.6), so its scores cannot decide"});
}

TEST_CASE("SummarizeQuality is pending, not failed, while too few answers are scored",
          "[quality][summary]") {
  // 4 answers scored of the 40 needed, none below a hard floor; every threshold but the pass rate
  // missed so far.
  ScoredRun scored(
      R"({"min_scored_answers":40,"min_agreement":0.6,"min_mean":3,"min_pass_rate":0.5,)"
      R"("criterion_floors":{"clarity":3}})",
      /*request_4_safety=*/1);

  const QualitySummary s = Ok(SummarizeQuality(*scored.store, scored.run, nullptr));

  CHECK(s.scored == 4);
  CHECK(s.needed == 40);
  CHECK(s.Provisional());
  CHECK(s.ProvisionalLabel() == "provisional: from 4 of the 40 answers needed");
  CHECK(s.verdict == QualityVerdict::kPending);
  CHECK(s.reasons == Strings{"4 answers are fully scored; at least 40 are needed"});
  CHECK(s.pending_reasons == 1);  // the report keeps it pending
  CHECK(s.provisional_misses ==
        Strings{"provisional: from 4 of the 40 answers needed: reviewers do not agree enough on "
                "correctness (kappa 0.5 < 0.6), so its scores cannot decide",
                "provisional: from 4 of the 40 answers needed: under load: mean score 2.83 < 3",
                "provisional: from 4 of the 40 answers needed: under load: clarity mean 2.5 < 3"});

  const Strings lines = QualityLines(s);
  REQUIRE(lines.size() >= 3u);
  CHECK(lines[0] == "quality: pending (4 of 4 sampled answers fully scored by 2 reviewers)");
  CHECK(lines[1] == "  4 answers are fully scored; at least 40 are needed");
  CHECK(lines[2] ==
        "  provisional: from 4 of the 40 answers needed: reviewers do not agree enough on "
        "correctness (kappa 0.5 < 0.6), so its scores cannot decide (not a failure: more scores "
        "can change it)");
  // Every figure of the scores says what it rests on.
  int figures = 0;
  for (const std::string& line : lines) {
    if (!line.starts_with("  all:") && !line.starts_with("  at_rest:") &&
        !line.starts_with("  under_load:") && !line.starts_with("  stage ") &&
        !line.starts_with("  agreement "))
      continue;
    INFO(line);
    CHECK(line.ends_with(" (provisional: from 4 of the 40 answers needed)"));
    ++figures;
  }
  CHECK(figures == 7);  // 4 groups, agreement on each of the 3 criteria

  const nlohmann::json json = QualityToJson(s);
  CHECK(json["verdict"] == "pending");
  CHECK(json["answers"]["needed"] == 40);
  CHECK(json["provisional"] == true);
  CHECK(json["provisional_misses"].size() == 3u);
}

TEST_CASE("SummarizeQuality fails while too few are scored only on an answer below a hard floor",
          "[quality][summary]") {
  ScoredRun scored(
      R"({"min_scored_answers":40,"min_agreement":0.6,"min_mean":3,"min_pass_rate":0.5,)"
      R"("criterion_floors":{"clarity":3}})");

  const QualitySummary s = Ok(SummarizeQuality(*scored.store, scored.run, nullptr));

  CHECK(s.verdict == QualityVerdict::kFail);
  CHECK(s.reasons == Strings{"4 answers are fully scored; at least 40 are needed",
                             "final: answer 4 (task-4) is below the hard floor of safety (0 < 1); "
                             "no further score can change that"});
  CHECK(s.pending_reasons == 1);  // what is still missing stays pending beside the failure
  // The rest is provisional, and the answer below the floor is not counted twice.
  CHECK(s.provisional_misses ==
        Strings{"provisional: from 4 of the 40 answers needed: reviewers do not agree enough on "
                "correctness (kappa 0.5 < 0.6), so its scores cannot decide",
                "provisional: from 4 of the 40 answers needed: under load: mean score 2.83 < 3",
                "provisional: from 4 of the 40 answers needed: under load: pass rate 0 < 0.5",
                "provisional: from 4 of the 40 answers needed: under load: clarity mean 2.5 < 3"});
  const nlohmann::json json = QualityToJson(s);
  CHECK(json["reasons"][1].get<std::string>().starts_with("final: answer 4 (task-4)"));
}

TEST_CASE("SummarizeQuality is pending before anything is exported", "[quality][summary]") {
  std::unique_ptr<store::Store> store = Ok(store::Store::OpenInMemory());
  const store::RunInfo run = {.id = "run-e",
                              .scenario_name = "quality",
                              .scenario_file = "quality.yaml",
                              .fingerprint = "sha256:e",
                              .scenario_json = "{}",
                              .started_unix_ms = 1};
  RequireOk(store->CreateRun(run));

  const QualitySummary s = Ok(SummarizeQuality(*store, run, nullptr));

  CHECK(s.verdict == QualityVerdict::kPending);
  CHECK(s.reasons ==
        Strings{"no answers have been exported for review yet (stagegate export run-e)"});
  CHECK(s.pending_reasons == 1);  // the report keeps it pending, not failed
  CHECK(s.sampled == 0);
}

TEST_CASE("SummarizeQuality reads the reviewers' usability judgements and hours",
          "[quality][summary][correction]") {
  ScoredRun scored(R"({"min_scored_answers":2})");
  RequireOk(scored.store->AddUsability(
      {{.item_id = "i-r1-1", .reviewer = "r1", .usability = "as_is", .imported_unix_ms = 4},
       {.item_id = "i-r2-1",
        .reviewer = "r2",
        .usability = "corrected",
        .corrected_text = "fixed",
        .correction_seconds = 30,
        .imported_unix_ms = 4},
       {.item_id = "i-r1-2", .reviewer = "r1", .usability = "unusable", .imported_unix_ms = 4},
       // An LLM judge's item is not a reviewer's: never counted.
       {.item_id = "j-1", .reviewer = "judge", .usability = "as_is", .imported_unix_ms = 4}}));
  const QualitySummary s = Ok(SummarizeQuality(*scored.store, scored.run, nullptr));
  REQUIRE(s.correction.by_source.size() == 1);
  const CorrectionFigures& f = s.correction.by_source[0];
  CHECK(f.source == "assistant");
  CHECK(f.judgements == 3);
  CHECK(f.as_is == 1);
  CHECK(f.corrected == 1);
  CHECK(f.unusable == 1);
  CHECK(*f.median_correction_s == 30);
  CHECK(*f.minutes_per_100 == Approx(30.0 / 3 * 100 / 60));
  // r1 10 + 20 + 30 + 40 s, r2 4 x 60 s: 340 s over the 4 scored answers, 4 sampled.
  CHECK(s.correction.reviewing.hours == Approx(340.0 / 3600));
  CHECK(s.correction.reviewing.scored_answers == 4);
  CHECK(s.correction.reviewing.sampled_answers == 4);
  CHECK(*s.correction.reviewing.projected_hours == Approx(340.0 / 3600));
  CHECK(QualityToJson(s)["correction"]["by_source"][0]["judgements"] == 3);
  const Strings lines = QualityLines(s);
  CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& line) {
          return line.starts_with(
              "  usability, assistant (3 reviewer judgements): usable as it "
              "is 0.33");
        }) == 1);
}

}  // namespace
}  // namespace stagegate::quality
