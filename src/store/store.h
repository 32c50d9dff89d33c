#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "load/request_record.h"
#include "store/review_data.h"
#include "store/sqlite.h"
#include "telemetry/scraper.h"

namespace stagegate::store {

/// The default store location, relative to the working directory; `--db` overrides it.
inline constexpr const char* kDefaultStorePath = "reports/stagegate.db";

enum class RunStatus { kRunning, kComplete, kInterrupted, kResumed, kFailed };
std::string_view RunStatusName(RunStatus status);

/// An owner's decision on one condition of a run (`stagegate signoff`).
struct Signoff {
  int64_t id = 0;  // set when read back: later decisions have larger ids
  std::string run_id;
  std::string condition;  // "responsiveness", "quality" or "recoverability"
  std::string signed_by;
  std::string decision;  // "accept" or "reject"
  std::string note;
  std::string evidence;  // the condition's evidence fingerprint when it was made
  int64_t signed_unix_ms = 0;
};

struct RunInfo {
  std::string id;
  std::string scenario_name;
  std::string scenario_file;
  std::string fingerprint;
  std::string corpus_version;
  std::string scenario_json;         // the canonical scenario, as fingerprinted
  std::string settings_json = "{}";  // the command line's changes to it (run: seed, stage, target)
  std::string findings_json = "{}";  // what the run found (its run.json), once it ended
  RunStatus status = RunStatus::kRunning;
  int64_t started_unix_ms = 0;
  std::optional<int64_t> finished_unix_ms;

  /// A run of `stagegate profile`: its scenario_json holds the profile's options, not a scenario.
  /// (A scenario may be named "profile"; it has a scenario file.)
  bool is_profile() const { return scenario_name == kProfileRunName && scenario_file.empty(); }
  static constexpr const char* kProfileRunName = "profile";
};

/// A phase's state: pending (planned), running, complete, interrupted (cut short by a stop), or
/// superseded (a resumed run measured it again; its records are kept but no longer read).
enum class PhaseStatus { kPending, kRunning, kComplete, kInterrupted, kSuperseded };
std::string_view PhaseStatusName(PhaseStatus status);

struct PhaseInfo {
  int64_t id = 0;  // assigned by the store
  std::string run_id;
  int64_t ordinal = 0;  // run order within the run
  std::string stage;
  std::string phase;
  bool at_rest = false;         // the answers sampled one at a time for review, not load
  std::optional<double> level;  // a sweep level, or the phase's rate or concurrency
  std::string config_json = "{}";
  std::optional<int64_t> started_ns;
  std::optional<int64_t> ended_ns;
  PhaseStatus status = PhaseStatus::kPending;

  /// How the console and triage name its stage: "tools", or "tools at rest".
  std::string StageLabel() const { return at_rest ? stage + " at rest" : stage; }
  /// A profile's level kind: "request_rate" or "concurrency" for a sweep level (from its
  /// config's closed_loop), "trace" for its steady step; a profile stored before profiles ran as
  /// scenarios named its phases so already.
  std::string ProfileLevelKind() const;
};

/// One telemetry sample as stored: its series name, time on the run's clock and value.
struct TelemetryPoint {
  std::string series;
  int64_t t_ns = 0;
  double value = 0;
  int64_t label_sets = 1;  // from SeriesPoints: how many label sets `value` sums
};

/// The SQLite store every command after `run` reads. Opening it creates the file (and its folder)
/// when missing, turns on WAL and foreign keys, and migrates an older schema forward. Every write
/// runs in one transaction, so a killed process leaves either all of a write or none of it. Not
/// thread-safe: one writer thread owns a Store. The store is the only owner of the schema: every
/// SQL statement lives behind one of its methods.
class Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  /// Opens the store at `path` only when it is there: for the commands that read what runs
  /// stored, which must not leave an empty store (and its folder) behind. InvalidInput when there
  /// is no file at `path` or it is not a SQLite file.
  static Result<std::unique_ptr<Store>> OpenExisting(const std::string& path);
  /// A store in memory alone (SQLite's ":memory:"), with the same schema and settings as one on
  /// disk, gone when the Store is destroyed. Each is independent of every other. For tests.
  static Result<std::unique_ptr<Store>> OpenInMemory();

