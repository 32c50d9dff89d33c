// The store's typed reads and writes of review data: sampled answers, exports, review items and
// scores, on stores in memory.

#include "store/review_data.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "load/request_record.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::store {
namespace {

using testing::Ok;
using testing::RequireOk;

// A store with runs "run-1" and "run-2". Run 1 has a phase of stage "steady" at rest (requests
// 0-1) and one under load (requests 2-4); run 2 has one phase (request 0). Request ids count from 1
// in that order.
struct ReviewStore {
  std::unique_ptr<Store> store;
  int64_t at_rest = 0, under_load = 0, other = 0;  // phase ids

  explicit ReviewStore(std::unique_ptr<Store> opened) : store(std::move(opened)) {
    for (const char* run : {"run-1", "run-2"})
      RequireOk(store->CreateRun({.id = run,
                                  .scenario_name = "review",
                                  .scenario_file = "review.yaml",
                                  .fingerprint = "sha256:x",
                                  .scenario_json = "{}",
                                  .started_unix_ms = 1}));
    at_rest = Ok(store->AddPhase(
        {.run_id = "run-1", .ordinal = 1, .stage = "steady", .phase = "steady", .at_rest = true}));
    under_load =
        Ok(store->AddPhase({.run_id = "run-1", .ordinal = 2, .stage = "steady", .phase = "load"}));
    other =
        Ok(store->AddPhase({.run_id = "run-2", .ordinal = 1, .stage = "steady", .phase = "load"}));
    std::vector<load::RequestRecord> records;
    for (int64_t sequence = 0; sequence < 5; ++sequence)
      records.push_back(Request("run-1", sequence < 2 ? at_rest : under_load, sequence));
    records.push_back(Request("run-2", other, 0));
    records[1].http_status.reset();
    records[3].tool_calls_json = R"([{"index":0,"name":"lookup"}])";
    RequireOk(store->AddRequests(records));
  }

  static load::RequestRecord Request(const std::string& run_id, int64_t phase_id,
                                     int64_t sequence) {
    load::RequestRecord r;
    r.run_id = run_id;
    r.phase_id = phase_id;
    r.sequence = sequence;
    r.task_id = run_id + "-task-" + std::to_string(sequence);
    r.intended_ns = sequence;
    r.outcome = load::Outcome::kOk;
    r.http_status = 200 + sequence;
    r.answer_text = "answer " + std::to_string(sequence) + " of " + run_id;
    return r;
  }

