// Usability judgements (usable as it is, after correction, not usable) in the scores files:
// imported from JSON Lines and CSV, every bad line named, old files still read, the store's copy
// kept across reimports and across closing the store.

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "review/import.h"
#include "review/usability_fields.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::review {
namespace {

using testing::Ok;
using testing::RequireOk;

constexpr char kRubric[] =
    R"({"id":"r","criteria":[{"id":"correctness","weight":1,"hard":false,"floor":0,)"
    R"("levels":[{"level":1},{"level":2},{"level":3},{"level":4},{"level":5}]}],)"
    R"("pass_rule":{"min_weighted_mean":3}})";

// A store file with one run whose export "x-1" gave items a1, a2 and a3 to reviewer r1, scored
// on correctness 1-5.
struct ExportedRun {
  testing::TempDir dir;
  std::unique_ptr<store::Store> store = Ok(store::Store::Open(dir / "store.db"));

  ExportedRun() {
    RequireOk(store->CreateRun({.id = "run-u",
                                .scenario_name = "usability",
                                .scenario_file = "usability.yaml",
                                .fingerprint = "sha256:u",
                                .scenario_json = "{}",
                                .started_unix_ms = 1}));
    const int64_t phase = Ok(store->AddPhase(
        {.run_id = "run-u", .ordinal = 1, .stage = "bare", .phase = "steady", .at_rest = true}));
    std::vector<load::RequestRecord> records(3);
    for (int64_t n = 1; n <= 3; ++n) {
      load::RequestRecord& r = records[static_cast<size_t>(n - 1)];
      r.run_id = "run-u";
      r.phase_id = phase;
      r.sequence = n;
      r.task_id = "task-" + std::to_string(n);
      r.answer_text = "answer " + std::to_string(n);
    }
    RequireOk(store->AddRequests(records));
    RequireOk(store->AddExport({.export_id = "x-1",
                                .run_id = "run-u",
                                .created_unix_ms = 1000,
                                .reviewers = 1,
                                .per_item = 1,
                                .rubric_json = kRubric},
                               {{.item_id = "a1", .request_id = 1, .reviewer = "r1"},
                                {.item_id = "a2", .request_id = 2, .reviewer = "r1"},
                                {.item_id = "a3", .request_id = 3, .reviewer = "r1"}}));
  }

  ImportResult Import(const std::string& name, const std::string& text, bool replace = false) {
    const std::string path = dir / name;
    testing::WriteText(path, text);
    ImportResult result = Ok(ImportScores(*store, "run-u", {path}, {.replace = replace}));
    for (std::string& error : result.errors)
      error = ReplaceAll(error, dir.path() + "/", "");
    return result;
  }