  Result<int> schema_version() { return SchemaVersionOf(*db_); }
  /// SQLite opens a file it may not write read-only, and says so only at the first write. A
  /// command that will write (after a run's load) asks first.
  bool read_only();
  /// For tests alone (LevelDB's TEST_ convention): the connection, to check with SQL what the
  /// store wrote. Nothing in src/ may call it: outside store/ the schema is not known.
  Database& TEST_database() { return *db_; }

  Status CreateRun(const RunInfo& run);
  /// Keeps what a run found (its run.json) with it, so that a report needs the store alone.
  Status SetRunFindings(const std::string& run_id, const std::string& findings_json);
  Status SetRunStatus(const std::string& run_id, RunStatus status,
                      std::optional<int64_t> finished_unix_ms);
  /// Runs, newest first.
  /// Removes a run and everything stored of it (phases, requests, answers, exports, scores,
  /// sign-offs), in one transaction. NotFound when there is no such run.
  Status DeleteRun(const std::string& run_id);
  Result<std::vector<RunInfo>> ListRuns();
  Result<std::optional<RunInfo>> FindRun(const std::string& run_id);

  /// Inserts the phase and returns its id.
  Result<int64_t> AddPhase(const PhaseInfo& phase);
  Status FinishPhase(int64_t phase_id, int64_t started_ns, int64_t ended_ns, PhaseStatus status);
  /// The run's phases in order: its measured ones, and its baselines' (kBaselinePhase) only
  /// `with_baselines` (a shard's, which a merge carries over).
  Result<std::vector<PhaseInfo>> ListPhases(const std::string& run_id, bool with_baselines = false);
  /// Sets a phase's status alone ("superseded": a resumed run measured it again).
  Status SetPhaseStatus(int64_t phase_id, PhaseStatus status);

  /// Appends the records in one transaction: all of them or, on error, none.
  Status AddRequests(std::span<const load::RequestRecord> records);
  /// Appends a phase's records in transactions of a few thousand, each all or nothing.
  Status AddRequestsInBatches(std::span<const load::RequestRecord> records);
  /// Marks requests (by phase and sequence) as answers sampled for review, with the condition
  /// they were produced in: "at_rest" or "under_load". One transaction; an answer already
  /// marked stays as it is (a resumed run marks its samples again).
  Status AddAnswers(const std::string& run_id, const std::string& condition,
                    const std::vector<std::pair<int64_t, int64_t>>& phase_and_sequence);
  /// Appends telemetry samples of a run (labels as a JSON object) in one transaction. Values that
  /// are not finite (NaN, which SQLite stores as NULL, and infinities, which no figure can use)
  /// are left out; their count is returned.
  Result<int64_t> AddTelemetry(const std::string& run_id,
                               std::span<const telemetry::TimedSample> samples);
  /// The telemetry series whose name ends with `suffix` (e.g. "num_requests_waiting"), summed
  /// over its label sets at each sample time in [from_ns, to_ns]: (t_ns, value), oldest first.
  Result<std::vector<std::pair<int64_t, double>>> SeriesTotal(const std::string& run_id,
                                                              const std::string& suffix,
                                                              int64_t from_ns, int64_t to_ns);
  /// A run's samples of the series whose names end with one of `series_suffixes` (plain text,
  /// compared as SQL's LIKE does: ASCII letters in either case), at times in [from_ns, to_ns],
  /// ordered by series, then time. No suffixes: no samples.
  Result<std::vector<TelemetryPoint>> ListTelemetry(
      const std::string& run_id, int64_t from_ns, int64_t to_ns,
      const std::vector<std::string>& series_suffixes);
  /// A run's samples of the series named exactly `names`, at times in [from_ns, to_ns], summed
  /// over their label sets (GPUs, engines) at each sample time, with how many were summed;
  /// ordered by time, then series. No names: no samples.
  Result<std::vector<TelemetryPoint>> SeriesPoints(const std::string& run_id, int64_t from_ns,
                                                   int64_t to_ns,
                                                   const std::vector<std::string>& names);
  /// Records the result of a fault-control probe: the phase holding its requests, its verdict
  /// and the evidence (JSON). Replaces the probe's earlier results in the run (per request too).
  Status AddFaultResult(const std::string& run_id, const std::string& probe,
                        const std::string& kind, int64_t phase_id, const std::string& verdict,
                        const std::string& evidence_json);
  /// One request's part in a probe (`step`: before, during, after, attempt...), pointing at the
  /// request by its phase and sequence, with its own verdict and evidence.
  Status AddFaultRequest(const std::string& run_id, const std::string& probe,
                         const std::string& kind, const std::string& step, int64_t phase_id,
                         int64_t sequence, const std::string& verdict,
                         const std::string& evidence_json);
  /// The run's requests in phase order, then schedule order; its baselines' only
  /// `with_baselines`.
  Result<std::vector<load::RequestRecord>> ListRequests(const std::string& run_id,
                                                        bool with_baselines = false);

