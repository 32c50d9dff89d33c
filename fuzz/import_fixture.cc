#include "import_fixture.h"

#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "review/import.h"
#include "store/store.h"

namespace stagegate::fuzz {
namespace {

constexpr const char* kRun = "run-f";

void Check(const Status& status) {
  if (!status.ok()) Fail("setting up the store: " + status.message());
}

const char* kRubric =
    R"({"id":"fuzz","criteria":[)"
    R"({"id":"correctness","weight":2,"hard":false,"floor":0,"levels":)"
    R"([{"level":1},{"level":2},{"level":3},{"level":4},{"level":5}]},)"
    R"({"id":"safety","weight":0,"hard":true,"floor":1,"levels":[{"level":0},{"level":1}]}],)"
    R"("pass_rule":{"min_weighted_mean":3}})";

std::unique_ptr<store::Store> MakeStore() {
  Result<std::unique_ptr<store::Store>> opened = store::Store::OpenInMemory();
  Check(opened.status());
  std::unique_ptr<store::Store> s = std::move(opened).value();
  Check(s->CreateRun({.id = kRun,
                      .scenario_name = "fuzz",
                      .scenario_file = "fuzz.yaml",
                      .fingerprint = "sha256:f",
                      .scenario_json = "{}",
                      .started_unix_ms = 1}));
  Result<int64_t> phase = s->AddPhase(
      {.run_id = kRun, .ordinal = 1, .stage = "bare", .phase = "steady", .at_rest = true});
  Check(phase.status());
  std::vector<load::RequestRecord> records;
  for (int64_t n = 1; n <= 5; ++n) {
    load::RequestRecord r;
    r.run_id = kRun;
    r.phase_id = *phase;
    r.sequence = n;
    r.task_id = "task-" + std::to_string(n);
    r.outcome = load::Outcome::kOk;
    r.answer_text = "answer " + std::to_string(n);
    records.push_back(r);
  }
  Check(s->AddRequests(records));
  Check(s->AddExport({.export_id = "x-1",
                      .run_id = kRun,
                      .created_unix_ms = 1000,
                      .reviewers = 2,
                      .per_item = 1,
                      .rubric_json = kRubric},
                     {{.item_id = "a1", .request_id = 1, .reviewer = "r1"},
                      {.item_id = "a2", .request_id = 2, .reviewer = "r1"},
                      {.item_id = "b1", .request_id = 3, .reviewer = "r2"},
                      {.item_id = "b2", .request_id = 4, .reviewer = "r2", .calibration = true}}));
  Check(s->AddExport({.export_id = "judge-1",
                      .run_id = kRun,
                      .created_unix_ms = 2000,
                      .reviewers = 1,
                      .per_item = 1,
                      .rubric_json = kRubric,
                      .scorer = "judge:m"},
                     {{.item_id = "j1", .request_id = 5, .reviewer = "judge"}}));
  return s;
}

int64_t CountScores(store::Store& s) {
  Result<std::vector<store::StoredScore>> scores = s.ListScores(kRun);
  Check(scores.status());
  return static_cast<int64_t>(scores->size());
}

}  // namespace

void FuzzImport(std::string_view text, const std::string& file_name) {
  static const std::unique_ptr<store::Store> s = MakeStore();
  const std::string path = WriteScratchFile(file_name, text);
  Result<review::ImportResult> result = review::ImportScores(*s, kRun, {path}, {});
  if (!result.ok()) Fail("import failed on a good store: " + result.status().message());
  const int64_t stored = CountScores(*s);
  if (!result->errors.empty() && stored != 0) Fail("an import with errors wrote scores");
  if (result->errors.empty() && stored != result->added + result->replaced + result->unchanged)
    Fail("scores stored differ from scores imported");
  Check(s->TEST_database().Exec("DELETE FROM scores"));
}

}  // namespace stagegate::fuzz
