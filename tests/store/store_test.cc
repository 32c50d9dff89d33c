#include "store/store.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "load/request_record.h"
#include "store/schema.h"
#include "store/sqlite.h"
#include "test_paths.h"

namespace stagegate::store {
namespace {

namespace fs = std::filesystem;
using load::Outcome;
using load::RequestRecord;

// A fresh folder under the system's temp folder, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::random_device random;
    do {
      path_ = fs::temp_directory_path() /
              ("stagegate_store_test_" + std::to_string(random()) + "_" + std::to_string(random()));
    } while (!fs::create_directory(path_));
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::unique_ptr<Store> OpenStore(const std::string& path) {
  Result<std::unique_ptr<Store>> store = Store::Open(path);
  INFO(store.status().message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

std::unique_ptr<Database> OpenDatabase(const std::string& path) {
  Result<std::unique_ptr<Database>> db = Database::Open(path);
  INFO(db.status().message());
  REQUIRE(db.ok());
  return std::move(db).value();
}

void Exec(Database& db, const std::string& sql) {
  Status status = db.Exec(sql);
  INFO(status.message());
  REQUIRE(status.ok());
}

// Column 0 of every row `sql` returns, as text.
std::vector<std::string> QueryTexts(Database& db, const std::string& sql) {
  Result<Statement> query = Statement::Prepare(db, sql);
  INFO(sql << ": " << query.status().message());
  REQUIRE(query.ok());
  std::vector<std::string> rows;
  while (query->Step())
    rows.push_back(query->Text(0));
  REQUIRE(query->status().ok());
  return rows;
}

std::string QueryText(Database& db, const std::string& sql) {
  std::vector<std::string> rows = QueryTexts(db, sql);
  REQUIRE(rows.size() == 1u);
  return rows[0];
}

int64_t QueryInt(Database& db, const std::string& sql) {
  Result<Statement> query = Statement::Prepare(db, sql);
  INFO(sql << ": " << query.status().message());
  REQUIRE(query.ok());
  REQUIRE(query->Step());
  return query->Int(0);
}

int Version(Store& store) {
  Result<int> version = store.schema_version();
  INFO(version.status().message());
  REQUIRE(version.ok());
  return *version;
}

std::vector<std::string> TableNames(Database& db) {
  return QueryTexts(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
}

// Every schema object with the SQL text that created it.
std::vector<std::string> SchemaObjects(Database& db) {
  return QueryTexts(db,
                    "SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || ifnull(sql, '') "
                    "FROM sqlite_master ORDER BY type, name");
}

const std::vector<std::string> kCurrentTables = {
    "answers", "chunks", "exports",  "fault_results",     "phases",    "requests", "review_items",
    "runs",    "scores", "signoffs", "telemetry_samples", "usability",
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  INFO(path);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kV1Fixture = std::string(testing::TestdataDir()) + "/store/v1.sql";

std::vector<RunInfo> ListRuns(Store& store) {
  Result<std::vector<RunInfo>> runs = store.ListRuns();
  INFO(runs.status().message());
  REQUIRE(runs.ok());
  return *runs;
}

std::vector<PhaseInfo> ListPhases(Store& store, const std::string& run_id) {
  Result<std::vector<PhaseInfo>> phases = store.ListPhases(run_id);
  INFO(phases.status().message());
  REQUIRE(phases.ok());
  return *phases;
}

std::vector<RequestRecord> ListRequests(Store& store, const std::string& run_id) {
  Result<std::vector<RequestRecord>> requests = store.ListRequests(run_id);
  INFO(requests.status().message());
  REQUIRE(requests.ok());
  return *requests;
}

std::optional<RunInfo> FindRun(Store& store, const std::string& run_id) {
  Result<std::optional<RunInfo>> run = store.FindRun(run_id);
  INFO(run.status().message());
  REQUIRE(run.ok());
  return *run;
}

void CheckOk(const Status& status) {
  INFO(status.message());
  CHECK(status.ok());
}

int64_t AddPhase(Store& store, const PhaseInfo& phase) {
  Result<int64_t> id = store.AddPhase(phase);
  INFO(id.status().message());
  REQUIRE(id.ok());
  return *id;
}

RunInfo MakeRun(const std::string& id, int64_t started_unix_ms,
                std::optional<int64_t> finished_unix_ms, RunStatus status) {
  RunInfo run;
  run.id = id;
  run.scenario_name = "scenario of " + id;
  run.scenario_file = "scenarios/" + id + ".yaml";
  run.fingerprint = "sha256:" + id + "-print";
  run.corpus_version = "corpus-" + id;
  run.scenario_json = R"({"name":")" + id + R"(","stages":[{"rate":2.5}]})";
  run.status = status;
  run.started_unix_ms = started_unix_ms;
  run.finished_unix_ms = finished_unix_ms;
  return run;
}

void CheckRun(const RunInfo& actual, const RunInfo& expected) {
  INFO("run " << expected.id);
  CHECK(actual.id == expected.id);
  CHECK(actual.scenario_name == expected.scenario_name);
  CHECK(actual.scenario_file == expected.scenario_file);
  CHECK(actual.fingerprint == expected.fingerprint);
  CHECK(actual.corpus_version == expected.corpus_version);
  CHECK(actual.scenario_json == expected.scenario_json);
  CHECK(RunStatusName(actual.status) == RunStatusName(expected.status));
  CHECK(actual.started_unix_ms == expected.started_unix_ms);
  CHECK(actual.finished_unix_ms.has_value() == expected.finished_unix_ms.has_value());
  CHECK(actual.finished_unix_ms == expected.finished_unix_ms);
}

void CheckPhase(const PhaseInfo& actual, const PhaseInfo& expected) {
  INFO("phase " << expected.stage << "/" << expected.phase);
  CHECK(actual.id == expected.id);
  CHECK(actual.run_id == expected.run_id);
  CHECK(actual.ordinal == expected.ordinal);
  CHECK(actual.stage == expected.stage);
  CHECK(actual.phase == expected.phase);
  CHECK(actual.level == expected.level);
  CHECK(actual.config_json == expected.config_json);
  CHECK(actual.started_ns == expected.started_ns);
  CHECK(actual.ended_ns == expected.ended_ns);
  CHECK(actual.status == expected.status);
}

void CheckRequest(const RequestRecord& actual, const RequestRecord& expected) {
  INFO("request phase_id " << expected.phase_id << " sequence " << expected.sequence);
  CHECK(actual.id == expected.id);
  CHECK(actual.run_id == expected.run_id);
  CHECK(actual.phase_id == expected.phase_id);
  CHECK(actual.sequence == expected.sequence);
  CHECK(actual.task_id == expected.task_id);
  CHECK(actual.persona == expected.persona);
  CHECK(actual.intended_ns == expected.intended_ns);
  CHECK(actual.sent_ns == expected.sent_ns);
  CHECK(actual.first_byte_ns == expected.first_byte_ns);
  CHECK(actual.first_token_ns == expected.first_token_ns);
  CHECK(actual.first_answer_ns == expected.first_answer_ns);
  CHECK(actual.end_ns == expected.end_ns);
  CHECK(load::OutcomeName(actual.outcome) == load::OutcomeName(expected.outcome));
  CHECK(actual.http_status == expected.http_status);
  CHECK(actual.curl_code == expected.curl_code);
  CHECK(actual.error_message == expected.error_message);
  CHECK(actual.retry_after_s == expected.retry_after_s);
  CHECK(actual.input_tokens == expected.input_tokens);
  CHECK(actual.output_tokens == expected.output_tokens);
  CHECK(actual.token_source == expected.token_source);
  CHECK(actual.finish_reason == expected.finish_reason);
  CHECK(actual.answer_text == expected.answer_text);
  CHECK(actual.trace_id == expected.trace_id);
  CHECK(actual.worker == expected.worker);
  CHECK(actual.warmup == expected.warmup);
  CHECK(actual.streamed == expected.streamed);
  CHECK(actual.queue_ns == expected.queue_ns);
  CHECK(actual.requested_input_tokens == expected.requested_input_tokens);
  CHECK(actual.requested_output_tokens == expected.requested_output_tokens);
  CHECK(actual.input_token_source == expected.input_token_source);
  CHECK(actual.reasoning_text == expected.reasoning_text);
  CHECK(actual.tool_calls_json == expected.tool_calls_json);
  CHECK(actual.server_timing == expected.server_timing);
  CHECK(actual.chunk_times_ns == expected.chunk_times_ns);
}

// The outcomes and the names stores keep them under. The names are data on disk: they must never
// change.
const std::vector<std::pair<Outcome, std::string>> kOutcomes = {
    {Outcome::kOk, "ok"},
    {Outcome::kHttpError, "http_error"},
    {Outcome::kShed, "shed"},
    {Outcome::kTimeout, "timeout"},
    {Outcome::kTransportError, "transport_error"},
    {Outcome::kMalformedStream, "malformed_stream"},
    {Outcome::kCancelled, "cancelled"},
    {Outcome::kDenied, "denied"},
};

// The optional fields of a request, one bit each, for MakeRequest's `set` mask.
enum : unsigned {
  kSent = 1u << 0,
  kFirstByte = 1u << 1,
  kFirstToken = 1u << 2,
  kFirstAnswer = 1u << 3,
  kEnd = 1u << 4,
  kHttpStatus = 1u << 5,
  kCurlCode = 1u << 6,
  kRetryAfter = 1u << 7,
  kInputTokens = 1u << 8,
  kOutputTokens = 1u << 9,
  kAllOptionals = (1u << 10) - 1,
};

// A request whose every field differs from those of requests made with another `n`; the optional
// fields named in `set` have values, the others are absent.
RequestRecord MakeRequest(int n, const std::string& run_id, int64_t phase_id, int64_t sequence,
                          Outcome outcome, unsigned set) {
  const std::string tag = std::to_string(n);
  // Above 2^32, so a 32-bit column read would show.
  const int64_t base = 5'000'000'000'000 + n * int64_t{1'000'000'000};
  RequestRecord r;
  r.run_id = run_id;
  r.phase_id = phase_id;
  r.sequence = sequence;
  r.task_id = "task-" + tag;
  r.persona = "persona " + tag;
  r.intended_ns = base;
  if (set & kSent) r.sent_ns = base + 1'000 + n;
  if (set & kFirstByte) r.first_byte_ns = base + 2'000 + n;
  if (set & kFirstToken) r.first_token_ns = base + 3'000 + n;
  if (set & kFirstAnswer) r.first_answer_ns = base + 4'000 + n;
  if (set & kEnd) r.end_ns = base + 5'000 + n;
  r.outcome = outcome;
  if (set & kHttpStatus) r.http_status = 200 + n;
  if (set & kCurlCode) r.curl_code = 30 + n;
  r.error_message = "error " + tag + ": \"quoted\"\nsecond line";
  if (set & kRetryAfter) r.retry_after_s = 0.25 * n + 0.5;
  if (set & kInputTokens) r.input_tokens = 1'000 + n;
  if (set & kOutputTokens) r.output_tokens = 2'000 + n;
  r.token_source = n % 2 == 0 ? "usage" : "counted";
  r.finish_reason = "reason-" + tag;
  r.answer_text = "answer " + tag + " \xC3\xBC it's done";
  r.trace_id = "00-trace" + tag + "-01";
  r.worker = n % 3;
  r.warmup = n % 2 == 1;
  r.streamed = n % 2 == 0;
  if (set & kSent) r.queue_ns = 7'000 + n;
  if (set & kInputTokens) r.requested_input_tokens = 3'000 + n;
  if (set & kOutputTokens) r.requested_output_tokens = 4'000 + n;
  r.input_token_source = n % 2 == 0 ? "usage" : "requested";
  r.reasoning_text = "thinking " + tag;
  r.tool_calls_json = R"([{"index":0,"name":"tool-)" + tag + R"("}])";
  r.server_timing = "retrieval;dur=" + tag;
  // Chunk times around the send, before it too (a clock is never trusted to be kind).
  if (set & kEnd)
    r.chunk_times_ns = {base - 5 + n, base + 3'500 + n, base + 3'500 + n, base + 9'000'000'000};
  return r;
}

TEST_CASE("Store::Open creates the file, its folders and the current schema", "[store]") {
  TempDir dir;
  const fs::path path = dir.path() / "reports" / "nested" / "stagegate.db";
  REQUIRE_FALSE(fs::exists(dir.path() / "reports"));

  std::unique_ptr<Store> store = OpenStore(path.string());

  CHECK(fs::is_regular_file(path));
  CHECK(Version(*store) == CurrentSchemaVersion());
  CHECK(QueryText(store->TEST_database(), "PRAGMA journal_mode") == "wal");
  CHECK(QueryInt(store->TEST_database(), "PRAGMA foreign_keys") == 1);
  CHECK(TableNames(store->TEST_database()) == kCurrentTables);
  CHECK(ListRuns(*store).empty());
}

TEST_CASE("Store::Open reports a folder it cannot create", "[store]") {
  TempDir dir;
  std::ofstream(dir.File("plain-file")) << "not a folder";
  const std::string parent = (dir.path() / "plain-file" / "sub").string();

  Result<std::unique_ptr<Store>> store = Store::Open(parent + "/stagegate.db");

  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == Status::Code::kIoError);
  CHECK(store.status().message() ==
        parent + ": " + std::make_error_code(std::errc::not_a_directory).message());
}

TEST_CASE("The v1 fixture holds exactly the schema migration 1 writes", "[store]") {
  TempDir dir;
  std::unique_ptr<Database> migrated = OpenDatabase(dir.File("migrated.db"));
  CheckOk(Migrate(*migrated, 1));
  std::unique_ptr<Database> fixture = OpenDatabase(dir.File("fixture.db"));
  Exec(*fixture, ReadFile(kV1Fixture));

  CHECK(QueryInt(*fixture, "PRAGMA user_version") == 1);
  CHECK(QueryInt(*migrated, "PRAGMA user_version") == 1);
  CHECK(TableNames(*fixture) == std::vector<std::string>{"phases", "requests", "runs"});
  CHECK(SchemaObjects(*fixture) == SchemaObjects(*migrated));
}

TEST_CASE("Store::Open migrates a version 1 store and keeps its data", "[store]") {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    Exec(*db, ReadFile(kV1Fixture));
  }

  RunInfo expected_run;
  expected_run.id = "run-v1";
  expected_run.scenario_name = "support-chat";
  expected_run.scenario_file = "scenarios/support-chat.yaml";
  expected_run.fingerprint =
      "sha256:3f6c1a9e0b2d4c8e7a5f1b3d9c0e2a4f6b8d0c2e4a6f8b0d2c4e6a8f0b2d4c6e";
  expected_run.corpus_version = "corpus-2024.06";
  expected_run.scenario_json =
      R"({"name":"support-chat","stages":[{"name":"steady","phases":[{"name":"rate-2","rate":2}]}]})";
  expected_run.status = RunStatus::kComplete;
  expected_run.started_unix_ms = 1718000000000;
  expected_run.finished_unix_ms = 1718000065250;

  PhaseInfo expected_phase;
  expected_phase.id = 1;
  expected_phase.run_id = "run-v1";
  expected_phase.ordinal = 1;
  expected_phase.stage = "steady";
  expected_phase.phase = "rate-2";
  expected_phase.level = 2.0;
  expected_phase.config_json = R"({"rate":2,"duration_s":60})";
  expected_phase.started_ns = 1250000;
  expected_phase.ended_ns = 60001250000;
  expected_phase.status = PhaseStatus::kComplete;

  RequestRecord answered;
  answered.id = 1;
  answered.run_id = "run-v1";
  answered.phase_id = 1;
  answered.sequence = 0;
  answered.task_id = "refund-policy-01";
  answered.persona = "customer";
  answered.intended_ns = 1250000;
  answered.sent_ns = 1384000;
  answered.first_byte_ns = 182500000;
  answered.first_token_ns = 214750000;
  answered.first_answer_ns = 640125000;
  answered.end_ns = 2398400000;
  answered.outcome = Outcome::kOk;
  answered.http_status = 200;
  answered.input_tokens = 412;
  answered.output_tokens = 96;
  answered.token_source = "usage";
  answered.finish_reason = "stop";
  answered.answer_text = "Refunds are issued within 14 days of the return reaching our warehouse.";

  RequestRecord timed_out;
  timed_out.id = 2;
  timed_out.run_id = "run-v1";
  timed_out.phase_id = 1;
  timed_out.sequence = 1;
  timed_out.task_id = "order-status-07";
  timed_out.persona = "customer";
  timed_out.intended_ns = 501250000;
  timed_out.sent_ns = 501331000;
  timed_out.end_ns = 30501331000;
  timed_out.outcome = Outcome::kTimeout;
  timed_out.curl_code = 28;
  timed_out.error_message = "first token timeout after 30s";
  timed_out.input_tokens = 388;

  auto check_contents = [&](Store& store) {
    std::vector<RunInfo> runs = ListRuns(store);
    REQUIRE(runs.size() == 1u);
    CheckRun(runs[0], expected_run);
    std::vector<PhaseInfo> phases = ListPhases(store, "run-v1");
    REQUIRE(phases.size() == 1u);
    CheckPhase(phases[0], expected_phase);
    std::vector<RequestRecord> requests = ListRequests(store, "run-v1");
    REQUIRE(requests.size() == 2u);
    CheckRequest(requests[0], answered);  // trace_id, added by migration 2, reads ""
    CheckRequest(requests[1], timed_out);
    CHECK(TableNames(store.TEST_database()) == kCurrentTables);
  };

  {
    std::unique_ptr<Store> store = OpenStore(path);
    CHECK(Version(*store) == CurrentSchemaVersion());
    check_contents(*store);
  }
  SECTION("reopening a migrated store changes nothing") {
    std::unique_ptr<Store> store = OpenStore(path);
    std::vector<std::string> schema = SchemaObjects(store->TEST_database());
    store.reset();

    store = OpenStore(path);
    CHECK(Version(*store) == CurrentSchemaVersion());
    CHECK(SchemaObjects(store->TEST_database()) == schema);
    check_contents(*store);
  }
}

TEST_CASE("Store::Open refuses a store written by a newer schema", "[store]") {
  TempDir dir;
  const std::string path = dir.File("future.db");
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    Exec(*db, "PRAGMA user_version = 99");
  }

  Result<std::unique_ptr<Store>> store = Store::Open(path);

  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == Status::Code::kStoreError);
  CHECK(store.status().message() == path +
                                        ": the store has schema version 99, newer than this "
                                        "build's " +
                                        std::to_string(CurrentSchemaVersion()) +
                                        "; use a newer stagegate");
  // The store is left as it was: no tables, the same version.
  std::unique_ptr<Database> db = OpenDatabase(path);
  CHECK(QueryInt(*db, "PRAGMA user_version") == 99);
  CHECK(TableNames(*db).empty());
  CHECK(QueryText(*db, "PRAGMA journal_mode") == "delete");
}

TEST_CASE("Migrate refuses a target version it has no migration for", "[store]") {
  TempDir dir;
  std::unique_ptr<Database> db = OpenDatabase(dir.File("new.db"));
  Status status = Migrate(*db, CurrentSchemaVersion() + 1);
  CHECK(status.code() == Status::Code::kInternal);
  CHECK(status.message() == "no migration to schema " + std::to_string(CurrentSchemaVersion() + 1));
  CHECK(QueryInt(*db, "PRAGMA user_version") == 0);
}

TEST_CASE("Runs round trip through CreateRun, FindRun and ListRuns", "[store]") {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.File("stagegate.db"));
  const RunInfo middle = MakeRun("run-b", 2000, std::nullopt, RunStatus::kRunning);
  const RunInfo oldest = MakeRun("run-c", 1000, 1500, RunStatus::kComplete);
  const RunInfo newest = MakeRun("run-a", 3000, 9'000'000'000'000, RunStatus::kFailed);
  CheckOk(store->CreateRun(middle));
  CheckOk(store->CreateRun(oldest));
  CheckOk(store->CreateRun(newest));

  SECTION("ListRuns gives every field, newest first") {
    std::vector<RunInfo> runs = ListRuns(*store);
    REQUIRE(runs.size() == 3u);
    CheckRun(runs[0], newest);
    CheckRun(runs[1], middle);
    CheckRun(runs[2], oldest);
  }
  SECTION("FindRun gives every field") {
    for (const RunInfo& run : {middle, oldest, newest}) {
      std::optional<RunInfo> found = FindRun(*store, run.id);
      REQUIRE(found.has_value());
      CheckRun(*found, run);
    }
  }
  SECTION("FindRun of an unknown id finds nothing") {
    CHECK_FALSE(FindRun(*store, "run-x").has_value());
  }
  SECTION("a duplicate id is refused and the first run stays") {
    RunInfo duplicate = MakeRun("run-b", 4000, 4500, RunStatus::kComplete);
    duplicate.scenario_name = "another scenario";
    Status status = store->CreateRun(duplicate);
    CHECK(status.code() == Status::Code::kStoreError);
    CHECK(status.message() == "run run-b: step: UNIQUE constraint failed: runs.id");
    CHECK(QueryInt(store->TEST_database(), "SELECT count(*) FROM runs WHERE id = 'run-b'") == 1);
    std::optional<RunInfo> found = FindRun(*store, "run-b");
    REQUIRE(found.has_value());
    CheckRun(*found, middle);
  }
}

TEST_CASE("Every run status round trips", "[store]") {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.File("stagegate.db"));
  const std::vector<std::pair<RunStatus, std::string>> statuses = {
      {RunStatus::kRunning, "running"},         {RunStatus::kComplete, "complete"},
      {RunStatus::kInterrupted, "interrupted"}, {RunStatus::kResumed, "resumed"},
      {RunStatus::kFailed, "failed"},
  };
  int64_t started = 1000;
  for (const auto& [status, name] : statuses) {
    INFO(name);
    CHECK(RunStatusName(status) == name);
    const RunInfo run = MakeRun("run-" + name, started++, std::nullopt, status);
    CheckOk(store->CreateRun(run));
    CHECK(QueryText(store->TEST_database(),
                    "SELECT status FROM runs WHERE id = 'run-" + name + "'") == name);
    std::optional<RunInfo> found = FindRun(*store, run.id);
    REQUIRE(found.has_value());
    CheckRun(*found, run);
  }
}

TEST_CASE("SetRunStatus updates the status and finish time", "[store]") {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.File("stagegate.db"));
  RunInfo run = MakeRun("run-1", 1000, std::nullopt, RunStatus::kRunning);
  const RunInfo other = MakeRun("run-2", 500, std::nullopt, RunStatus::kRunning);
  CheckOk(store->CreateRun(run));
  CheckOk(store->CreateRun(other));

