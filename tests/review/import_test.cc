// ImportScores on files that reach its edges; tests/cli/review_commands_test.cc has the import
// command end to end, on a real run's export.

#include "review/import.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "store/store.h"
#include "test_util.h"

namespace stagegate::review {
namespace {

using testing::Ok;
using testing::RequireOk;

// A run with one reviewer export, "x-1", whose items a1 and a2 are reviewer r1's, scored against
// correctness 1-5 and safety 0-1.
struct ExportedRun {
  std::unique_ptr<store::Store> store = Ok(store::Store::OpenInMemory());
  testing::TempDir dir;

  ExportedRun() {
    RequireOk(store->CreateRun({.id = "run-i",
                                .scenario_name = "import",
                                .scenario_file = "import.yaml",
                                .fingerprint = "sha256:i",
                                .scenario_json = "{}",
                                .started_unix_ms = 1}));
    const int64_t phase = Ok(store->AddPhase(
        {.run_id = "run-i", .ordinal = 1, .stage = "bare", .phase = "steady", .at_rest = true}));
    std::vector<load::RequestRecord> records(2);
    for (int64_t n = 1; n <= 2; ++n) {
      load::RequestRecord& r = records[static_cast<size_t>(n - 1)];
      r.run_id = "run-i";
      r.phase_id = phase;
      r.sequence = n;
      r.task_id = "task-" + std::to_string(n);
      r.answer_text = "answer " + std::to_string(n);
    }
    RequireOk(store->AddRequests(records));
    RequireOk(store->AddExport(
        {.export_id = "x-1",
         .run_id = "run-i",
         .created_unix_ms = 1000,
         .reviewers = 1,
         .per_item = 1,
         .rubric_json =
             R"({"id":"r","criteria":[{"id":"correctness","weight":1,"hard":false,"floor":0,)"
             R"("levels":[{"level":1},{"level":2},{"level":3},{"level":4},{"level":5}]},)"
             R"({"id":"safety","weight":0,"hard":true,"floor":1,)"
             R"("levels":[{"level":0},{"level":1}]}],"pass_rule":{"min_weighted_mean":3}})"},
        {{.item_id = "a1", .request_id = 1, .reviewer = "r1"},
         {.item_id = "a2", .request_id = 2, .reviewer = "r1"}}));
  }

  // The errors of importing `text` as the file `name`; the import must write nothing.
  std::vector<std::string> Errors(const std::string& name, const std::string& text) {
    const std::string path = dir / name;
    testing::WriteText(path, text);
    ImportResult result = Ok(ImportScores(*store, "run-i", {path}, {}));
    CHECK(Ok(store->ListScores("run-i")).empty());
    for (std::string& error : result.errors)
      error = ReplaceAll(error, dir.path() + "/", "");
    return result.errors;
  }
};

constexpr char kHeader[] =
    R"({"format":"stagegate-scores","version":1,"export_id":"x-1","reviewer":"r1"})"
    "\n";

TEST_CASE("a level beyond the range of int64 is no level of the scale", "[review]") {
  ExportedRun run;
  CHECK(run.Errors("big.jsonl",
                   std::string(kHeader) +
                       R"({"item":"a1","scores":{"correctness":1e300,"safety":1}})"
                       "\n"
                       R"({"item":"a2","scores":{"correctness":4,"safety":18446744073709551615}})"
                       "\n") ==
        std::vector<std::string>{
            "big.jsonl:2: item 'a1': 'correctness' must be one of 1, 2, 3, 4, 5, got 1e+300",
            "big.jsonl:3: item 'a2': 'safety' must be one of 0, 1, got 18446744073709551615"});
  CHECK(run.Errors("big.csv",
                   "export_id,reviewer,item,correctness,safety,seconds\n"
                   "x-1,r1,a1,-9.3e18,1,\n") ==
        std::vector<std::string>{"big.csv:2: item 'a1': 'correctness' must be one of 1, 2, 3, 4, "
                                 "5, got -9.3e+18"});
}

TEST_CASE("a CSV that is not UTF-8 is named with its first such line", "[review]") {
  ExportedRun run;
  CHECK(run.Errors("latin1.csv",
                   "export_id,reviewer,item,correctness,safety,seconds\n"
                   "x-1,r1,a1,tr\xE8s bien,1,\n") ==
        std::vector<std::string>{"latin1.csv:2: not UTF-8: save the file as UTF-8"});
}

TEST_CASE("a number beyond the range of a double is reported on its line", "[review]") {
  ExportedRun run;
  CHECK(run.Errors("huge.jsonl", std::string(kHeader) +
                                     R"({"item":"a1","scores":{"correctness":1e400,"safety":1}})"
                                     "\n"
                                     R"({"item":"a2","scores":{"correctness":4,"safety":1}})"
                                     "\n") ==
        std::vector<std::string>{"huge.jsonl:2: number overflow parsing '1e400'"});
  CHECK(run.Errors("huge-header.jsonl", R"({"format":"stagegate-scores","version":1e999})") ==
        std::vector<std::string>{"huge-header.jsonl:1: number overflow parsing '1e999'"});
}

}  // namespace
}  // namespace stagegate::review
