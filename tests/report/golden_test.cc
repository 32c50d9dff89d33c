// Golden files of every report format for three stored runs: ready, not ready (an application
// that failed every request, so no check had a measurement and the overload shed nothing) and
// pending (no reviewers' scores). The runs are built in an in-memory store from fixtures in
// tests/testdata/report/golden: the run.json and canonical scenario of real runs (of
// tests/testdata/run/report.yaml and tests/testdata/run/fail-every-request.yaml), with requests,
// sampled answers and scores made here so that every figure is fixed. Each expected file was
// read once by eye. After a deliberate change of a writer, rewrite them with
//   STAGEGATE_UPDATE_GOLDEN=1 build-test/stagegate_tests "[golden]"
// and read the diff before committing it.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "report/model.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::report {
namespace {

std::string Golden(const std::string& name) {
  return testing::Testdata("report/golden/" + name);
}

// One stored run with a steady phase of `stage`: `ok` answered requests (TTFT 100, 105, ... ms)
// and `failed` ones (HTTP 500). Returns the records' (phase id, sequence).
std::vector<std::pair<int64_t, int64_t>> AddSteady(store::Store& s, const std::string& run_id,
                                                   const std::string& stage, int ok, int failed) {
  Result<int64_t> phase = s.AddPhase({.run_id = run_id,
                                      .ordinal = 0,
                                      .stage = stage,
                                      .phase = "steady",
                                      .level = 4,
                                      .status = store::PhaseStatus::kComplete});
  REQUIRE(phase.ok());
  REQUIRE(s.FinishPhase(*phase, 0, 10'000'000'000, store::PhaseStatus::kComplete).ok());
  std::vector<load::RequestRecord> records;
  std::vector<std::pair<int64_t, int64_t>> answered;
  const char* const tasks[] = {"hr-leave-carry-over", "it-password-reset", "it-vpn-disconnects",
                               "policy-expenses-limit"};
  for (int i = 0; i < ok + failed; ++i) {
    load::RequestRecord r{.run_id = run_id,
                          .phase_id = *phase,
                          .sequence = i,
                          .task_id = std::string(tasks[i % 4]) + "-" + std::to_string(i),
                          .intended_ns = int64_t{250'000'000} * i,
                          .sent_ns = int64_t{250'000'000} * i};
    if (i < ok) {
      r.first_token_ns = *r.sent_ns + int64_t{1'000'000} * (100 + 5 * i);
      r.end_ns = *r.first_token_ns + int64_t{1'000'000} * (400 + 10 * i);
      r.http_status = 200;
      r.answer_text = "Answer " + std::to_string(i) + ": <see the policy & the FAQ>.";
      answered.push_back({*phase, i});
    } else {
      r.outcome = load::Outcome::kHttpError;
      r.http_status = 500;
      r.end_ns = *r.sent_ns + 2'000'000;
      r.error_message = "HTTP 500";
    }
    records.push_back(std::move(r));
  }
  REQUIRE(s.AddRequests(records).ok());
  return answered;
}

// Two reviewers score every sampled answer alike: 4 or 5 by the answer, permission safety 1.
void AddScores(store::Store& s, const std::string& run_id) {
  Result<std::vector<store::SampledAnswer>> answers = s.ListSampledAnswers(run_id);
  REQUIRE(answers.ok());
  store::ExportInfo info{.export_id = "export-1",
                         .run_id = run_id,
                         .created_unix_ms = 1'764'600'000'000,
                         .reviewers = 2,
                         .per_item = 2,
                         .rubric_json = testing::ReadText(Golden("service-desk.rubric.json"))};
  std::vector<store::ReviewItem> items;
  std::vector<store::Score> scores;
  for (const store::SampledAnswer& a : *answers)
    for (const char* reviewer : {"r1", "r2"}) {
      const std::string item = "item-" + std::to_string(a.request_id) + "-" + reviewer;
      items.push_back({.item_id = item, .request_id = a.request_id, .reviewer = reviewer});
      for (const char* criterion : {"correctness", "groundedness", "helpfulness"})
        scores.push_back({.item_id = item,
                          .reviewer = reviewer,
                          .criterion = criterion,
                          .value = 4 + a.request_id % 2,
                          .seconds = 20,
                          .imported_unix_ms = 1'764'600'000'000});
      scores.push_back({.item_id = item,
                        .reviewer = reviewer,
                        .criterion = "permission_safety",
                        .value = 1,
                        .seconds = 20,
                        .imported_unix_ms = 1'764'600'000'000});
    }
  REQUIRE(s.AddExport(info, items).ok());
  REQUIRE(s.AddScores(scores).ok());
  // Each reviewer says whether the answer is usable: in turn as it is, as it is, after a
  // correction of 20 to 40 s (its text is never shown), and not usable.
  std::vector<store::Usability> usability;
  int64_t n = 0;
  for (const store::ReviewItem& item : items) {
    store::Usability u{.item_id = item.item_id,
                       .reviewer = item.reviewer,
                       .usability = n % 4 < 2    ? "as_is"
                                    : n % 4 == 2 ? "corrected"
                                                 : "unusable",
                       .imported_unix_ms = 1'764'600'000'000};
    if (n % 4 == 2) {
      u.corrected_text = "<b>xyzzy-correction</b> & sent";
      u.correction_seconds = 20 + 5 * static_cast<double>(n % 5);
    }
    usability.push_back(std::move(u));
    ++n;
  }
  REQUIRE(s.AddUsability(usability).ok());
}

struct GoldenRun {
  const char* name;  // of the expected files
  const char* fixture;
  Verdict verdict;
  bool scored;
  int ok, failed;
};

void CheckGolden(const std::string& name, const std::string& actual) {
  testing::CheckGoldenFile(Golden(name), actual);
}

TEST_CASE("every report format matches its golden file for a ready, a not ready and a pending run",
          "[report][golden]") {
  const GoldenRun runs[] = {
      {"ready", "report-test", Verdict::kReady, true, 12, 0},
      {"not-ready", "fail-every-request", Verdict::kNotReady, false, 0, 4},
      {"pending", "report-test", Verdict::kPending, false, 12, 0},
  };
  for (const GoldenRun& g : runs) {
    INFO(g.name);
    Result<std::unique_ptr<store::Store>> s = store::Store::OpenInMemory();
    REQUIRE(s.ok());
    const std::string fixture = g.fixture;
    store::RunInfo run{.id = std::string("run-golden-") + g.name,
                       .scenario_name = fixture,
                       .scenario_file = "tests/testdata/run/" + fixture + ".yaml",
                       .fingerprint = "golden",
                       .corpus_version = "2026.11.2",
                       .scenario_json = testing::ReadText(Golden(fixture + ".scenario.json")),
                       .findings_json = testing::ReadText(Golden(fixture + ".run.json")),
                       .status = store::RunStatus::kComplete,
                       .started_unix_ms = 1'764'590'000'000,
                       .finished_unix_ms = 1'764'590'060'000};
    REQUIRE((*s)->CreateRun(run).ok());
    const std::string stage = g.ok > 0 ? "full" : "bare";
    const auto answered = AddSteady(**s, run.id, stage, g.ok, g.failed);
    if (!answered.empty()) {
      const std::vector<std::pair<int64_t, int64_t>> rest(answered.begin(), answered.begin() + 6);
      const std::vector<std::pair<int64_t, int64_t>> load(answered.begin() + 6, answered.end());
      REQUIRE((*s)->AddAnswers(run.id, "at_rest", rest).ok());
      REQUIRE((*s)->AddAnswers(run.id, "under_load", load).ok());
    }
    if (g.scored) AddScores(**s, run.id);

    Result<ReportModel> model = BuildReport(**s, run, nullptr);
    REQUIRE(model.ok());
    CHECK(model->verdict == g.verdict);
    CHECK(model->findings.problems.empty());
    model->triage = {{"shed", 0}, {"error", g.failed}, {"ok", g.ok}};
    const std::string base = std::string("expected/") + g.name;
    CheckGolden(base + ".report.json", ReportJson(*model).dump(1) + "\n");
    CheckGolden(base + ".report.md", ReportMarkdown(*model));
    CheckGolden(base + ".report.html", ReportHtml(*model));
    CheckGolden(base + ".report.junit.xml", ReportJunit(*model));
    CheckGolden(base + ".report.csv", ReportCsv(*model));
    // The reviewers' corrected texts stay in the store: the report shows only the figures.
    for (const std::string& text :
         {ReportJson(*model).dump(), ReportMarkdown(*model), ReportHtml(*model), ReportCsv(*model)})
      CHECK(text.find("xyzzy") == std::string::npos);
  }
}

}  // namespace
}  // namespace stagegate::report