  CheckOk(store->SetRunStatus("run-1", RunStatus::kComplete, 7000));
  run.status = RunStatus::kComplete;
  run.finished_unix_ms = 7000;
  std::optional<RunInfo> found = FindRun(*store, "run-1");
  REQUIRE(found.has_value());
  CheckRun(*found, run);

  CheckOk(store->SetRunStatus("run-1", RunStatus::kResumed, std::nullopt));
  run.status = RunStatus::kResumed;
  run.finished_unix_ms = std::nullopt;
  found = FindRun(*store, "run-1");
  REQUIRE(found.has_value());
  CheckRun(*found, run);

  // The other run is untouched.
  found = FindRun(*store, "run-2");
  REQUIRE(found.has_value());
  CheckRun(*found, other);

  SECTION("an unknown id is not found") {
    Status status = store->SetRunStatus("x", RunStatus::kFailed, 8000);
    CHECK(status.code() == Status::Code::kNotFound);
    CHECK(status.message() == "no run 'x'");
    CHECK(ListRuns(*store).size() == 2u);
  }
}

TEST_CASE("Phases round trip through AddPhase, FinishPhase and ListPhases", "[store]") {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.File("stagegate.db"));
  CheckOk(store->CreateRun(MakeRun("run-1", 1000, std::nullopt, RunStatus::kRunning)));
  CheckOk(store->CreateRun(MakeRun("run-2", 2000, std::nullopt, RunStatus::kRunning)));

