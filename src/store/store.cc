#include "store/store.h"

#include <sqlite3.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "store/schema.h"

namespace stagegate::store {

namespace {

constexpr std::pair<RunStatus, std::string_view> kRunStatusNames[] = {
    {RunStatus::kRunning, "running"},         {RunStatus::kComplete, "complete"},
    {RunStatus::kInterrupted, "interrupted"}, {RunStatus::kResumed, "resumed"},
    {RunStatus::kFailed, "failed"},
};

constexpr std::pair<PhaseStatus, std::string_view> kPhaseStatusNames[] = {
    {PhaseStatus::kPending, "pending"},       {PhaseStatus::kRunning, "running"},
    {PhaseStatus::kComplete, "complete"},     {PhaseStatus::kInterrupted, "interrupted"},
    {PhaseStatus::kSuperseded, "superseded"},
};

// A status the store does not know (written by a later version) reads as interrupted: not
// complete, so a resume measures it again.
PhaseStatus PhaseStatusFromName(std::string_view name) {
  for (const auto& [status, text] : kPhaseStatusNames)
    if (text == name) return status;
  return PhaseStatus::kInterrupted;
}

RunStatus RunStatusFromName(std::string_view name) {
  for (const auto& [status, text] : kRunStatusNames)
    if (text == name) return status;
  return RunStatus::kFailed;
}

constexpr const char* kRunColumns =
    "id, scenario_name, scenario_file, fingerprint, corpus_version, scenario_json, status, "
    "started_unix_ms, finished_unix_ms, settings_json, findings_json";

RunInfo ReadRun(const Statement& row) {
  RunInfo run;
  run.id = row.Text(0);
  run.scenario_name = row.Text(1);
  run.scenario_file = row.Text(2);
  run.fingerprint = row.Text(3);
  run.corpus_version = row.Text(4);
  run.scenario_json = row.Text(5);
  run.status = RunStatusFromName(row.Text(6));
  run.started_unix_ms = row.Int(7);
  run.finished_unix_ms = row.OptionalInt(8);
  run.settings_json = row.Text(9);
  run.findings_json = row.Text(10);
  return run;
}

constexpr const char* kRequestColumns =
    "run_id, phase_id, sequence, task_id, persona, intended_ns, sent_ns, first_byte_ns, "
    "first_token_ns, first_answer_ns, end_ns, outcome, http_status, curl_code, error_message, "
    "retry_after_s, input_tokens, output_tokens, token_source, finish_reason, answer_text, "
    "trace_id, worker, warmup, streamed, queue_ns, requested_input_tokens, "
    "requested_output_tokens, input_token_source, reasoning_text, tool_calls_json, server_timing, "
    "invalid_utf8, cached_tokens, session, turn";

// Chunk times are kept as gaps from the request's send (or intended) time, space-separated: about
// a third of the bytes of absolute times.
// Into `text`, reused from request to request: a run stores millions of gaps.
void EncodeChunkTimes(const std::vector<int64_t>& times, int64_t origin, std::string& text) {
  text.resize(times.size() * 21);  // a space and at most 20 characters a gap
  char* out = text.data();
  int64_t previous = origin;
  for (int64_t t : times) {
    if (out != text.data()) *out++ = ' ';
    out = std::to_chars(out, out + 20, t - previous).ptr;
    previous = t;
  }
  text.resize(static_cast<size_t>(out - text.data()));
}

std::vector<int64_t> DecodeChunkTimes(const std::string& text, int64_t origin) {
  std::vector<int64_t> times;
  int64_t previous = origin;
  const char* p = text.c_str();
  while (*p != '\0') {
    char* end = nullptr;
    const long long gap = std::strtoll(p, &end, 10);
    if (end == p) break;
    previous += gap;
    times.push_back(previous);
    p = end;
  }
  return times;
}

// `text` as a LIKE pattern (with ESCAPE '\') that matches it alone: its wildcards are escaped.
std::string LikeLiteral(const std::string& text) {
  std::string pattern;
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') pattern += '\\';
    pattern += c;
  }
  return pattern;
}

}  // namespace

