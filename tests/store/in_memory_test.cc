// Store::OpenInMemory: the same store as on disk, in memory alone.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "load/request_record.h"
#include "store/schema.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::store {
namespace {

using testing::RequireOk;

std::unique_ptr<Store> OpenInMemory() {
  return testing::Ok(Store::OpenInMemory());
}

RunInfo Run(const std::string& id) {
  return {.id = id,
          .scenario_name = "scenario of " + id,
          .scenario_file = "scenarios/" + id + ".yaml",
          .fingerprint = "sha256:" + id,
          .scenario_json = "{}",
          .started_unix_ms = 1000};
}

load::RequestRecord Request(const std::string& run_id, int64_t phase_id, int64_t sequence) {
  load::RequestRecord r;
  r.run_id = run_id;
  r.phase_id = phase_id;
  r.sequence = sequence;
  r.task_id = "task-" + std::to_string(sequence);
  r.intended_ns = 1'000 * sequence;
  r.sent_ns = 1'000 * sequence + 7;
  r.end_ns = 1'000 * sequence + 900;
  r.outcome = load::Outcome::kOk;
  r.http_status = 200;
  r.answer_text = "answer " + std::to_string(sequence);
  r.chunk_times_ns = {1'000 * sequence + 300, 1'000 * sequence + 900};
  return r;
}

TEST_CASE("Store::OpenInMemory keeps runs, phases and requests with the current schema",
          "[store]") {
  std::unique_ptr<Store> store = OpenInMemory();
  Result<int> version = store->schema_version();
  REQUIRE(version.ok());
  CHECK(*version == CurrentSchemaVersion());

  RequireOk(store->CreateRun(Run("run-1")));
  Result<int64_t> phase_id = store->AddPhase(
      {.run_id = "run-1", .ordinal = 1, .stage = "steady", .phase = "rate-2", .level = 2.0});
  REQUIRE(phase_id.ok());
  std::vector<load::RequestRecord> requests = {Request("run-1", *phase_id, 1),
                                               Request("run-1", *phase_id, 0)};
  requests[0].invalid_utf8 = true;
  requests[0].cached_tokens = 640;
  requests[0].session = 3;
  requests[0].turn = 2;
  requests[0].outcome = load::Outcome::kMemoryLimit;
  RequireOk(store->AddRequests(requests));

  Result<std::vector<RunInfo>> runs = store->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1u);
  CHECK((*runs)[0].id == "run-1");
  CHECK((*runs)[0].fingerprint == "sha256:run-1");
  Result<std::vector<PhaseInfo>> phases = store->ListPhases("run-1");
  REQUIRE(phases.ok());
  REQUIRE(phases->size() == 1u);
  CHECK((*phases)[0].id == *phase_id);
  CHECK((*phases)[0].stage == "steady");
  CHECK((*phases)[0].phase == "rate-2");
  CHECK((*phases)[0].level == 2.0);
  Result<std::vector<load::RequestRecord>> listed = store->ListRequests("run-1");
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 2u);
  CHECK((*listed)[0].sequence == 0);  // schedule order
  CHECK((*listed)[0].answer_text == "answer 0");
  CHECK((*listed)[0].chunk_times_ns == requests[1].chunk_times_ns);
  CHECK((*listed)[1].sequence == 1);
  CHECK((*listed)[1].task_id == "task-1");
  CHECK((*listed)[1].invalid_utf8);
  CHECK((*listed)[1].cached_tokens == 640);
  CHECK_FALSE((*listed)[0].cached_tokens.has_value());
  CHECK((*listed)[1].session == 3);
  CHECK((*listed)[1].turn == 2);
  CHECK_FALSE((*listed)[0].session.has_value());
  CHECK_FALSE((*listed)[0].turn.has_value());
  CHECK((*listed)[1].outcome == load::Outcome::kMemoryLimit);
  CHECK_FALSE((*listed)[0].invalid_utf8);
}

TEST_CASE("Store::OpenInMemory checks foreign keys like a store on disk", "[store]") {
  std::unique_ptr<Store> store = OpenInMemory();
  Result<int64_t> orphan =
      store->AddPhase({.run_id = "run-x", .ordinal = 1, .stage = "steady", .phase = "orphan"});
  REQUIRE_FALSE(orphan.ok());
  CHECK(orphan.status().message() == "phase steady/orphan: step: FOREIGN KEY constraint failed");
}

TEST_CASE("Two stores in memory are independent", "[store]") {
  std::unique_ptr<Store> first = OpenInMemory();
  std::unique_ptr<Store> second = OpenInMemory();
  RequireOk(first->CreateRun(Run("run-1")));

  Result<std::vector<RunInfo>> in_second = second->ListRuns();
  REQUIRE(in_second.ok());
  CHECK(in_second->empty());
  // The same id again is no conflict in the other store.
  RequireOk(second->CreateRun(Run("run-1")));
  RequireOk(second->CreateRun(Run("run-2")));
  Result<std::vector<RunInfo>> in_first = first->ListRuns();
  REQUIRE(in_first.ok());
  CHECK(in_first->size() == 1u);
  in_second = second->ListRuns();
  REQUIRE(in_second.ok());
  CHECK(in_second->size() == 2u);
}

}  // namespace
}  // namespace stagegate::store