  // Added out of run order: ListPhases orders by ordinal, not by id.
  PhaseInfo second;
  second.run_id = "run-1";
  second.ordinal = 2;
  second.stage = "sweep";
  second.phase = "rate-20";
  second.level = 20.5;
  second.config_json = R"({"rate":20.5,"duration_s":30})";
  second.status = PhaseStatus::kPending;
  PhaseInfo first;
  first.run_id = "run-1";
  first.ordinal = 1;
  first.stage = "warmup";
  first.phase = "warmup";
  first.started_ns = 12;
  first.ended_ns = 9'000'000'000'123;
  first.status = PhaseStatus::kRunning;
  PhaseInfo elsewhere;
  elsewhere.run_id = "run-2";
  elsewhere.ordinal = 1;
  elsewhere.stage = "steady";
  elsewhere.phase = "rate-1";

  second.id = AddPhase(*store, second);
  first.id = AddPhase(*store, first);
  elsewhere.id = AddPhase(*store, elsewhere);
  CHECK(second.id > 0);
  CHECK(first.id > second.id);
  CHECK(elsewhere.id > first.id);

  std::vector<PhaseInfo> phases = ListPhases(*store, "run-1");
  REQUIRE(phases.size() == 2u);
  CheckPhase(phases[0], first);
  CheckPhase(phases[1], second);
  phases = ListPhases(*store, "run-2");
  REQUIRE(phases.size() == 1u);
  CheckPhase(phases[0], elsewhere);
  CHECK(phases[0].config_json == "{}");  // the default
  CHECK(phases[0].status == PhaseStatus::kPending);
  CHECK_FALSE(phases[0].level.has_value());