std::string_view PhaseStatusName(PhaseStatus status) {
  for (const auto& [value, text] : kPhaseStatusNames)
    if (value == status) return text;
  return "interrupted";
}

std::string_view RunStatusName(RunStatus status) {
  for (const auto& [value, name] : kRunStatusNames)
    if (value == status) return name;
  return "?";
}

std::string PhaseInfo::ProfileLevelKind() const {
  if (phase == "steady") return "trace";
  if (phase != "sweep") return phase;
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, false);
  const bool closed = config.is_object() && config.contains("closed_loop") &&
                      config["closed_loop"].is_boolean() && config["closed_loop"].get<bool>();
  return closed ? "concurrency" : "request_rate";
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code error;
    std::filesystem::create_directories(parent, error);
    if (error) return Status::IoError(parent.string() + ": " + error.message());
  }
  Result<std::unique_ptr<Database>> db = Database::Open(path);
  if (!db.ok()) return db.status();
  return Prepare(std::move(*db), path);
}

Result<std::unique_ptr<Store>> Store::OpenExisting(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    return Status::InvalidInput(path + ": no store there (a run makes one; --db names another)");
  Result<std::unique_ptr<Database>> db = Database::Open(path, /*create=*/false);
  if (!db.ok()) return db.status();
  return Prepare(std::move(*db), path);
}

Result<std::unique_ptr<Store>> Store::OpenInMemory() {
  Result<std::unique_ptr<Database>> db = Database::Open(":memory:");
  if (!db.ok()) return db.status();
  return Prepare(std::move(*db), ":memory:");
}

Result<std::unique_ptr<Store>> Store::Prepare(std::unique_ptr<Database> db,
                                              const std::string& name) {
  // Refuse a newer store before anything below changes the file.
  Status supported = CheckSupported(*db);
  if (!supported.ok() && (sqlite3_errcode(db->handle()) & 0xff) == SQLITE_NOTADB)
    return Status::InvalidInput(name + ": not a stagegate store (" + supported.message() + ")");
  if (!supported.ok()) return supported.WithContext(name);
  // WAL lets report commands read while a run writes; foreign keys keep requests tied to runs.
  // (A store in memory keeps its journal in memory: SQLite ignores WAL there.)
  // Switching a new store to WAL needs an exclusive lock, for which SQLite does not always wait
  // (busy handler): another process opening the same new store at that moment makes it fail
  // with SQLITE_BUSY at once. Tried again, for as long as the busy timeout.
  Status setup;
  for (int attempt = 0; attempt < 500; ++attempt) {
    setup = db->Exec(
        "PRAGMA page_size = 65536; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; "
        "PRAGMA synchronous = NORMAL;");
    if (setup.ok() || (sqlite3_errcode(db->handle()) & 0xff) != SQLITE_BUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!setup.ok()) return setup.WithContext(name);
  Status migrated = Migrate(*db);
  if (!migrated.ok()) return migrated.WithContext(name);
  return std::unique_ptr<Store>(new Store(std::move(db)));
}

bool Store::read_only() {
  return sqlite3_db_readonly(db_->handle(), "main") == 1;
}

Result<int> Store::SchemaVersionOf(Database& db) {
  return SchemaVersion(db);
}

Status Store::CreateRun(const RunInfo& run) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> insert = Statement::Prepare(
      *db_, std::string("INSERT INTO runs (") + kRunColumns + ") VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, run.id).Bind(2, run.scenario_name).Bind(3, run.scenario_file);
  insert->Bind(4, run.fingerprint).Bind(5, run.corpus_version).Bind(6, run.scenario_json);
  insert->Bind(7, RunStatusName(run.status))
      .Bind(8, run.started_unix_ms)
      .Bind(9, run.finished_unix_ms)
      .Bind(10, run.settings_json)
      .Bind(11, run.findings_json);
  SG_RETURN_IF_ERROR(insert->Run().WithContext("run " + run.id));
  return transaction.Commit();
}

Status Store::SetRunFindings(const std::string& run_id, const std::string& findings_json) {
  Result<Statement> update =
      Statement::Prepare(*db_, "UPDATE runs SET findings_json = ? WHERE id = ?");
  if (!update.ok()) return update.status();
  update->Bind(1, findings_json).Bind(2, run_id);
  SG_RETURN_IF_ERROR(update->Run());
  if (sqlite3_changes(db_->handle()) == 0) return Status::NotFound("no run '" + run_id + "'");
  return Status::Ok();
}

Status Store::SetRunStatus(const std::string& run_id, RunStatus status,
                           std::optional<int64_t> finished_unix_ms) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> update =
      Statement::Prepare(*db_, "UPDATE runs SET status = ?, finished_unix_ms = ? WHERE id = ?");
  if (!update.ok()) return update.status();
  update->Bind(1, RunStatusName(status)).Bind(2, finished_unix_ms).Bind(3, run_id);
  SG_RETURN_IF_ERROR(update->Run());
  if (sqlite3_changes(db_->handle()) == 0) return Status::NotFound("no run '" + run_id + "'");
  return transaction.Commit();
}

