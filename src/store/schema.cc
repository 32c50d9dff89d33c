#include "store/schema.h"

#include <string>
#include <vector>

namespace stagegate::store {

namespace {

// Each entry moves the store from version i to i + 1. Never edit a released migration: stores in
// the field were written by it. Add a new one instead (tests/testdata/store/ keeps a store of each
// older version to prove they still open).
const std::vector<std::string>& Migrations() {
  static const std::vector<std::string> kMigrations = {
      // 1: runs, their phases, and the requests measured in them.
      R"sql(
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        scenario_name TEXT NOT NULL,
        scenario_file TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        corpus_version TEXT NOT NULL DEFAULT '',
        scenario_json TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'resumed', 'failed')),
        started_unix_ms INTEGER NOT NULL,
        finished_unix_ms INTEGER
      );
      CREATE TABLE phases (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        stage TEXT NOT NULL,
        phase TEXT NOT NULL,
        level REAL,
        config_json TEXT NOT NULL DEFAULT '{}',
        started_ns INTEGER,
        ended_ns INTEGER,
        status TEXT NOT NULL DEFAULT 'pending',
        UNIQUE (run_id, ordinal)
      );
      CREATE TABLE requests (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        phase_id INTEGER NOT NULL REFERENCES phases(id) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        task_id TEXT NOT NULL DEFAULT '',
        persona TEXT NOT NULL DEFAULT '',
        intended_ns INTEGER NOT NULL,
        sent_ns INTEGER,
        first_byte_ns INTEGER,
        first_token_ns INTEGER,
        first_answer_ns INTEGER,
        end_ns INTEGER,
        outcome TEXT NOT NULL,
        http_status INTEGER,
        curl_code INTEGER,
        error_message TEXT NOT NULL DEFAULT '',
        retry_after_s REAL,
        input_tokens INTEGER,
        output_tokens INTEGER,
        token_source TEXT NOT NULL DEFAULT '',
        finish_reason TEXT NOT NULL DEFAULT '',
        answer_text TEXT NOT NULL DEFAULT ''
      );
      CREATE INDEX requests_by_phase ON requests(phase_id, sequence);
      )sql",
      // 2: trace ids on requests; chunk timings; the tables of telemetry, fault controls and
      // independent review.
      R"sql(
      ALTER TABLE requests ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';
      CREATE TABLE chunks (
        request_id INTEGER NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
        times_ns TEXT NOT NULL,
        PRIMARY KEY (request_id)
      );
      CREATE TABLE answers (
        request_id INTEGER PRIMARY KEY REFERENCES requests(id) ON DELETE CASCADE,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        condition TEXT NOT NULL CHECK (condition IN ('at_rest', 'under_load')),
        tool_calls_json TEXT NOT NULL DEFAULT '[]',
        server_timing TEXT NOT NULL DEFAULT ''
      );
      CREATE TABLE telemetry_samples (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        t_ns INTEGER NOT NULL,
        source TEXT NOT NULL,
        series TEXT NOT NULL,
        labels TEXT NOT NULL DEFAULT '',
        value REAL NOT NULL
      );
      CREATE INDEX telemetry_by_time ON telemetry_samples(run_id, t_ns);
      CREATE TABLE fault_results (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        probe TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('access_denial', 'tool_outage')),
        step TEXT NOT NULL,
        request_id INTEGER REFERENCES requests(id) ON DELETE SET NULL,
        verdict TEXT NOT NULL,
        evidence_json TEXT NOT NULL DEFAULT '{}'
      );
      CREATE TABLE review_items (
        item_id TEXT PRIMARY KEY,
        export_id TEXT NOT NULL,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        request_id INTEGER NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
        reviewer TEXT NOT NULL,
        calibration INTEGER NOT NULL DEFAULT 0,
        UNIQUE (export_id, request_id, reviewer)
      );
      CREATE TABLE scores (
        item_id TEXT NOT NULL REFERENCES review_items(item_id) ON DELETE CASCADE,
        reviewer TEXT NOT NULL,
        criterion TEXT NOT NULL,
        value INTEGER NOT NULL,
        seconds REAL,
        source TEXT NOT NULL DEFAULT 'reviewer',
        imported_unix_ms INTEGER NOT NULL,
        PRIMARY KEY (item_id, reviewer, criterion)
      );
      )sql",
      // 3: what the load engine records beyond the first schema: warmup, queueing, requested
      // lengths, reasoning, tool calls and Server-Timing per request.
      R"sql(
      ALTER TABLE requests ADD COLUMN worker INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE requests ADD COLUMN warmup INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE requests ADD COLUMN streamed INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE requests ADD COLUMN queue_ns INTEGER;
      ALTER TABLE requests ADD COLUMN requested_input_tokens INTEGER;
      ALTER TABLE requests ADD COLUMN requested_output_tokens INTEGER;
      ALTER TABLE requests ADD COLUMN input_token_source TEXT NOT NULL DEFAULT '';
      ALTER TABLE requests ADD COLUMN reasoning_text TEXT NOT NULL DEFAULT '';
      ALTER TABLE requests ADD COLUMN tool_calls_json TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE requests ADD COLUMN server_timing TEXT NOT NULL DEFAULT '';
      )sql",
      // 4: the command line's changes to a run's scenario (seed, stage, target), so that a
      // resumed run measures what the interrupted one did.
      R"sql(
      ALTER TABLE runs ADD COLUMN settings_json TEXT NOT NULL DEFAULT '{}';
      )sql",
      // 5: exports of answers for review: the rubric they were scored against and how they were
      // assigned, so that an import is checked against what the reviewers were given; and who
      // scores them (independent reviewers, or an LLM judge, kept apart).
      R"sql(
      CREATE TABLE exports (
        export_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        created_unix_ms INTEGER NOT NULL,
        reviewers INTEGER NOT NULL,
        per_item INTEGER NOT NULL,
        calibration INTEGER NOT NULL,
        rubric_json TEXT NOT NULL,
        scorer TEXT NOT NULL DEFAULT 'reviewers'  -- or 'judge:<model>': an LLM judge's scores
      );
      CREATE INDEX review_items_by_run ON review_items(run_id, export_id);
      )sql",
      // 6: what a run found (its run.json), so that a report is built from the store alone.
      R"sql(
      ALTER TABLE runs ADD COLUMN findings_json TEXT NOT NULL DEFAULT '{}';
      )sql",
      // 7: the answers sampled at rest are a field of their phase, not a suffix of its stage
      // (" at rest", 8 characters, as earlier versions named them).
      R"sql(
      ALTER TABLE phases ADD COLUMN at_rest INTEGER NOT NULL DEFAULT 0;
      UPDATE phases SET at_rest = 1, stage = substr(stage, 1, length(stage) - 8)
        WHERE stage LIKE '% at rest';
      )sql",
      // 8: whether a request's text from the server held bytes that are not UTF-8 (the text is
      // kept with U+FFFD in their place).
      R"sql(
      ALTER TABLE requests ADD COLUMN invalid_utf8 INTEGER NOT NULL DEFAULT 0;
      )sql",
      // 9: how many of a request's input tokens the server took from its prefix cache.
      R"sql(
      ALTER TABLE requests ADD COLUMN cached_tokens INTEGER;
      )sql",
      // 10: the multi-turn session a request is a turn of, and which turn (from 0).
      R"sql(
      ALTER TABLE requests ADD COLUMN session INTEGER;
      ALTER TABLE requests ADD COLUMN turn INTEGER;
      )sql",
      // 11: the decisions of the owners of each condition on a run, with the evidence each was
      // made on.
      R"sql(
      CREATE TABLE signoffs (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        condition TEXT NOT NULL CHECK (condition IN ('responsiveness', 'quality', 'recoverability')),
        signed_by TEXT NOT NULL,
        decision TEXT NOT NULL CHECK (decision IN ('accept', 'reject')),
        note TEXT NOT NULL DEFAULT '',
        evidence TEXT NOT NULL,
        signed_unix_ms INTEGER NOT NULL
      );
      CREATE INDEX signoffs_by_run ON signoffs(run_id, condition, id);
      )sql",
      // 12: each reviewer's judgement of whether an answer is usable as it is, after correction,
      // or not at all, with the corrected text and the seconds spent correcting it.
      R"sql(
      CREATE TABLE usability (
        item_id TEXT NOT NULL REFERENCES review_items(item_id) ON DELETE CASCADE,
        reviewer TEXT NOT NULL,
        usability TEXT NOT NULL CHECK (usability IN ('as_is', 'corrected', 'unusable')),
        corrected_text TEXT,
        correction_seconds REAL,
        imported_unix_ms INTEGER NOT NULL,
        PRIMARY KEY (item_id, reviewer)
      );
      )sql",
  };
  return kMigrations;
}

}  // namespace

