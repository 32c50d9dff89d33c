// The report's cost per accepted answer, checked against a hand computation from a stored run
// with imported scores: the run.json of a real run (tests/testdata/report/golden/report-test),
// its canonical scenario with a cost section added, and reviewers' scores made here so that 9 of
// 12 answers pass the rubric.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "report/model.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

std::string Golden(const std::string& name) {
  return testing::Testdata("report/golden/" + name);
}

constexpr int kAnswers = 12;
constexpr int kAccepted = 9;  // the first 9 answers pass the rubric, the last 3 do not

// 12 answered requests of the steady phase of stage "full", sampled for review half at rest and
// half under load.
void AddAnswered(store::Store& s, const std::string& run_id) {
  Result<int64_t> phase = s.AddPhase({.run_id = run_id,
                                      .ordinal = 0,
                                      .stage = "full",
                                      .phase = "steady",
                                      .level = 4,
                                      .status = store::PhaseStatus::kComplete});
  REQUIRE(phase.ok());
  REQUIRE(s.FinishPhase(*phase, 0, 10'000'000'000, store::PhaseStatus::kComplete).ok());
  std::vector<load::RequestRecord> records;
  std::vector<std::pair<int64_t, int64_t>> answered;
  for (int i = 0; i < kAnswers; ++i) {
    load::RequestRecord r{.run_id = run_id,
                          .phase_id = *phase,
                          .sequence = i,
                          .task_id = "task-" + std::to_string(i),
                          .intended_ns = int64_t{250'000'000} * i,
                          .sent_ns = int64_t{250'000'000} * i};
    r.first_token_ns = *r.sent_ns + 100'000'000;
    r.end_ns = *r.first_token_ns + 400'000'000;
    r.http_status = 200;
    r.answer_text = "Answer " + std::to_string(i);
    records.push_back(std::move(r));
    answered.push_back({*phase, i});
  }
  REQUIRE(s.AddRequests(records).ok());
  const std::vector<std::pair<int64_t, int64_t>> rest(answered.begin(), answered.begin() + 6);
  const std::vector<std::pair<int64_t, int64_t>> load(answered.begin() + 6, answered.end());
  REQUIRE(s.AddAnswers(run_id, "at_rest", rest).ok());
  REQUIRE(s.AddAnswers(run_id, "under_load", load).ok());
}

// Two reviewers score alike the first `count` answers: 4 on every weighted criterion for the first
// 9 answers (a weighted mean of 4, above the rubric's 3.5), 3 for the rest (3, below it);
// permission safety 1.
void AddScores(store::Store& s, const std::string& run_id, size_t count = kAnswers) {
  Result<std::vector<store::SampledAnswer>> answers = s.ListSampledAnswers(run_id);
  REQUIRE(answers.ok());
  REQUIRE(answers->size() == kAnswers);
  store::ExportInfo info{.export_id = "export-1",
                         .run_id = run_id,
                         .created_unix_ms = 1'764'600'000'000,
                         .reviewers = 2,
                         .per_item = 2,
                         .rubric_json = testing::ReadText(Golden("service-desk.rubric.json"))};
  std::vector<store::ReviewItem> items;
  std::vector<store::Score> scores;
  for (size_t i = 0; i < answers->size(); ++i) {
    const store::SampledAnswer& a = (*answers)[i];
    if (i >= count) break;
    for (const char* reviewer : {"r1", "r2"}) {
      const std::string item = "item-" + std::to_string(a.request_id) + "-" + reviewer;
      items.push_back({.item_id = item, .request_id = a.request_id, .reviewer = reviewer});
      const auto score = [&](const char* criterion, int64_t value) {
        scores.push_back({.item_id = item,
                          .reviewer = reviewer,
                          .criterion = criterion,
                          .value = value,
                          .seconds = 20,
                          .imported_unix_ms = 1'764'600'000'000});
      };
      for (const char* criterion : {"correctness", "groundedness", "helpfulness"})
        score(criterion, i < kAccepted ? 4 : 3);
      score("permission_safety", 1);
    }
  }
  REQUIRE(s.AddExport(info, items).ok());
  REQUIRE(s.AddScores(scores).ok());
}

// The stored run of report-test, its scenario with `cost` (null: none) and `min_scored` answers
// to be scored (unset: its own, 8), and the first `scored` of its 12 answers scored.
ReportModel Report(const json& cost, size_t scored, std::optional<int64_t> min_scored) {
  Result<std::unique_ptr<store::Store>> s = store::Store::OpenInMemory();
  REQUIRE(s.ok());
  json scenario = json::parse(testing::ReadText(Golden("report-test.scenario.json")));
  if (!cost.is_null()) scenario["cost"] = cost;
  if (min_scored) scenario["quality"]["min_scored_answers"] = *min_scored;
  const store::RunInfo run{.id = "run-cost",
                           .scenario_name = "report-test",
                           .scenario_file = "tests/testdata/run/report-test.yaml",
                           .fingerprint = "cost",
                           .corpus_version = "2026.11.2",
                           .scenario_json = scenario.dump(),
                           .findings_json = testing::ReadText(Golden("report-test.run.json")),
                           .status = store::RunStatus::kComplete,
                           .started_unix_ms = 1'764'590'000'000,
                           .finished_unix_ms = 1'764'590'060'000};
  REQUIRE((*s)->CreateRun(run).ok());
  AddAnswered(**s, run.id);
  if (scored > 0) AddScores(**s, run.id, scored);
  Result<ReportModel> model = BuildReport(**s, run, nullptr);
  REQUIRE(model.ok());
  return std::move(*model);
}

// The same, every answer scored or none.
ReportModel Report(const json& cost, bool scored) {
  return Report(cost, scored ? kAnswers : 0, std::nullopt);
}

// What the fixture's final stage ("full") measured, each a step's completed requests over its
// window: the sweep level at its highest sustained level (8 req/s offered), and the steady phase.
struct Measured {
  double capacity = 0;
  double steady = 0;
};
double CompletedPerSecond(const json& step) {
  return step["requests"]["completed"].get<double>() / step["throughput"]["window_s"].get<double>();
}
Measured FromFixture() {
  const json run = json::parse(testing::ReadText(Golden("report-test.run.json")));
  const json& stage = run["stages"].back();
  REQUIRE(stage["name"] == "full");
  REQUIRE(stage["capacity"]["unit"] == "req/s");
  REQUIRE(stage["capacity"]["holds_up_to"] == 8);
  Measured m;
  for (const json& step : stage["steps"]) {
    if (step["phase"] == "steady") m.steady = CompletedPerSecond(step);
    if (step["phase"] == "sweep" && step["level"] == 8) m.capacity = CompletedPerSecond(step);
  }
  // Of the 56 requests offered at 8 req/s, 7 were expected denials: what completed is less than
  // what was offered, and the cost is of what completed.
  REQUIRE(m.capacity > 6);
  REQUIRE(m.capacity < 7.9);
  REQUIRE(m.steady > 0);
  return m;
}

// The 95% Wilson score interval of k in n, written out: (p + z^2/2n -+ z sqrt(p(1-p)/n +
// z^2/4n^2)) / (1 + z^2/n).
std::pair<double, double> Wilson(double k, double n) {
  const double z = 1.959963984540054, p = k / n, z2 = z * z;
  const double center = p + z2 / (2 * n);
  const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {(center - half) / (1 + z2 / n), (center + half) / (1 + z2 / n)};
}

const json kCost = {{"price_per_hour", 2.5},
                    {"per", "gpu"},
                    {"count", 4},
                    {"currency", "USD"},
                    {"source", "on-demand list price, 2026-11"}};

TEST_CASE("the cost per 1,000 completed and per accepted answer match a hand computation",
          "[report][cost]") {
  const ReportModel m = Report(kCost, /*scored=*/true);
  const Measured r = FromFixture();
  const double h = 2.5 * 4;  // USD an hour
  const double p = 9.0 / 12;
  const auto [p_low, p_high] = Wilson(kAccepted, kAnswers);

  REQUIRE(m.cost.price);
  CHECK(m.cost.unit == "USD");
  CHECK(m.cost.per_hour == Approx(h));
  REQUIRE(m.cost.pass_rate);
  CHECK(*m.cost.pass_rate == Approx(p));
  CHECK(m.cost.scored == kAnswers);
  CHECK(m.cost.accepted == kAccepted);
  REQUIRE(m.cost.pass_rate_ci);
  CHECK(m.cost.pass_rate_ci->low == Approx(p_low).epsilon(1e-9));
  CHECK(m.cost.pass_rate_ci->high == Approx(p_high).epsilon(1e-9));

  REQUIRE(m.cost.rates.size() == 2);
  const double rates[] = {r.capacity, r.steady};
  for (size_t i = 0; i < 2; ++i) {
    const CostAtRate& at = m.cost.rates[i];
    INFO(at.label);
    REQUIRE(at.rate);
    CHECK(*at.rate == Approx(rates[i]).epsilon(1e-9));
    REQUIRE(at.per_thousand);
    CHECK(*at.per_thousand == Approx(h * 1000 / (rates[i] * 3600)).epsilon(1e-9));
    REQUIRE(at.per_accepted);
    CHECK(*at.per_accepted == Approx(h / (rates[i] * 3600 * p)).epsilon(1e-9));
    REQUIRE(at.per_accepted_ci);
    // A high pass rate gives the low cost.
    CHECK(at.per_accepted_ci->low == Approx(h / (rates[i] * 3600 * p_high)).epsilon(1e-9));
    CHECK(at.per_accepted_ci->high == Approx(h / (rates[i] * 3600 * p_low)).epsilon(1e-9));
    CHECK(at.per_accepted_ci->low < *at.per_accepted);
    CHECK(*at.per_accepted < at.per_accepted_ci->high);
  }
  // At 49 completed in 6.965 s (7.0347 req/s): 10 USD / 25,325 requests an hour = 0.39487 USD
  // per 1,000; / 0.75 accepted.
  CHECK(*m.cost.rates[0].per_thousand == Approx(0.394869).epsilon(1e-5));
  CHECK(*m.cost.rates[0].per_accepted == Approx(0.000526491).epsilon(1e-5));

  const std::string md = ReportMarkdown(m);
  INFO(md);
  CHECK(md.find("\n## Cost per accepted answer (information, not a check)\n") != std::string::npos);
  CHECK(md.find("- Price: 2.5 USD an hour per GPU × 4 GPUs = H = 10 USD an hour; source: "
                "on-demand list price, 2026-11.\n") != std::string::npos);
  CHECK(md.find("    per 1,000 completed at the sustained capacity = H × 1000 / (r × 3600) = 10 × "
                "1000 / (7.035 × 3600) = 0.3949 USD\n") != std::string::npos);
  CHECK(md.find("    per accepted answer at the sustained capacity = H / (r × 3600 × p) = 10 / "
                "(7.035 × 3600 × 0.75) = 0.0005265 USD\n") != std::string::npos);
  CHECK(md.find("no staff savings") != std::string::npos);
  CHECK(md.find("no accuracy beyond the reviewers' scores") != std::string::npos);
  const std::string html = ReportHtml(m);
  CHECK(html.find("<h2>Cost per accepted answer (information, not a check)</h2>") !=
        std::string::npos);
  CHECK(html.find("per accepted answer at the sustained capacity = H / (r × 3600 × p) = 10 / "
                  "(7.035 × 3600 × 0.75) = 0.0005265 USD\n") != std::string::npos);

  const json report = ReportJson(m);
  const json& cost = report["cost"];
  CHECK(cost["information_only"] == true);
  CHECK(cost["unit"] == "USD");
  CHECK(cost["price"]["source"] == "on-demand list price, 2026-11");
  CHECK(cost["at"]["sustained_capacity"]["rate_req_s"].get<double>() ==
        Approx(r.capacity).epsilon(1e-9));
  CHECK(cost["at"]["steady"]["per_accepted_answer"].get<double>() ==
        Approx(h / (r.steady * 3600 * p)).epsilon(1e-9));
  CHECK(cost["at"]["steady"]["per_accepted_answer_ci95"][1].get<double>() ==
        Approx(h / (r.steady * 3600 * p_low)).epsilon(1e-9));
}

TEST_CASE("the cost changes no check and not the verdict", "[report][cost]") {
  const ReportModel priced = Report(kCost, /*scored=*/true);
  const ReportModel unpriced = Report(nullptr, /*scored=*/true);
  CHECK(priced.verdict == unpriced.verdict);
  CHECK(priced.verdict_reasons == unpriced.verdict_reasons);
  REQUIRE(priced.checks.size() == unpriced.checks.size());
  for (size_t i = 0; i < priced.checks.size(); ++i) {
    CHECK(priced.checks[i].name == unpriced.checks[i].name);
    CHECK(priced.checks[i].status == unpriced.checks[i].status);
  }
  CHECK(ReportJunit(priced) == ReportJunit(unpriced));
}

TEST_CASE("without a cost section the figures are in instance-seconds", "[report][cost]") {
  const ReportModel m = Report(nullptr, /*scored=*/true);
  const Measured r = FromFixture();
  const double p = 9.0 / 12;
  const auto [p_low, p_high] = Wilson(kAccepted, kAnswers);
  CHECK_FALSE(m.cost.price);
  CHECK(m.cost.unit == "instance-seconds");
  REQUIRE(m.cost.rates.size() == 2);
  const double rates[] = {r.capacity, r.steady};
  for (size_t i = 0; i < 2; ++i) {
    const CostAtRate& at = m.cost.rates[i];
    INFO(at.label);
    REQUIRE(at.per_thousand);
    CHECK(*at.per_thousand == Approx(1000 / rates[i]).epsilon(1e-9));
    REQUIRE(at.per_accepted);
    CHECK(*at.per_accepted == Approx(1 / (rates[i] * p)).epsilon(1e-9));
    REQUIRE(at.per_accepted_ci);
    CHECK(at.per_accepted_ci->low == Approx(1 / (rates[i] * p_high)).epsilon(1e-9));
    CHECK(at.per_accepted_ci->high == Approx(1 / (rates[i] * p_low)).epsilon(1e-9));
  }
  const std::string md = ReportMarkdown(m);
  INFO(md);
  CHECK(md.find("- No price: the scenario has no cost section") != std::string::npos);
  // r = 49 / 6.965 s = 7.0347: 1000 / r = 142.15; 1 / (r × 0.75) = 0.18954.
  CHECK(md.find("    instance-seconds per 1,000 completed at the sustained capacity = 1000 / r = "
                "1000 / 7.035 = 142.2\n") != std::string::npos);
  CHECK(md.find("    instance-seconds per accepted answer at the sustained capacity = 1 / (r × "
                "p) = 1 / (7.035 × 0.75) = 0.1895\n") != std::string::npos);
  CHECK(ReportJson(m)["cost"]["price"].is_null());
}

TEST_CASE("without scores the cost per accepted answer is pending", "[report][cost]") {
  const ReportModel m = Report(kCost, /*scored=*/false);
  const Measured r = FromFixture();
  CHECK_FALSE(m.cost.pass_rate);
  REQUIRE(m.cost.rates.size() == 2);
  for (const CostAtRate& at : m.cost.rates) {
    CHECK(at.per_thousand);
    CHECK_FALSE(at.per_accepted);
    CHECK_FALSE(at.per_accepted_ci);
  }
  CHECK(*m.cost.rates[0].per_thousand == Approx(10.0 * 1000 / (r.capacity * 3600)));
  const std::string md = ReportMarkdown(m);
  CHECK(md.find("- Cost per accepted answer: pending: the reviewers' scores are not in yet") !=
        std::string::npos);
  CHECK(md.find("per accepted answer at") == std::string::npos);
  CHECK(ReportJson(m)["cost"]["at"]["steady"]["per_accepted_answer"].is_null());
}

TEST_CASE("a cost per accepted answer from too few scored answers says what it rests on",
          "[report][cost]") {
  // 7 of the 12 answers scored (all accepted) where 40 are needed.
  const ReportModel m = Report(kCost, 7, 40);
  const Measured r = FromFixture();
  CHECK(m.quality.verdict == quality::QualityVerdict::kPending);
  CHECK(m.verdict == Verdict::kPending);
  CHECK(m.verdict_reasons ==
        std::vector<std::string>{"quality: 7 answers are fully scored; at least 40 are needed"});
  CHECK(m.cost.scored == 7);
  CHECK(m.cost.accepted == 7);
  CHECK(m.cost.needed == 40);
  CHECK(m.cost.provisional == "provisional: from 7 of the 40 answers needed");
  CHECK(m.cost.pass_rate_note ==
        "provisional: from 7 of the 40 answers needed: the pass rate, and so each cost per "
        "accepted answer, may move as more scores come in");
  REQUIRE(m.cost.rates.size() == 2);
  REQUIRE(m.cost.rates[0].per_accepted);
  CHECK(*m.cost.rates[0].per_accepted == Approx(10.0 / (r.capacity * 3600)).epsilon(1e-9));

  const std::string md = ReportMarkdown(m);
  INFO(md);
  CHECK(md.find("- Accepted answers: 7 of 7 scored answers passed the rubric, p = 1") !=
        std::string::npos);
  CHECK(md.find("- Cost per accepted answer: provisional: from 7 of the 40 answers needed: the "
                "pass rate, and so each cost per accepted answer, may move as more scores come "
                "in.\n") != std::string::npos);
  // Each figure per accepted answer, and its formula, says it.
  const auto count = [](const std::string& text, const std::string& part) {
    int n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
      ++n;
    return n;
  };
  CHECK(count(md,
              " USD per accepted answer (provisional: from 7 of the 40 answers needed; 95% "
              "interval ") == 2);
  CHECK(count(md, " USD (provisional: from 7 of the 40 answers needed)\n") == 2);
  CHECK(md.find("    per accepted answer at the sustained capacity = H / (r × 3600 × p) = 10 / "
                "(7.035 × 3600 × 1) = 0.0003949 USD (provisional: from 7 of the 40 answers "
                "needed)\n") != std::string::npos);

  const json cost = ReportJson(m)["cost"];
  CHECK(cost["scored_answers"] == 7);
  CHECK(cost["answers_needed"] == 40);
  CHECK(cost["provisional"] == "provisional: from 7 of the 40 answers needed");

  // With every answer scored and 8 needed, nothing is provisional.
  const ReportModel enough = Report(kCost, /*scored=*/true);
  CHECK(enough.cost.provisional.empty());
  CHECK(ReportMarkdown(enough).find("provisional") == std::string::npos);
  CHECK(ReportJson(enough)["cost"]["provisional"] == "");
}

TEST_CASE("a rate that is not known says why", "[report][cost]") {
  // A final stage with a steady phase but no sweep, and one with a sweep no level of which held.
  json findings = json::parse(testing::ReadText(Golden("report-test.run.json")));
  json& stage = findings["stages"].back();
  stage.erase("capacity");
  quality::QualitySummary no_scores;
  CostFigures cost = ComputeCost(std::nullopt, store::ParseFindings(findings.dump()), no_scores);
  REQUIRE(cost.rates.size() == 2);
  CHECK_FALSE(cost.rates[0].rate);
  CHECK(cost.rates[0].basis == "not known: the final stage (full) ran no sweep");
  CHECK(cost.rates[1].rate);

  stage["capacity"] = {{"holds_up_to", nullptr}, {"fails_at", 4}, {"unit", "req/s"}};
  json steps = json::array();
  for (const json& step : stage["steps"])
    if (step["phase"] != "steady") steps.push_back(step);
  stage["steps"] = steps;
  cost = ComputeCost(std::nullopt, store::ParseFindings(findings.dump()), no_scores);
  CHECK(cost.rates[0].basis == "not known: no level of the final stage's sweep held");
  CHECK_FALSE(cost.rates[1].rate);
  CHECK(cost.rates[1].basis == "not known: the final stage (full) ran no steady phase");
  const std::vector<std::string> facts = DescribeCost(cost).facts;
  CHECK(std::find(facts.begin(), facts.end(),
                  "Cost at the tested steady load: not known: the final stage (full) ran no "
                  "steady phase.") != facts.end());
  CHECK(DescribeCost(cost).formulas.empty());
}

TEST_CASE("the capacity's rate is what completed at the level that held, offered or concurrent",
          "[report][cost]") {
  json findings = json::parse(testing::ReadText(Golden("report-test.run.json")));
  json& stage = findings["stages"].back();
  const Measured r = FromFixture();
  quality::QualitySummary no_scores;
  CostFigures cost = ComputeCost(std::nullopt, store::ParseFindings(findings.dump()), no_scores);
  REQUIRE(cost.rates[0].rate);
  CHECK(*cost.rates[0].rate == Approx(r.capacity).epsilon(1e-12));
  CHECK(cost.rates[0].basis ==
        "49 requests completed in 6.965 s of the final stage's (full) sweep level at 8 req/s "
        "offered, the highest it sustained (over the step's whole window: the run was stored "
        "before the capacity's own window was kept)");

  // The same steps as a closed loop's: the levels are concurrencies.
  stage["capacity"]["unit"] = "concurrency";
  for (json& step : stage["steps"])
    step["level_unit"] = "concurrency";
  cost = ComputeCost(std::nullopt, store::ParseFindings(findings.dump()), no_scores);
  REQUIRE(cost.rates[0].rate);
  CHECK(*cost.rates[0].rate == Approx(r.capacity).epsilon(1e-12));
  CHECK(cost.rates[0].basis.find("sweep level at 8 concurrent, the highest it sustained") !=
        std::string::npos);

  // A level that held with nothing completed (every request an expected denial) has no rate.
  for (json& step : stage["steps"])
    if (step["phase"] == "sweep" && step["level"] == 8) {
      step["requests"]["completed"] = 0;
      step["throughput"]["request_throughput"] = 0;
    }
  cost = ComputeCost(std::nullopt, store::ParseFindings(findings.dump()), no_scores);
  CHECK_FALSE(cost.rates[0].rate);
  CHECK_FALSE(cost.rates[0].per_thousand);
  CHECK(cost.rates[0].basis ==
        "not known: no request completed in the final stage's (full) sweep level at 8 concurrent, "
        "the highest it sustained");
}

}  // namespace
}  // namespace stagegate::report