Status Store::DeleteRun(const std::string& run_id) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> remove = Statement::Prepare(*db_, "DELETE FROM runs WHERE id = ?");
  if (!remove.ok()) return remove.status();
  remove->Bind(1, run_id);
  SG_RETURN_IF_ERROR(remove->Run());  // every other table's rows go with it (ON DELETE CASCADE)
  if (sqlite3_changes(db_->handle()) == 0) return Status::NotFound("no run '" + run_id + "'");
  return transaction.Commit();
}

Result<std::vector<RunInfo>> Store::ListRuns() {
  Result<Statement> query =
      Statement::Prepare(*db_, std::string("SELECT ") + kRunColumns +
                                   " FROM runs ORDER BY started_unix_ms DESC, id DESC");
  if (!query.ok()) return query.status();
  std::vector<RunInfo> runs;
  while (query->Step())
    runs.push_back(ReadRun(*query));
  if (!query->status().ok()) return query->status();
  return runs;
}

Result<std::optional<RunInfo>> Store::FindRun(const std::string& run_id) {
  Result<Statement> query =
      Statement::Prepare(*db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id);
  if (query->Step()) return std::optional<RunInfo>(ReadRun(*query));
  if (!query->status().ok()) return query->status();
  return std::optional<RunInfo>();
}

Result<int64_t> Store::AddPhase(const PhaseInfo& phase) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> insert = Statement::Prepare(
      *db_,
      "INSERT INTO phases (run_id, ordinal, stage, phase, level, config_json, started_ns, "
      "ended_ns, status, at_rest) VALUES (?,?,?,?,?,?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, phase.run_id).Bind(2, phase.ordinal).Bind(3, phase.stage).Bind(4, phase.phase);
  insert->Bind(5, phase.level).Bind(6, phase.config_json).Bind(7, phase.started_ns);
  insert->Bind(8, phase.ended_ns).Bind(9, PhaseStatusName(phase.status));
  insert->Bind(10, int64_t{phase.at_rest});
  Status inserted = insert->Run();
  if (!inserted.ok()) return inserted.WithContext("phase " + phase.stage + "/" + phase.phase);
  int64_t id = db_->LastInsertId();
  SG_RETURN_IF_ERROR(transaction.Commit());
  return id;
}

Status Store::FinishPhase(int64_t phase_id, int64_t started_ns, int64_t ended_ns,
                          PhaseStatus status) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> update = Statement::Prepare(
      *db_, "UPDATE phases SET started_ns = ?, ended_ns = ?, status = ? WHERE id = ?");
  if (!update.ok()) return update.status();
  update->Bind(1, started_ns).Bind(2, ended_ns).Bind(3, PhaseStatusName(status)).Bind(4, phase_id);
  SG_RETURN_IF_ERROR(update->Run());
  if (sqlite3_changes(db_->handle()) == 0)
    return Status::NotFound("no phase " + std::to_string(phase_id));
  return transaction.Commit();
}