  SECTION("FinishPhase records the times and status") {
    CheckOk(store->FinishPhase(second.id, 100, 31'000'000'100, PhaseStatus::kComplete));
    second.started_ns = 100;
    second.ended_ns = 31'000'000'100;
    second.status = PhaseStatus::kComplete;
    phases = ListPhases(*store, "run-1");
    REQUIRE(phases.size() == 2u);
    CheckPhase(phases[0], first);
    CheckPhase(phases[1], second);
  }
  SECTION("FinishPhase of an unknown id is not found") {
    const int64_t unknown = elsewhere.id + 100;
    Status status = store->FinishPhase(unknown, 1, 2, PhaseStatus::kComplete);
    CHECK(status.code() == Status::Code::kNotFound);
    CHECK(status.message() == "no phase " + std::to_string(unknown));
  }
  SECTION("a phase of an unknown run is refused") {
    PhaseInfo orphan;
    orphan.run_id = "run-x";
    orphan.ordinal = 1;
    orphan.stage = "steady";
    orphan.phase = "orphan";
    Result<int64_t> id = store->AddPhase(orphan);
    REQUIRE_FALSE(id.ok());
    CHECK(id.status().code() == Status::Code::kStoreError);
    CHECK(id.status().message() == "phase steady/orphan: step: FOREIGN KEY constraint failed");
  }
  SECTION("a second phase with the same ordinal is refused") {
    PhaseInfo again = first;
    again.phase = "again";
    Result<int64_t> id = store->AddPhase(again);
    REQUIRE_FALSE(id.ok());
    CHECK(id.status().code() == Status::Code::kStoreError);
    CHECK(id.status().message() ==
          "phase warmup/again: step: UNIQUE constraint failed: phases.run_id, phases.ordinal");
    CHECK(ListPhases(*store, "run-1").size() == 2u);
  }
}

TEST_CASE("Requests round trip every field through AddRequests and ListRequests", "[store]") {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.File("stagegate.db"));
  CheckOk(store->CreateRun(MakeRun("run-1", 1000, std::nullopt, RunStatus::kRunning)));
  CheckOk(store->CreateRun(MakeRun("run-2", 2000, std::nullopt, RunStatus::kRunning)));
  // The later phase is added first, so its id is the smaller one.
  PhaseInfo late;
  late.run_id = "run-1";
  late.ordinal = 2;
  late.stage = "sweep";
  late.phase = "rate-4";
  PhaseInfo early = late;
  early.ordinal = 1;
  early.phase = "rate-2";
  PhaseInfo other = late;
  other.run_id = "run-2";
  const int64_t late_id = AddPhase(*store, late);
  const int64_t early_id = AddPhase(*store, early);
  const int64_t other_id = AddPhase(*store, other);

  // One record per outcome, in neither phase nor sequence order, with the optional fields set in
  // varied combinations.
  std::vector<RequestRecord> records = {
      MakeRequest(0, "run-1", late_id, 1, Outcome::kOk, kAllOptionals),
      MakeRequest(1, "run-1", early_id, 2, Outcome::kHttpError, 0),
      MakeRequest(2, "run-1", late_id, 0, Outcome::kShed,
                  kSent | kFirstByte | kEnd | kHttpStatus | kRetryAfter),
      MakeRequest(3, "run-1", early_id, 0, Outcome::kTimeout, kSent | kCurlCode | kInputTokens),
      MakeRequest(4, "run-1", early_id, 1, Outcome::kTransportError,
                  kFirstToken | kFirstAnswer | kOutputTokens),
      MakeRequest(5, "run-1", late_id, 2, Outcome::kMalformedStream, kAllOptionals & ~kSent),
      MakeRequest(6, "run-1", early_id, 3, Outcome::kCancelled, kSent),
      MakeRequest(7, "run-1", late_id, 3, Outcome::kDenied, kAllOptionals),
  };
  // A synthetic prompt: the string fields are empty.
  records[6].task_id = "";
  records[6].persona = "";
  records[6].error_message = "";
  records[6].token_source = "";
  records[6].finish_reason = "";
  records[6].answer_text = "";
  records[6].trace_id = "";
  // The store numbers records in the order they are added.
  for (size_t i = 0; i < records.size(); ++i)
    records[i].id = static_cast<int64_t>(i) + 1;

  CheckOk(store->AddRequests({records.begin(), records.begin() + 4}));
  CheckOk(store->AddRequests({records.begin() + 4, records.end()}));
  const std::vector<RequestRecord> other_run = {
      MakeRequest(8, "run-2", other_id, 0, Outcome::kOk, 0)};
  CheckOk(store->AddRequests(other_run));
  CheckOk(store->AddRequests({}));

  std::vector<RequestRecord> listed = ListRequests(*store, "run-1");
  const std::vector<RequestRecord> expected = {
      records[3], records[4], records[1], records[6],  // phase 1, sequences 0 to 3
      records[2], records[0], records[5], records[7],  // phase 2, sequences 0 to 3
  };
  REQUIRE(listed.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    CheckRequest(listed[i], expected[i]);

  std::vector<RequestRecord> others = ListRequests(*store, "run-2");
  REQUIRE(others.size() == 1u);
  CHECK(others[0].id == 9);
  CHECK(others[0].task_id == "task-8");
  CHECK(ListRequests(*store, "run-x").empty());
}

TEST_CASE("AddRequests stores all of a batch or none of it", "[store]") {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.File("stagegate.db"));
  CheckOk(store->CreateRun(MakeRun("run-1", 1000, std::nullopt, RunStatus::kRunning)));
  PhaseInfo phase;
  phase.run_id = "run-1";
  phase.ordinal = 1;
  phase.stage = "steady";
  phase.phase = "rate-1";
  const int64_t phase_id = AddPhase(*store, phase);

  std::vector<RequestRecord> batch = {
      MakeRequest(0, "run-1", phase_id, 0, Outcome::kOk, kAllOptionals),
      MakeRequest(1, "run-1", phase_id, 1, Outcome::kOk, kAllOptionals),
      MakeRequest(2, "run-1", phase_id + 1000, 2, Outcome::kOk, kAllOptionals),
  };
  Status status = store->AddRequests(batch);

  CHECK(status.code() == Status::Code::kStoreError);
  CHECK(status.message() == "request 2: step: FOREIGN KEY constraint failed");
  CHECK(QueryInt(store->TEST_database(), "SELECT count(*) FROM requests") == 0);
  CHECK(ListRequests(*store, "run-1").empty());

  SECTION("the failed batch leaves no transaction behind") {
    batch.pop_back();
    CheckOk(store->AddRequests(batch));
    CHECK(ListRequests(*store, "run-1").size() == 2u);
  }
}

TEST_CASE("Outcome names round trip", "[store]") {
  for (const auto& [outcome, name] : kOutcomes) {
    INFO(name);
    CHECK(load::OutcomeName(outcome) == name);
    std::optional<Outcome> parsed = load::OutcomeFromName(name);
    REQUIRE(parsed.has_value());
    CHECK(load::OutcomeName(*parsed) == name);
    CHECK(*parsed == outcome);
  }
  CHECK_FALSE(load::OutcomeFromName("OK").has_value());
  CHECK_FALSE(load::OutcomeFromName("").has_value());
  CHECK_FALSE(load::OutcomeFromName("bogus").has_value());
}

TEST_CASE("Fault results point at their requests, and judging a probe again replaces them",
          "[store]") {
  TempDir dir;
  std::unique_ptr<Store> store = OpenStore(dir.File("stagegate.db"));
  CheckOk(store->CreateRun(MakeRun("run-1", 1000, std::nullopt, RunStatus::kRunning)));
  PhaseInfo phase;
  phase.run_id = "run-1";
  phase.ordinal = 1;
  phase.stage = "faults";
  phase.phase = "tool_outage down during";
  const int64_t phase_id = AddPhase(*store, phase);
  CheckOk(store->AddRequests(
      std::vector<RequestRecord>{MakeRequest(0, "run-1", phase_id, 0, Outcome::kOk, 0),
                                 MakeRequest(1, "run-1", phase_id, 1, Outcome::kOk, 0)}));
  const auto judge = [&](const std::string& verdict) {
    CheckOk(store->AddFaultResult("run-1", "down", "tool_outage", phase_id, verdict, "{}"));
    for (int64_t sequence : {0, 1})
      CheckOk(store->AddFaultRequest("run-1", "down", "tool_outage", "during", phase_id, sequence,
                                     verdict, R"({"part":"during"})"));
    // A request that is not in the store adds nothing.
    CheckOk(store->AddFaultRequest("run-1", "down", "tool_outage", "during", phase_id, 9, verdict,
                                   "{}"));
  };
  judge("interrupted");
  Database& db = store->TEST_database();
  CHECK(QueryInt(db, "SELECT COUNT(*) FROM fault_results") == 3);
  CHECK(QueryInt(db,
                 "SELECT COUNT(*) FROM fault_results f JOIN requests r ON r.id = f.request_id "
                 "WHERE r.phase_id = " +
                     std::to_string(phase_id)) == 2);
  judge("pass");
  CHECK(QueryInt(db, "SELECT COUNT(*) FROM fault_results") == 3);
  CHECK(QueryInt(db, "SELECT COUNT(*) FROM fault_results WHERE verdict = 'pass'") == 3);
}

}  // namespace
}  // namespace stagegate::store

