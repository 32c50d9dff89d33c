// TriageStoredRun: a stored run's requests classified from the store, with the run's scenario
// handed in by the caller (or the reason there is none).

#include "report/triaged_run.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

namespace stagegate::report {
namespace {

constexpr const char* kNoCorpusNote =
    "automated checks not run, and denials of corpus tasks not judged expected or not: ";

load::RequestRecord Request(int64_t phase_id, int64_t sequence, load::Outcome outcome) {
  load::RequestRecord r;
  r.run_id = "run-1";
  r.phase_id = phase_id;
  r.sequence = sequence;
  r.task_id = "task-" + std::to_string(sequence);
  r.sent_ns = 1'000 * sequence;
  r.end_ns = 1'000 * sequence + 900;
  r.outcome = outcome;
  r.http_status = outcome == load::Outcome::kShed ? 429 : 200;
  return r;
}

// A run of two phases: "steady" (a warmup request, an answered one and a shed one) and an
// earlier one a resumed run superseded (one request).
std::unique_ptr<store::Store> StoredRun() {
  std::unique_ptr<store::Store> store = testing::Ok(store::Store::OpenInMemory());
  testing::RequireOk(store->CreateRun({.id = "run-1",
                                       .scenario_name = "triaged",
                                       .scenario_file = "scenarios/triaged.yaml",
                                       .scenario_json = "{}",
                                       .started_unix_ms = 1000}));
  const int64_t superseded =
      testing::Ok(store->AddPhase({.run_id = "run-1",
                                   .ordinal = 1,
                                   .stage = "bare",
                                   .phase = "steady",
                                   .status = store::PhaseStatus::kSuperseded}));
  const int64_t steady = testing::Ok(store->AddPhase({.run_id = "run-1",
                                                      .ordinal = 2,
                                                      .stage = "bare",
                                                      .phase = "steady",
                                                      .status = store::PhaseStatus::kComplete}));
  std::vector<load::RequestRecord> records = {
      Request(superseded, 0, load::Outcome::kOk), Request(steady, 0, load::Outcome::kOk),
      Request(steady, 1, load::Outcome::kOk), Request(steady, 2, load::Outcome::kShed)};
  records[1].warmup = true;
  testing::RequireOk(store->AddRequests(records));
  return store;
}

bool HasNote(const TriagedRun& run, const std::string& note) {
  return std::find(run.notes.begin(), run.notes.end(), note) != run.notes.end();
}

TEST_CASE("a stored run's requests are triaged without its scenario, which the notes explain",
          "[triage]") {
  std::unique_ptr<store::Store> store = StoredRun();
  const store::RunInfo run = *testing::Ok(store->FindRun("run-1"));

  const TriagedRun triaged = testing::Ok(TriageStoredRun(
      *store, run, nullptr,
      "the run's scenario scenarios/triaged.yaml cannot be read again\nscenarios/triaged.yaml: "
      "no such file"));
  // The warmup request and the superseded phase's are left out; the rest keep their phase.
  REQUIRE(triaged.triaged.size() == 2u);
  CHECK(triaged.triaged[0].record->sequence == 1);
  CHECK(triaged.triaged[0].triage.triage_class == TriageClass::kOk);
  CHECK(triaged.triaged[1].record->sequence == 2);
  CHECK(triaged.triaged[1].triage.triage_class == TriageClass::kShed);
  for (const TriagedRequest& t : triaged.triaged)
    CHECK(t.phase->status == store::PhaseStatus::kComplete);
  // The first line of the reason, alone.
  CHECK(HasNote(triaged, std::string(kNoCorpusNote) +
                             "the run's scenario scenarios/triaged.yaml cannot be read again"));

  const manifest::Bundle without_corpus;
  const TriagedRun no_corpus = testing::Ok(TriageStoredRun(*store, run, &without_corpus, ""));
  CHECK(no_corpus.triaged.size() == 2u);
  CHECK(HasNote(no_corpus, std::string(kNoCorpusNote) + "the scenario has no corpus"));
}

}  // namespace
}  // namespace stagegate::report