Status Store::SetPhaseStatus(int64_t phase_id, PhaseStatus status) {
  Result<Statement> update = Statement::Prepare(*db_, "UPDATE phases SET status = ? WHERE id = ?");
  if (!update.ok()) return update.status();
  update->Bind(1, PhaseStatusName(status)).Bind(2, phase_id);
  SG_RETURN_IF_ERROR(update->Run());
  if (db_->Changes() == 0) return Status::NotFound("no phase " + std::to_string(phase_id));
  return Status::Ok();
}

Result<std::vector<PhaseInfo>> Store::ListPhases(const std::string& run_id, bool with_baselines) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT id, run_id, ordinal, stage, phase, level, config_json, started_ns, ended_ns, status, "
      "at_rest FROM phases WHERE run_id = ? AND phase != ? ORDER BY ordinal");
  if (!query.ok()) return query.status();
  // No phase is named "": with the baselines, nothing is left out.
  query->Bind(1, run_id).Bind(2, with_baselines ? "" : kBaselinePhase);
  std::vector<PhaseInfo> phases;
  while (query->Step()) {
    PhaseInfo phase;
    phase.id = query->Int(0);
    phase.run_id = query->Text(1);
    phase.ordinal = query->Int(2);
    phase.stage = query->Text(3);
    phase.phase = query->Text(4);
    phase.level = query->OptionalReal(5);
    phase.config_json = query->Text(6);
    phase.started_ns = query->OptionalInt(7);
    phase.ended_ns = query->OptionalInt(8);
    phase.status = PhaseStatusFromName(query->Text(9));
    phase.at_rest = query->Int(10) != 0;
    phases.push_back(std::move(phase));
  }
  if (!query->status().ok()) return query->status();
  return phases;
}

Status Store::AddRequests(std::span<const load::RequestRecord> records) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> insert = Statement::Prepare(
      *db_,
      std::string("INSERT INTO requests (") + kRequestColumns +
          ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  Result<Statement> insert_chunks =
      Statement::Prepare(*db_, "INSERT INTO chunks (request_id, times_ns) VALUES (?, ?)");
  if (!insert_chunks.ok()) return insert_chunks.status();
  std::string gaps;
  for (const load::RequestRecord& r : records) {
    Statement& s = *insert;
    s.Bind(1, r.run_id).Bind(2, r.phase_id).Bind(3, r.sequence).Bind(4, r.task_id);
    s.Bind(5, r.persona).Bind(6, r.intended_ns).Bind(7, r.sent_ns).Bind(8, r.first_byte_ns);
    s.Bind(9, r.first_token_ns).Bind(10, r.first_answer_ns).Bind(11, r.end_ns);
    s.Bind(12, load::OutcomeName(r.outcome)).Bind(13, r.http_status).Bind(14, r.curl_code);
    s.Bind(15, r.error_message).Bind(16, r.retry_after_s).Bind(17, r.input_tokens);
    s.Bind(18, r.output_tokens).Bind(19, r.token_source).Bind(20, r.finish_reason);
    s.Bind(21, r.answer_text).Bind(22, r.trace_id).Bind(23, r.worker);
    s.Bind(24, int64_t{r.warmup}).Bind(25, int64_t{r.streamed}).Bind(26, r.queue_ns);
    s.Bind(27, r.requested_input_tokens).Bind(28, r.requested_output_tokens);
    s.Bind(29, r.input_token_source).Bind(30, r.reasoning_text).Bind(31, r.tool_calls_json);
    s.Bind(32, r.server_timing).Bind(33, int64_t{r.invalid_utf8}).Bind(34, r.cached_tokens);
    s.Bind(35, r.session).Bind(36, r.turn);
    Status inserted = s.Run();
    if (!inserted.ok()) return inserted.WithContext("request " + std::to_string(r.sequence));
    if (!r.chunk_times_ns.empty()) {
      const int64_t request_id = sqlite3_last_insert_rowid(db_->handle());
      EncodeChunkTimes(r.chunk_times_ns, r.sent_ns.value_or(r.intended_ns), gaps);
      insert_chunks->Bind(1, request_id).Bind(2, gaps);
      Status chunks = insert_chunks->Run();
      if (!chunks.ok())
        return chunks.WithContext("chunks of request " + std::to_string(r.sequence));
    }
  }
  return transaction.Commit();
}