  // An export of run 1 (or `run_id`) made at `created_unix_ms`.
  static ExportInfo Export(const std::string& id, int64_t created_unix_ms,
                           const std::string& scorer = kReviewersScorer,
                           const std::string& run_id = "run-1") {
    return {.export_id = id,
            .run_id = run_id,
            .created_unix_ms = created_unix_ms,
            .reviewers = 3,
            .per_item = 2,
            .calibration = 1,
            .rubric_json = R"({"id":"rubric of )" + id + R"("})",
            .scorer = scorer};
  }
};

ReviewStore InMemory() {
  return ReviewStore(Ok(Store::OpenInMemory()));
}

Score MakeScore(const std::string& item, const std::string& reviewer, const std::string& criterion,
                int64_t value, std::optional<double> seconds = std::nullopt) {
  return {.item_id = item,
          .reviewer = reviewer,
          .criterion = criterion,
          .value = value,
          .seconds = seconds,
          .imported_unix_ms = 1700000000000};
}

TEST_CASE("ListSampledAnswers reads a run's sampled answers by request id", "[store][review]") {
  ReviewStore s = InMemory();
  // Marked out of order, in both conditions; request 3 (sequence 2) is not sampled.
  RequireOk(s.store->AddAnswers("run-1", "under_load", {{s.under_load, 4}, {s.under_load, 3}}));
  RequireOk(s.store->AddAnswers("run-1", "at_rest", {{s.at_rest, 1}, {s.at_rest, 0}}));
  RequireOk(s.store->AddAnswers("run-2", "under_load", {{s.other, 0}}));

  const std::vector<SampledAnswer> answers = Ok(s.store->ListSampledAnswers("run-1"));

  REQUIRE(answers.size() == 4u);
  CHECK(answers[0].request_id == 1);
  CHECK(answers[0].condition == "at_rest");
  CHECK(answers[0].task_id == "run-1-task-0");
  CHECK(answers[0].stage == "steady");
  CHECK(answers[0].answer_text == "answer 0 of run-1");
  CHECK(answers[0].http_status == 200);
  CHECK(answers[1].request_id == 2);
  CHECK_FALSE(answers[1].http_status.has_value());
  CHECK(answers[2].request_id == 4);
  CHECK(answers[2].condition == "under_load");
  CHECK(answers[2].stage == "steady");
  CHECK(answers[2].tool_calls_json == R"([{"index":0,"name":"lookup"}])");
  CHECK(answers[2].http_status == 203);
  CHECK(answers[3].request_id == 5);
  CHECK(answers[3].task_id == "run-1-task-4");
  CHECK(answers[3].tool_calls_json == "[]");

  const std::vector<SampledAnswer> other = Ok(s.store->ListSampledAnswers("run-2"));
  REQUIRE(other.size() == 1u);
  CHECK(other[0].request_id == 6);
  CHECK(other[0].answer_text == "answer 0 of run-2");
  CHECK(Ok(s.store->ListSampledAnswers("run-x")).empty());
}

TEST_CASE("AddExport stores an export and its items; ListExports lists a run's newest first",
          "[store][review]") {
  ReviewStore s = InMemory();
  // The item's export_id is the export's, whatever the item says.
  RequireOk(s.store->AddExport(ReviewStore::Export("x-old", 1000),
                               {{.item_id = "i-b", .request_id = 2, .reviewer = "r2"},
                                {.item_id = "i-a",
                                 .export_id = "elsewhere",
                                 .request_id = 1,
                                 .reviewer = "r1",
                                 .calibration = true}}));
  RequireOk(s.store->AddExport(ReviewStore::Export("x-new", 3000), {}));
  // Made in the same millisecond as x-new, after it.
  RequireOk(s.store->AddExport(ReviewStore::Export("judge-1", 3000, "judge:m"),
                               {{.item_id = "j-1", .request_id = 1, .reviewer = "judge"}}));
  RequireOk(s.store->AddExport(ReviewStore::Export("x-other", 2000, kReviewersScorer, "run-2"),
                               {{.item_id = "i-c", .request_id = 6, .reviewer = "r1"}}));

  const std::vector<ExportInfo> exports = Ok(s.store->ListExports("run-1"));
  REQUIRE(exports.size() == 3u);
  CHECK(exports[0].export_id == "judge-1");
  CHECK(exports[0].scorer == "judge:m");
  CHECK(exports[1].export_id == "x-new");
  CHECK(exports[2].export_id == "x-old");
  CHECK(exports[2].run_id == "run-1");
  CHECK(exports[2].created_unix_ms == 1000);
  CHECK(exports[2].reviewers == 3);
  CHECK(exports[2].per_item == 2);
  CHECK(exports[2].calibration == 1);
  CHECK(exports[2].rubric_json == R"({"id":"rubric of x-old"})");
  CHECK(exports[2].scorer == "reviewers");

  const std::vector<ReviewItem> items = Ok(s.store->ListReviewItems("run-1"));
  REQUIRE(items.size() == 3u);
  CHECK(items[0].item_id == "i-a");
  CHECK(items[0].export_id == "x-old");
  CHECK(items[0].request_id == 1);
  CHECK(items[0].reviewer == "r1");
  CHECK(items[0].calibration);
  CHECK(items[0].scorer == "reviewers");
  CHECK(items[1].item_id == "i-b");
  CHECK_FALSE(items[1].calibration);
  CHECK(items[1].reviewer == "r2");
  CHECK(items[2].item_id == "j-1");
  CHECK(items[2].export_id == "judge-1");
  CHECK(items[2].scorer == "judge:m");

  const std::vector<ReviewItem> other = Ok(s.store->ListReviewItems("run-2"));
  REQUIRE(other.size() == 1u);
  CHECK(other[0].item_id == "i-c");
  CHECK(Ok(s.store->ListExports("run-2")).size() == 1u);
  CHECK(Ok(s.store->ListExports("run-x")).empty());
}

TEST_CASE("AddExport stores all of an export or none of it", "[store][review]") {
  ReviewStore s = InMemory();
  RequireOk(s.store->AddExport(ReviewStore::Export("x-1", 1000),
                               {{.item_id = "i-1", .request_id = 1, .reviewer = "r1"}}));

  SECTION("an item id taken already") {
    Status status = s.store->AddExport(ReviewStore::Export("x-2", 2000),
                                       {{.item_id = "i-2", .request_id = 2, .reviewer = "r1"},
                                        {.item_id = "i-1", .request_id = 3, .reviewer = "r1"}});
    CHECK(status.code() == Status::Code::kStoreError);
    CHECK(status.message() == "item i-1: step: UNIQUE constraint failed: review_items.item_id");
  }
  SECTION("an item of a request that is not stored") {
    Status status = s.store->AddExport(ReviewStore::Export("x-2", 2000),
                                       {{.item_id = "i-2", .request_id = 99, .reviewer = "r1"}});
    CHECK(status.message() == "item i-2: step: FOREIGN KEY constraint failed");
  }
  SECTION("a score of an item that is not stored") {
    Status status = s.store->AddExport(ReviewStore::Export("x-2", 2000, "judge:m"),
                                       {{.item_id = "i-2", .request_id = 2, .reviewer = "judge"}},
                                       {MakeScore("i-9", "judge", "correctness", 3)});
    CHECK(status.message() == "score of item i-9: step: FOREIGN KEY constraint failed");
  }
  SECTION("an export id taken already") {
    Status status = s.store->AddExport(ReviewStore::Export("x-1", 2000),
                                       {{.item_id = "i-2", .request_id = 2, .reviewer = "r1"}});
    CHECK(status.message() == "export x-1: step: UNIQUE constraint failed: exports.export_id");
  }
  const std::vector<ExportInfo> exports = Ok(s.store->ListExports("run-1"));
  REQUIRE(exports.size() == 1u);
  CHECK(exports[0].created_unix_ms == 1000);
  const std::vector<ReviewItem> items = Ok(s.store->ListReviewItems("run-1"));
  REQUIRE(items.size() == 1u);
  CHECK(items[0].item_id == "i-1");
  CHECK(items[0].request_id == 1);
  CHECK(Ok(s.store->ListScores("run-1")).empty());
}

TEST_CASE("AddExport stores an LLM judge's scores with its items", "[store][review]") {
  ReviewStore s = InMemory();
  Score correctness = MakeScore("j-1", "judge", "correctness", 4, 2.5);
  correctness.source = "judge";
  RequireOk(s.store->AddExport(ReviewStore::Export("judge-1", 1000, "judge:m"),
                               {{.item_id = "j-1", .request_id = 1, .reviewer = "judge"}},
                               {correctness, MakeScore("j-1", "judge", "clarity", 2)}));

  const std::vector<StoredScore> scores = Ok(s.store->ListScores("run-1"));
  REQUIRE(scores.size() == 2u);
  CHECK(scores[0].criterion == "clarity");
  CHECK(scores[0].value == 2);
  CHECK(scores[1].criterion == "correctness");
  CHECK(scores[1].value == 4);
  CHECK(scores[1].item_seconds == 2.5);
  CHECK(Ok(s.store->FindScore("j-1", "judge", "correctness")) == 4);

  SECTION("a score stored already is refused, and the second export is not stored") {
    Status status = s.store->AddExport(ReviewStore::Export("judge-2", 2000, "judge:m"), {},
                                       {MakeScore("j-1", "judge", "clarity", 5)});
    CHECK(status.message() ==
          "score of item j-1: step: UNIQUE constraint failed: scores.item_id, scores.reviewer, "
          "scores.criterion");
    CHECK(Ok(s.store->FindScore("j-1", "judge", "clarity")) == 2);
    CHECK(Ok(s.store->ListExports("run-1")).size() == 1u);
  }
}

// Run 1 with an export to reviewers (items i-1, i-2 to r1 and r2) and a judge's (j-1); run 2
// with one of its own (i-9).
ReviewStore WithItems() {
  ReviewStore s = InMemory();
  RequireOk(s.store->AddExport(ReviewStore::Export("x-1", 1000),
                               {{.item_id = "i-1", .request_id = 1, .reviewer = "r1"},
                                {.item_id = "i-2", .request_id = 1, .reviewer = "r2"}}));
  RequireOk(s.store->AddExport(ReviewStore::Export("judge-1", 2000, "judge:m"),
                               {{.item_id = "j-1", .request_id = 1, .reviewer = "judge"}}));
  RequireOk(s.store->AddExport(ReviewStore::Export("x-9", 1000, kReviewersScorer, "run-2"),
                               {{.item_id = "i-9", .request_id = 6, .reviewer = "r1"}}));
  return s;
}

TEST_CASE("AddScores adds and replaces scores, all or none; FindScore reads one level",
          "[store][review]") {
  ReviewStore s = WithItems();
  RequireOk(s.store->AddScores({MakeScore("i-1", "r1", "correctness", 3, 12.5),
                                MakeScore("i-1", "r1", "clarity", 4, 12.5)}));
  CHECK(Ok(s.store->FindScore("i-1", "r1", "correctness")) == 3);
  CHECK(Ok(s.store->FindScore("i-1", "r1", "clarity")) == 4);
  CHECK_FALSE(Ok(s.store->FindScore("i-1", "r2", "correctness")).has_value());
  CHECK_FALSE(Ok(s.store->FindScore("i-2", "r1", "correctness")).has_value());
  CHECK_FALSE(Ok(s.store->FindScore("i-1", "r1", "tone")).has_value());

  SECTION("a score stored already is replaced") {
    RequireOk(s.store->AddScores({MakeScore("i-1", "r1", "correctness", 1, 20)}));
    CHECK(Ok(s.store->FindScore("i-1", "r1", "correctness")) == 1);
    const std::vector<StoredScore> scores = Ok(s.store->ListScores("run-1"));
    REQUIRE(scores.size() == 2u);
    CHECK(scores[1].criterion == "correctness");
    CHECK(scores[1].value == 1);
    CHECK(scores[1].item_seconds == 20);
  }
  SECTION("one bad score and none of the batch is stored") {
    Status status = s.store->AddScores({MakeScore("i-1", "r1", "correctness", 1),
                                        MakeScore("i-2", "r2", "correctness", 2),
                                        MakeScore("i-404", "r2", "correctness", 2)});
    CHECK(status.code() == Status::Code::kStoreError);
    CHECK(status.message() == "score of item i-404: step: FOREIGN KEY constraint failed");
    CHECK(Ok(s.store->FindScore("i-1", "r1", "correctness")) == 3);
    CHECK_FALSE(Ok(s.store->FindScore("i-2", "r2", "correctness")).has_value());
  }
}

TEST_CASE("ListScores orders a run's scores, each with the longest time of its item and reviewer",
          "[store][review]") {
  ReviewStore s = WithItems();
  RequireOk(s.store->AddScores(
      {MakeScore("i-2", "r2", "correctness", 4, 10), MakeScore("i-2", "r2", "clarity", 3, 30),
       MakeScore("i-2", "r2", "tone", 2), MakeScore("i-1", "r1", "correctness", 5),
       MakeScore("i-9", "r1", "correctness", 1, 99)}));
  RequireOk(s.store->AddExport(ReviewStore::Export("judge-2", 3000, "judge:m"),
                               {{.item_id = "j-2", .request_id = 2, .reviewer = "judge"}},
                               {MakeScore("j-2", "judge", "correctness", 2, 1.5)}));

  const std::vector<StoredScore> scores = Ok(s.store->ListScores("run-1"));

  REQUIRE(scores.size() == 5u);
  CHECK(scores[0].item_id == "i-1");
  CHECK(scores[0].reviewer == "r1");
  CHECK(scores[0].criterion == "correctness");
  CHECK(scores[0].value == 5);
  CHECK_FALSE(scores[0].item_seconds.has_value());
  for (size_t i = 1; i <= 3; ++i) {
    INFO("row " << i);
    CHECK(scores[i].item_id == "i-2");
    CHECK(scores[i].reviewer == "r2");
    CHECK(scores[i].item_seconds == 30);
  }
  CHECK(scores[1].criterion == "clarity");
  CHECK(scores[1].value == 3);
  CHECK(scores[2].criterion == "correctness");
  CHECK(scores[2].value == 4);
  CHECK(scores[3].criterion == "tone");
  CHECK(scores[3].value == 2);
  CHECK(scores[4].item_id == "j-2");
  CHECK(scores[4].reviewer == "judge");
  CHECK(scores[4].item_seconds == 1.5);

  const std::vector<StoredScore> other = Ok(s.store->ListScores("run-2"));
  REQUIRE(other.size() == 1u);
  CHECK(other[0].item_id == "i-9");
  CHECK(other[0].item_seconds == 99);
}

TEST_CASE("ScoreLevelCounts counts the reviewers' levels, without a judge's or another run's",
          "[store][review]") {
  ReviewStore s = WithItems();
  RequireOk(s.store->AddScores(
      {MakeScore("i-1", "r1", "correctness", 4), MakeScore("i-2", "r2", "correctness", 4),
       MakeScore("i-1", "r1", "clarity", 2), MakeScore("i-2", "r2", "clarity", 3),
       MakeScore("j-1", "judge", "correctness", 1), MakeScore("i-9", "r1", "correctness", 4)}));

  const std::map<std::string, std::map<int64_t, int64_t>> counts =
      Ok(s.store->ScoreLevelCounts("run-1"));

  const std::map<std::string, std::map<int64_t, int64_t>> expected = {{"clarity", {{2, 1}, {3, 1}}},
                                                                      {"correctness", {{4, 2}}}};
  CHECK(counts == expected);
  CHECK(Ok(s.store->ScoreLevelCounts("run-2")) ==
        std::map<std::string, std::map<int64_t, int64_t>>{{"correctness", {{4, 1}}}});
  CHECK(Ok(s.store->ScoreLevelCounts("run-x")).empty());
}

TEST_CASE("ListReviewItems lists an item whose export is not stored, without a scorer",
          "[store][review]") {
  // Items stored before exports were have no export row; only a store on disk can be written
  // to from a second connection.
  testing::TempDir dir;
  ReviewStore s(Ok(Store::Open(dir / "store.db")));
  RequireOk(s.store->AddExport(ReviewStore::Export("x-1", 1000),
                               {{.item_id = "i-2", .request_id = 1, .reviewer = "r1"}}));
  {
    std::unique_ptr<Database> db = Ok(Database::Open(dir / "store.db"));
    RequireOk(
        db->Exec("INSERT INTO review_items (item_id, export_id, run_id, request_id, reviewer) "
                 "VALUES ('i-1', 'x-gone', 'run-1', 2, 'r1')"));
  }

  const std::vector<ReviewItem> items = Ok(s.store->ListReviewItems("run-1"));

  REQUIRE(items.size() == 2u);
  CHECK(items[0].item_id == "i-1");
  CHECK(items[0].export_id == "x-gone");
  CHECK(items[0].request_id == 2);
  CHECK_FALSE(items[0].scorer.has_value());
  CHECK(items[1].item_id == "i-2");
  CHECK(items[1].scorer == "reviewers");
}

}  // namespace
}  // namespace stagegate::store