  std::vector<store::Usability> Stored() { return Ok(store->ListUsability("run-u")); }
};

constexpr char kHeader[] =
    R"({"format":"stagegate-scores","version":1,"export_id":"x-1","reviewer":"r1"})"
    "\n";

TEST_CASE("usability judgements import from JSON Lines and are stored with their text and time",
          "[correction]") {
  ExportedRun run;
  const ImportResult result = run.Import(
      "r1.jsonl",
      std::string(kHeader) +
          R"({"item":"a1","scores":{"correctness":4},"seconds":30,"usability":"as_is"})"
          "\n"
          R"({"item":"a2","scores":{"correctness":3},"seconds":50,"usability":"corrected",)"
          R"("corrected_text":"Book leave in <b>HR Portal</b> \u00e9","correction_seconds":21.5})"
          "\n"
          R"({"item":"a3","scores":{"correctness":1},"seconds":9,"usability":"unusable",)"
          R"("corrected_text":null,"correction_seconds":null})"
          "\n");
  REQUIRE(result.errors.empty());
  CHECK(result.added == 3);
  CHECK(result.usability_added == 3);
  const std::vector<store::Usability> stored = run.Stored();
  REQUIRE(stored.size() == 3);
  CHECK(stored[0].item_id == "a1");
  CHECK(stored[0].usability == "as_is");
  CHECK_FALSE(stored[0].corrected_text);
  CHECK(stored[1].usability == "corrected");
  CHECK(stored[1].corrected_text == "Book leave in <b>HR Portal</b> \xC3\xA9");
  CHECK(stored[1].correction_seconds == 21.5);
  CHECK(stored[1].imported_unix_ms > 0);
  CHECK(stored[2].usability == "unusable");
  CHECK_FALSE(stored[2].correction_seconds);
}

TEST_CASE("usability judgements import from the CSV packet's columns", "[correction]") {
  ExportedRun run;
  const ImportResult result =
      run.Import("r1.csv",
                 "export_id,reviewer,item,answer,correctness,seconds,usability,corrected_text,"
                 "correction_seconds\n"
                 "x-1,r1,a1,answer 1,4,30,as_is,,\n"
                 "x-1,r1,a2,answer 2,3,50,corrected,\"Line one,\nline two\",12\n"
                 "x-1,r1,a3,answer 3,2,10,,,\n");
  REQUIRE(result.errors.empty());
  CHECK(result.items == 3);
  CHECK(result.usability_added == 2);  // a3 has no judgement
  const std::vector<store::Usability> stored = run.Stored();
  REQUIRE(stored.size() == 2);
  CHECK(stored[1].item_id == "a2");
  CHECK(stored[1].corrected_text == "Line one,\nline two");
  CHECK(stored[1].correction_seconds == 12);
}

TEST_CASE("files without the usability fields still import", "[correction]") {
  ExportedRun run;
  CHECK(run.Import("old.jsonl", std::string(kHeader) +
                                    R"({"item":"a1","scores":{"correctness":4},"seconds":30})"
                                    "\n")
            .errors.empty());
  CHECK(run.Import("old.csv",
                   "export_id,reviewer,item,correctness,seconds\n"
                   "x-1,r1,a2,3,20\n")
            .errors.empty());
  CHECK(Ok(run.store->ListScores("run-u")).size() == 2);
  CHECK(run.Stored().empty());
}

TEST_CASE("hostile usability fields are each named by file and line, and nothing is written",
          "[correction]") {
  ExportedRun run;
  const std::string huge(kMaxCorrectedText + 1, 'x');
  const ImportResult jsonl = run.Import(
      "bad.jsonl",
      std::string(kHeader) +
          R"({"item":"a1","scores":{"correctness":4},"usability":"mostly"})"
          "\n"
          R"({"item":"a2","scores":{"correctness":4},"usability":"as_is","corrected_text":"x"})"
          "\n"
          R"({"item":"a3","scores":{"correctness":4},"usability":"corrected",)"
          R"("corrected_text":"ok","correction_seconds":-3})"
          "\n");
  CHECK(jsonl.errors ==
        std::vector<std::string>{
            "bad.jsonl:2: item 'a1': 'usability' must be one of as_is, corrected, unusable, got "
            "\"mostly\"",
            "bad.jsonl:3: item 'a2': 'corrected_text' is given, but 'usability' is as_is, not "
            "corrected",
            "bad.jsonl:4: item 'a3': 'correction_seconds' must be a number of seconds from 0 to "
            "86400, got -3"});
  const ImportResult more = run.Import(
      "more.jsonl",
      std::string(kHeader) +
          R"({"item":"a1","scores":{"correctness":4},"usability":"corrected","corrected_text":")" +
          huge +
          R"("})"
          "\n"
          R"({"item":"a2","scores":{"correctness":4},"usability":"corrected"})"
          "\n"
          R"({"item":"a3","scores":{"correctness":4},"corrected_text":"fixed"})"
          "\n");
  CHECK(more.errors == std::vector<std::string>{
                           "more.jsonl:2: item 'a1': 'corrected_text' is 100001 bytes, more than "
                           "100000",
                           "more.jsonl:3: item 'a2': 'usability' is corrected, but "
                           "'corrected_text' is missing",
                           "more.jsonl:4: item 'a3': 'corrected_text' is given without "
                           "'usability': corrected"});
  // A correction of nothing but spaces is no correction, in JSON Lines as in a CSV cell.
  const ImportResult blank = run.Import(
      "blank.jsonl",
      std::string(kHeader) +
          R"({"item":"a1","scores":{"correctness":4},"usability":"corrected","corrected_text":" \n "})"
          "\n");
  CHECK(blank.errors == std::vector<std::string>{"blank.jsonl:2: item 'a1': 'usability' is "
                                                 "corrected, but 'corrected_text' is missing"});
  const ImportResult csv = run.Import(
      "bad.csv",
      "export_id,reviewer,item,correctness,seconds,usability,corrected_text,correction_seconds\n"
      "x-1,r1,a1,4,,usable,,\n"
      "x-1,r1,a2,4,,unusable,,5\n"
      "x-1,r1,a3,4,,corrected,fixed,soon\n");
  CHECK(csv.errors ==
        std::vector<std::string>{
            "bad.csv:2: item 'a1': 'usability' must be one of as_is, corrected, unusable, got "
            "\"usable\"",
            "bad.csv:3: item 'a2': 'correction_seconds' is given, but 'usability' is unusable, "
            "not corrected",
            "bad.csv:4: item 'a3': 'correction_seconds' must be a number of seconds from 0 to "
            "86400, got \"soon\""});
  CHECK(run.Stored().empty());
  CHECK(Ok(run.store->ListScores("run-u")).empty());
}