Status Store::AddRequestsInBatches(std::span<const load::RequestRecord> records) {
  constexpr size_t kBatch = 2000;
  for (size_t begin = 0; begin < records.size(); begin += kBatch)
    SG_RETURN_IF_ERROR(
        AddRequests(records.subspan(begin, std::min(kBatch, records.size() - begin))));
  return Status::Ok();
}

Result<int64_t> Store::AddTelemetry(const std::string& run_id,
                                    std::span<const telemetry::TimedSample> samples) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> insert = Statement::Prepare(
      *db_,
      "INSERT INTO telemetry_samples (run_id, t_ns, source, series, labels, value) "
      "VALUES (?,?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  int64_t left_out = 0;
  for (const telemetry::TimedSample& s : samples) {
    if (!std::isfinite(s.sample.value)) {
      ++left_out;
      continue;
    }
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [name, value] : s.sample.labels)
      labels[name] = value;
    insert->Bind(1, run_id).Bind(2, s.t_ns).Bind(3, s.source).Bind(4, s.sample.name);
    insert->Bind(5, labels.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    insert->Bind(6, s.sample.value);
    SG_RETURN_IF_ERROR(insert->Run());
  }
  SG_RETURN_IF_ERROR(transaction.Commit());
  return left_out;
}

Result<std::vector<std::pair<int64_t, double>>> Store::SeriesTotal(const std::string& run_id,
                                                                   const std::string& suffix,
                                                                   int64_t from_ns, int64_t to_ns) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT t_ns, SUM(value) FROM telemetry_samples WHERE run_id = ? AND t_ns BETWEEN ? AND ? "
      "AND substr(series, -length(?)) = ? GROUP BY t_ns ORDER BY t_ns");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id).Bind(2, from_ns).Bind(3, to_ns).Bind(4, suffix).Bind(5, suffix);
  std::vector<std::pair<int64_t, double>> samples;
  while (query->Step())
    samples.push_back({query->Int(0), query->Real(1)});
  SG_RETURN_IF_ERROR(query->status());
  return samples;
}

Result<std::vector<TelemetryPoint>> Store::SeriesPoints(const std::string& run_id, int64_t from_ns,
                                                        int64_t to_ns,
                                                        const std::vector<std::string>& names) {
  if (names.empty()) return std::vector<TelemetryPoint>();
  std::string sql =
      "SELECT series, t_ns, SUM(value), COUNT(*) FROM telemetry_samples WHERE run_id = ? AND t_ns "
      "BETWEEN ? AND ? AND series IN (";
  for (size_t i = 0; i < names.size(); ++i)
    sql += i ? ",?" : "?";
  sql += ") GROUP BY series, t_ns ORDER BY t_ns, series";
  Result<Statement> query = Statement::Prepare(*db_, sql);
  if (!query.ok()) return query.status();
  query->Bind(1, run_id).Bind(2, from_ns).Bind(3, to_ns);
  for (size_t i = 0; i < names.size(); ++i)
    query->Bind(static_cast<int>(i) + 4, names[i]);
  std::vector<TelemetryPoint> points;
  while (query->Step())
    points.push_back({.series = query->Text(0),
                      .t_ns = query->Int(1),
                      .value = query->Real(2),
                      .label_sets = query->Int(3)});
  SG_RETURN_IF_ERROR(query->status());
  return points;
}