  // Review data (defined in review_data.cc).

  /// A run's answers sampled for review, by request id.
  Result<std::vector<SampledAnswer>> ListSampledAnswers(const std::string& run_id);
  /// A run's answers of every task in the phases its answers were sampled from, by request id
  /// (defined in task_answers.cc).
  Result<std::vector<TaskAnswer>> ListTaskAnswers(const std::string& run_id);
  /// Adds an export with its items and, for an LLM judge, their scores, in one transaction: all
  /// of it or, on error, none. Each item's export_id is taken from `info`; a score whose item,
  /// reviewer and criterion are stored already is refused.
  Status AddExport(const ExportInfo& info, const std::vector<ReviewItem>& items,
                   const std::vector<Score>& scores = {});
  /// A run's exports, newest first (of two made in the same millisecond, the later one first).
  Result<std::vector<ExportInfo>> ListExports(const std::string& run_id);
  /// A run's review items by item id, each with its export's scorer.
  Result<std::vector<ReviewItem>> ListReviewItems(const std::string& run_id);
  /// Adds scores in one transaction, all or none; a score stored already for the same item,
  /// reviewer and criterion is replaced.
  Status AddScores(const std::vector<Score>& scores);
  /// The level stored for an item, reviewer and criterion; none when it has not been scored.
  Result<std::optional<int64_t>> FindScore(const std::string& item_id, const std::string& reviewer,
                                           const std::string& criterion);
  /// The scores of a run's items (every scorer's), ordered by item, reviewer, then criterion.
  Result<std::vector<StoredScore>> ListScores(const std::string& run_id);
  /// How often the independent reviewers gave each level of each criterion in a run's exports:
  /// criterion -> level -> count. An LLM judge's scores are left out.
  Result<std::map<std::string, std::map<int64_t, int64_t>>> ScoreLevelCounts(
      const std::string& run_id);

  // Usability judgements (defined in usability.cc).

  /// Adds reviewers' usability judgements in one transaction, all or none; one stored already
  /// for the same item and reviewer is replaced.
  Status AddUsability(const std::vector<Usability>& judgements);
  /// The judgement stored for an item and reviewer; none when there is none.
  Result<std::optional<Usability>> FindUsability(const std::string& item_id,
                                                 const std::string& reviewer);
  /// The usability judgements of a run's items, ordered by item, then reviewer.
  Result<std::vector<Usability>> ListUsability(const std::string& run_id);

  // Sign-offs (defined in signoffs.cc).

  /// Records a decision.
  Status AddSignoff(const Signoff& signoff);
  /// A run's decisions, oldest first.
  Result<std::vector<Signoff>> ListSignoffs(const std::string& run_id);

 private:
  explicit Store(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  /// Refuses a newer schema, sets up the connection and migrates it; `name` prefixes errors.
  static Result<std::unique_ptr<Store>> Prepare(std::unique_ptr<Database> db,
                                                const std::string& name);
  bool HasAnswer(const std::string& run_id, int64_t phase_id, int64_t sequence);
  static Result<int> SchemaVersionOf(Database& db);
  std::unique_ptr<Database> db_;
};

}  // namespace stagegate::store