int CurrentSchemaVersion() {
  return static_cast<int>(Migrations().size());
}

Result<int> SchemaVersion(Database& db) {
  Result<Statement> stmt = Statement::Prepare(db, "PRAGMA user_version");
  if (!stmt.ok()) return stmt.status();
  if (!stmt->Step()) return db.Error("reading user_version");
  return static_cast<int>(stmt->Int(0));
}

Status CheckSupported(Database& db) {
  Result<int> version = SchemaVersion(db);
  if (!version.ok()) return version.status();
  if (*version > CurrentSchemaVersion())
    return Status::StoreError("the store has schema version " + std::to_string(*version) +
                              ", newer than this build's " +
                              std::to_string(CurrentSchemaVersion()) + "; use a newer stagegate");
  return Status::Ok();
}

Status Migrate(Database& db, int target) {
  if (target < 0) target = CurrentSchemaVersion();
  if (target > CurrentSchemaVersion())
    return Status::Internal("no migration to schema " + std::to_string(target));
  SG_RETURN_IF_ERROR(CheckSupported(db));
  // A store already at the target takes no write lock (so a read-only store still opens).
  Result<int> current = SchemaVersion(db);
  if (!current.ok()) return current.status();
  if (*current >= target) return Status::Ok();
  // Each step reads the version again inside its write transaction (BEGIN IMMEDIATE): another
  // process opening the same new store waits for the lock (the busy timeout), then finds the
  // step done, instead of applying it a second time ("table runs already exists").
  while (true) {
    Transaction transaction(db);
    SG_RETURN_IF_ERROR(transaction.begin_status());
    SG_RETURN_IF_ERROR(CheckSupported(db));
    Result<int> version = SchemaVersion(db);
    if (!version.ok()) return version.status();
    if (*version >= target) return transaction.Commit();
    Status applied = db.Exec(Migrations()[*version]);
    if (!applied.ok())
      return applied.WithContext("migration to schema " + std::to_string(*version + 1));
    SG_RETURN_IF_ERROR(db.Exec("PRAGMA user_version = " + std::to_string(*version + 1)));
    SG_RETURN_IF_ERROR(transaction.Commit());
  }
}

}  // namespace stagegate::store