Result<std::vector<TelemetryPoint>> Store::ListTelemetry(
    const std::string& run_id, int64_t from_ns, int64_t to_ns,
    const std::vector<std::string>& series_suffixes) {
  if (series_suffixes.empty()) return std::vector<TelemetryPoint>();
  std::string sql =
      "SELECT series, t_ns, value FROM telemetry_samples WHERE run_id = ? AND t_ns BETWEEN ? AND "
      "? AND (";
  for (size_t i = 0; i < series_suffixes.size(); ++i)
    sql += std::string(i ? " OR " : "") + "series LIKE ? ESCAPE '\\'";
  sql += ") ORDER BY series, t_ns";
  Result<Statement> query = Statement::Prepare(*db_, sql);
  if (!query.ok()) return query.status();
  query->Bind(1, run_id).Bind(2, from_ns).Bind(3, to_ns);
  for (size_t i = 0; i < series_suffixes.size(); ++i)
    query->Bind(static_cast<int>(i) + 4, "%" + LikeLiteral(series_suffixes[i]));
  std::vector<TelemetryPoint> points;
  while (query->Step())
    points.push_back({.series = query->Text(0), .t_ns = query->Int(1), .value = query->Real(2)});
  SG_RETURN_IF_ERROR(query->status());
  return points;
}

bool Store::HasAnswer(const std::string& run_id, int64_t phase_id, int64_t sequence) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT 1 FROM answers JOIN requests ON requests.id = answers.request_id "
      "WHERE requests.run_id = ? AND requests.phase_id = ? AND requests.sequence = ?");
  if (!query.ok()) return false;
  query->Bind(1, run_id).Bind(2, phase_id).Bind(3, sequence);
  return query->Step();
}

Status Store::AddFaultResult(const std::string& run_id, const std::string& probe,
                             const std::string& kind, int64_t phase_id, const std::string& verdict,
                             const std::string& evidence_json) {
  // A resumed run judges its probes again: their earlier results go.
  Result<Statement> forget =
      Statement::Prepare(*db_, "DELETE FROM fault_results WHERE run_id = ? AND probe = ?");
  if (!forget.ok()) return forget.status();
  forget->Bind(1, run_id).Bind(2, probe);
  SG_RETURN_IF_ERROR(forget->Run());
  Result<Statement> insert = Statement::Prepare(
      *db_,
      "INSERT INTO fault_results (run_id, probe, kind, step, request_id, verdict, evidence_json) "
      "VALUES (?,?,?,?,NULL,?,?)");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, run_id).Bind(2, probe).Bind(3, kind).Bind(4, "phase " + std::to_string(phase_id));
  insert->Bind(5, verdict).Bind(6, evidence_json);
  return insert->Run().WithContext("fault result of " + probe);
}

Status Store::AddFaultRequest(const std::string& run_id, const std::string& probe,
                              const std::string& kind, const std::string& step, int64_t phase_id,
                              int64_t sequence, const std::string& verdict,
                              const std::string& evidence_json) {
  Result<Statement> insert = Statement::Prepare(
      *db_,
      "INSERT INTO fault_results (run_id, probe, kind, step, request_id, verdict, evidence_json) "
      "SELECT ?,?,?,?, id, ?, ? FROM requests WHERE run_id = ? AND phase_id = ? AND sequence = ?");
  if (!insert.ok()) return insert.status();
  insert->Bind(1, run_id).Bind(2, probe).Bind(3, kind).Bind(4, step).Bind(5, verdict);
  insert->Bind(6, evidence_json).Bind(7, run_id).Bind(8, phase_id).Bind(9, sequence);
  return insert->Run().WithContext("fault evidence of " + probe);
}

