// The rates of a judged level: its sustained rate, answered rate, goodput and output tokens, and
// the cost and energy drawn from them at the capacity, all over one window and one set of counts.

#include "scenario/level_judge.h"

#include <catch2/catch.hpp>

#include <vector>

#include "quality/summary.h"
#include "report/cost.h"
#include "scenario/capacity_search.h"
#include "store/findings.h"

namespace stagegate::scenario {
namespace {

constexpr int64_t kPhaseStartNs = 5'000'000'000;
constexpr int64_t kMs = 1'000'000;

// A level at 10 req/s for 12 s (120 arrivals, 0.1 s apart) against an application that answers
// in 0.8 s (TTFT 200 ms, 30 tokens), denies every tenth request (a task the corpus expects it to
// deny, in 50 ms) and answers every 25th from the 12th slowly (TTFT 1.2 s, 1.5 s, 40 tokens).
std::vector<load::RequestRecord> Records() {
  std::vector<load::RequestRecord> records;
  for (int64_t i = 0; i < 120; ++i) {
    load::RequestRecord r{.phase_id = 1, .sequence = i, .task_id = "hr-leave"};
    r.intended_ns = kPhaseStartNs + i * 100 * kMs;
    r.sent_ns = r.intended_ns + kMs;
    if (i % 10 == 9) {
      r.task_id = "hr-salary";
      r.outcome = load::Outcome::kDenied;
      r.http_status = 403;
      r.end_ns = *r.sent_ns + 50 * kMs;
    } else {
      const bool slow = i % 25 == 12;
      r.first_token_ns = *r.sent_ns + (slow ? 1200 : 200) * kMs;
      r.end_ns = *r.sent_ns + (slow ? 1500 : 800) * kMs;
      r.output_tokens = slow ? 40 : 30;
      r.outcome = load::Outcome::kOk;
    }
    records.push_back(std::move(r));
  }
  return records;
}

LevelCriteria Criteria() {
  LevelCriteria c;
  c.thresholds.latency = {
      {.metric = manifest::LatencyMetric::kTtft, .percentile = 95, .max_ms = 1000}};
  c.refusal_tasks = {"hr-salary"};
  c.duration_s = 10;
  return c;
}

LevelJudgement Judge(const std::vector<load::RequestRecord>& records) {
  const LevelCriteria criteria = Criteria();
  const load::PhaseMetrics metrics = load::ComputeMetrics(records, SlosOf(criteria.thresholds));
  return JudgeLevel(records, metrics, {}, criteria, /*open_loop=*/true, kPhaseStartNs);
}

// By hand: the first fifth (24 arrivals) took at most 1.501 s to end (the slow 12th), so the
// window is the 11.9 s - 1.501 s = 10.399 s that had that long to end before the last arrival:
// arrivals 0 to 103, all ended by 11.9 s. Of them 10 were expected denials, 94 answers, 4 of
// them slow (12, 37, 62, 87): 90 within the SLO, 90 x 30 + 4 x 40 = 2,860 output tokens.
constexpr double kSpan = 11.9 - 1.501;

TEST_CASE("every rate of a level divides its own counts by one window", "[scenario][capacity]") {
  const std::vector<load::RequestRecord> records = Records();
  const LevelJudgement j = Judge(records);
  INFO(j.reason);
  CHECK(j.verdict == LevelVerdict::kPass);
  const stats::RateWindow& w = j.rates;
  CHECK(w.arrivals);
  CHECK(w.from_s == 0);
  CHECK(w.to_s == Approx(kSpan).epsilon(1e-12));
  CHECK(w.arrived == 104);
  CHECK(w.completed == 104);
  CHECK(w.answered == 94);
  CHECK(w.met_slos == 90);
  CHECK(w.output_tokens == 2860);
  REQUIRE(j.completed_rate);
  CHECK(*j.completed_rate == Approx(104 / kSpan).epsilon(1e-12));

  const stats::LevelOutcome outcome = OutcomeOf(10, j);
  CHECK(outcome.sustained_rate == j.completed_rate);
  CHECK(outcome.goodput == Approx(90 / kSpan).epsilon(1e-12));
  CHECK(outcome.output_tokens_per_s == Approx(2860 / kSpan).epsilon(1e-12));

  // The phase's own throughput runs from the first send to the last end (12.7 s), drain and
  // all (the slow 112th ends at 12.701 s): 108 answers in it give 8.5 req/s where the window
  // gives 9.04.
  const load::PhaseMetrics metrics = load::ComputeMetrics(records, SlosOf(Criteria().thresholds));
  CHECK(metrics.window_s == Approx(12.7).epsilon(1e-12));
  CHECK(metrics.request_throughput == Approx(108 / 12.7).epsilon(1e-12));
}

TEST_CASE("the capacity line, the stored finding and the cost quote one window",
          "[scenario][capacity]") {
  const LevelJudgement j = Judge(Records());
  SweepResult sweep;
  sweep.outcomes = {OutcomeOf(10, j)};
  sweep.finding = stats::FindCapacity(sweep.outcomes);
  CHECK(stats::DescribeCapacityRates(sweep.finding, "req/s") ==
        "at 10 req/s: 9.04 answered req/s and 0.96 expected denials/s, goodput 8.65 req/s, 275 "
        "output tokens/s (the 104 requests that arrived in its first 10.4 s and ended by its last "
        "arrival)");

  // Stored as run.json keeps it, read back as every report reads it.
  nlohmann::json step = {{"phase", "sweep"},
                         {"level", 10},
                         {"level_unit", "req/s"},
                         {"requests", {{"completed", 108}}},
                         {"throughput", {{"request_throughput", 108 / 12.6}, {"window_s", 12.6}}},
                         {"metrics", nlohmann::json::object()}};
  nlohmann::json findings = {
      {"schema_version", store::kFindingsSchemaVersion},
      {"stages",
       {{{"name", "full"},
         {"skipped", false},
         {"steps", {step}},
         {"capacity", CapacityJson(sweep, /*closed_loop=*/false, /*search=*/false)}}}}};
  const store::RunFindings read = store::ParseFindings(findings.dump());
  INFO(findings.dump());
  REQUIRE(read.FinalStage());
  REQUIRE(read.FinalStage()->capacity);
  REQUIRE(read.FinalStage()->capacity->window);
  CHECK(read.FinalStage()->capacity->window->answered == 94);

  const report::CostFigures cost = report::ComputeCost(std::nullopt, read, {});
  REQUIRE(cost.rates.size() == 2);
  REQUIRE(cost.rates[0].rate);
  CHECK(*cost.rates[0].rate == Approx(94 / kSpan).epsilon(1e-12));
  CHECK(cost.rates[0].counted == "answered");
  CHECK(cost.rates[0].basis ==
        "94 requests answered (and 10 expected denials not counted) of the 104 that arrived in "
        "the first 10.4 s of the final stage's (full) sweep level at 10 req/s offered, the highest "
        "it sustained, the window of its sustained rate");
  const report::CostText text = report::DescribeCost(cost);
  bool quoted = false;
  for (const std::string& fact : text.facts)
    quoted |= fact.rfind(
                  "Cost at the sustained capacity (r = 9.039 answered req/s, 94 requests "
                  "answered",
                  0) == 0 &&
              fact.find("): 110.6 instance-seconds per 1,000 answered") != std::string::npos;
  INFO(text.facts.size());
  CHECK(quoted);
}

}  // namespace
}  // namespace stagegate::scenario