namespace stagegate::store {
namespace {

TEST_CASE("Migration 7 turns the ' at rest' suffix of a stage into the phase's at_rest field",
          "[store]") {
  TempDir dir;
  const std::string path = dir.File("v6.db");
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    CheckOk(Migrate(*db, 6));
    Exec(*db,
         "INSERT INTO runs (id, scenario_name, scenario_file, fingerprint, scenario_json, status, "
         "started_unix_ms) VALUES ('r', 's', 's.yaml', 'f', '{}', 'complete', 1);"
         "INSERT INTO phases (run_id, ordinal, stage, phase, config_json, status) VALUES "
         "('r', 1, 'tools', 'steady', '{}', 'complete'),"
         "('r', 2, 'tools at rest', 'steady', '{}', 'complete'),"
         "('r', 3, 'at rest', 'steady', '{}', 'complete');");
  }
  std::unique_ptr<Store> store = OpenStore(path);
  Result<std::vector<PhaseInfo>> phases = store->ListPhases("r");
  REQUIRE(phases.ok());
  REQUIRE(phases->size() == 3);
  CHECK((*phases)[0].stage == "tools");
  CHECK_FALSE((*phases)[0].at_rest);
  CHECK((*phases)[1].stage == "tools");
  CHECK((*phases)[1].at_rest);
  CHECK((*phases)[1].StageLabel() == "tools at rest");
  CHECK((*phases)[2].stage == "at rest");  // a stage named "at rest" has no suffix to remove
  CHECK_FALSE((*phases)[2].at_rest);
  // And a phase stored at rest now reads back as one.
  Result<int64_t> added = store->AddPhase(
      {.run_id = "r", .ordinal = 4, .stage = "bare", .phase = "steady", .at_rest = true});
  REQUIRE(added.ok());
  CHECK(store->ListPhases("r")->back().at_rest);
}

}  // namespace
}  // namespace stagegate::store

namespace stagegate::store {
namespace {

TEST_CASE("a profile's stored level is named by its kind, whatever its config holds",
          "[store][profile]") {
  const auto kind = [](const std::string& phase, const std::string& config) {
    return PhaseInfo{.phase = phase, .config_json = config}.ProfileLevelKind();
  };
  CHECK(kind("sweep", R"({"closed_loop": true})") == "concurrency");
  CHECK(kind("sweep", R"({"closed_loop": false})") == "request_rate");
  CHECK(kind("steady", "{}") == "trace");
  // A profile stored before profiles ran as scenarios named its phases by kind already.
  CHECK(kind("concurrency", "{}") == "concurrency");
  CHECK(kind("request_rate", "{}") == "request_rate");
  // A config that is not JSON, or not an object, or whose closed_loop is not a boolean, reads as
  // an open loop, never as an exception.
  CHECK(kind("sweep", "{not json") == "request_rate");
  CHECK(kind("sweep", "[true]") == "request_rate");
  CHECK(kind("sweep", "") == "request_rate");
  CHECK(kind("sweep", R"({"closed_loop": "yes"})") == "request_rate");
}

}  // namespace
}  // namespace stagegate::store