TEST_CASE("a reimport keeps stored judgements: the same is unchanged, another needs --replace",
          "[correction]") {
  ExportedRun run;
  const std::string first =
      std::string(kHeader) +
      R"({"item":"a1","scores":{"correctness":4},"usability":"corrected","corrected_text":"v1",)"
      R"("correction_seconds":10})"
      "\n";
  REQUIRE(run.Import("first.jsonl", first).errors.empty());
  const ImportResult again = run.Import("again.jsonl", first);
  CHECK(again.errors.empty());
  CHECK(again.usability_unchanged == 1);
  CHECK(again.usability_added == 0);
  // An old-format file of the same item leaves the judgement alone.
  CHECK(run.Import("old.jsonl", std::string(kHeader) + R"({"item":"a1","scores":{"correctness":4}})"
                                                       "\n")
            .errors.empty());
  REQUIRE(run.Stored().size() == 1);
  CHECK(run.Stored()[0].corrected_text == "v1");
  const std::string changed = ReplaceAll(first, "\"v1\"", "\"v2\"");
  CHECK(run.Import("changed.jsonl", changed).errors ==
        std::vector<std::string>{
            "changed.jsonl:2: item 'a1': the store has another usability judgement (corrected) "
            "from an earlier import; give --replace to change it (to corrected)"});
  CHECK(run.Stored()[0].corrected_text == "v1");
  const ImportResult replaced = run.Import("changed.jsonl", changed, true);
  CHECK(replaced.errors.empty());
  CHECK(replaced.usability_replaced == 1);
  CHECK(run.Stored()[0].corrected_text == "v2");
}

TEST_CASE("usability judgements round-trip through the store and survive reopening it",
          "[correction]") {
  ExportedRun run;
  RequireOk(run.store->AddUsability(
      {{.item_id = "a2",
        .reviewer = "r1",
        .usability = "corrected",
        .corrected_text = "fixed \xE2\x80\xA8 text",
        .correction_seconds = 7.25,
        .imported_unix_ms = 42},
       {.item_id = "a1", .reviewer = "r1", .usability = "as_is", .imported_unix_ms = 43}}));
  CHECK_FALSE(Ok(run.store->FindUsability("a3", "r1")));
  run.store.reset();
  run.store = Ok(store::Store::Open(run.dir / "store.db"));
  const std::vector<store::Usability> stored = run.Stored();
  REQUIRE(stored.size() == 2);
  CHECK(stored[0].item_id == "a1");  // by item
  CHECK(stored[0].usability == "as_is");
  CHECK_FALSE(stored[0].corrected_text);
  CHECK_FALSE(stored[0].correction_seconds);
  CHECK(stored[0].imported_unix_ms == 43);
  const std::optional<store::Usability> found = Ok(run.store->FindUsability("a2", "r1"));
  REQUIRE(found);
  CHECK(found->corrected_text == "fixed \xE2\x80\xA8 text");
  CHECK(found->correction_seconds == 7.25);
  CHECK(found->SameAs(stored[1]));
  // The schema refuses a usability that is not one of the three.
  CHECK_FALSE(
      run.store->AddUsability({{.item_id = "a3", .reviewer = "r1", .usability = "meh"}}).ok());
  CHECK(run.Stored().size() == 2);
}

}  // namespace
}  // namespace stagegate::review