Status Store::AddAnswers(const std::string& run_id, const std::string& condition,
                         const std::vector<std::pair<int64_t, int64_t>>& phase_and_sequence) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> insert = Statement::Prepare(
      *db_,
      "INSERT OR IGNORE INTO answers (request_id, run_id, condition, tool_calls_json, "
      "server_timing) "
      "SELECT id, run_id, ?, tool_calls_json, server_timing FROM requests "
      "WHERE run_id = ? AND phase_id = ? AND sequence = ?");
  if (!insert.ok()) return insert.status();
  for (const auto& [phase_id, sequence] : phase_and_sequence) {
    insert->Bind(1, condition).Bind(2, run_id).Bind(3, phase_id).Bind(4, sequence);
    Status inserted = insert->Run();
    if (!inserted.ok())
      return inserted.WithContext("answer of request " + std::to_string(sequence));
    if (db_->Changes() != 1 && !HasAnswer(run_id, phase_id, sequence))
      return Status::InvalidInput("no request " + std::to_string(sequence) + " in phase " +
                                  std::to_string(phase_id) + " of run " + run_id);
  }
  return transaction.Commit();
}

Result<std::vector<load::RequestRecord>> Store::ListRequests(const std::string& run_id,
                                                             bool with_baselines) {
  Result<Statement> query = Statement::Prepare(
      *db_, std::string("SELECT id, ") + kRequestColumns +
                ", (SELECT times_ns FROM chunks WHERE chunks.request_id = requests.id)"
                " FROM requests WHERE run_id = ? AND phase_id NOT IN (SELECT id FROM phases WHERE "
                "run_id = ? AND phase = ?) ORDER BY (SELECT ordinal FROM phases WHERE "
                "phases.id = requests.phase_id), sequence");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id).Bind(2, run_id).Bind(3, with_baselines ? "" : kBaselinePhase);
  std::vector<load::RequestRecord> records;
  while (query->Step()) {
    const Statement& q = *query;
    load::RequestRecord r;
    r.id = q.Int(0);
    r.run_id = q.Text(1);
    r.phase_id = q.Int(2);
    r.sequence = q.Int(3);
    r.task_id = q.Text(4);
    r.persona = q.Text(5);
    r.intended_ns = q.Int(6);
    r.sent_ns = q.OptionalInt(7);
    r.first_byte_ns = q.OptionalInt(8);
    r.first_token_ns = q.OptionalInt(9);
    r.first_answer_ns = q.OptionalInt(10);
    r.end_ns = q.OptionalInt(11);
    std::optional<load::Outcome> outcome = load::OutcomeFromName(q.Text(12));
    if (!outcome)
      return Status::StoreError("request " + std::to_string(r.id) + " has unknown outcome '" +
                                q.Text(12) + "'");
    r.outcome = *outcome;
    r.http_status = q.OptionalInt(13);
    r.curl_code = q.OptionalInt(14);
    r.error_message = q.Text(15);
    r.retry_after_s = q.OptionalReal(16);
    r.input_tokens = q.OptionalInt(17);
    r.output_tokens = q.OptionalInt(18);
    r.token_source = q.Text(19);
    r.finish_reason = q.Text(20);
    r.answer_text = q.Text(21);
    r.trace_id = q.Text(22);
    r.worker = q.Int(23);
    r.warmup = q.Int(24) != 0;
    r.streamed = q.Int(25) != 0;
    r.queue_ns = q.OptionalInt(26);
    r.requested_input_tokens = q.OptionalInt(27);
    r.requested_output_tokens = q.OptionalInt(28);
    r.input_token_source = q.Text(29);
    r.reasoning_text = q.Text(30);
    r.tool_calls_json = q.Text(31);
    r.server_timing = q.Text(32);
    r.invalid_utf8 = q.Int(33) != 0;
    r.cached_tokens = q.OptionalInt(34);
    r.session = q.OptionalInt(35);
    r.turn = q.OptionalInt(36);
    if (!q.IsNull(37))
      r.chunk_times_ns = DecodeChunkTimes(q.Text(37), r.sent_ns.value_or(r.intended_ns));
    records.push_back(std::move(r));
  }
  if (!query->status().ok()) return query->status();
  return records;
}

}  // namespace stagegate::store
