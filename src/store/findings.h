#pragma once

// What a run found (its run.json, kept in the store with it), read into typed values. Every
// reader of a stored run (report, compare, the dashboard) works on these: a value the run could
// not measure is an empty optional, never a zero and never an exception, and a field of the
// wrong type is a problem the reader can show. The schema is docs/formats.md's "run.json".

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stats/capacity.h"

namespace stagegate::store {

/// The schema version of run.json these readers understand.
inline constexpr int kFindingsSchemaVersion = 1;

/// A distribution of one metric as run.json keeps it: its count, and its statistics (mean, p50,
/// p95, ...) when there was anything to summarise.
struct Distribution {
  int64_t count = 0;
  std::map<std::string, double> stats;
  /// The statistic ("p95", "mean"), or nullopt when nothing was measured.
  std::optional<double> At(std::string_view stat) const;
};

/// One threshold held against a phase: "ttft p95 <= 1500 ms". `measured` is empty when nothing
/// could be measured (no successful request): such a check failed.
struct ThresholdResult {
  std::string check;
  std::optional<double> measured;
  std::optional<double> limit;
  bool passed = false;
  // A threshold scope's check: the scope ("" for the scenario's thresholds), how many of its
  // requests the phase measured, and whether that was too few to judge (then neither passed nor
  // failed).
  std::string scope;
  int64_t requests = 0;
  bool pending = false;
};

/// A level of a sweep judged: pass, fail or inconclusive, and why.
struct LevelJudgementFindings {
  std::string verdict;  // "pass", "fail" or "inconclusive"
  std::string reason;
  std::optional<double> completed_rate;
  std::optional<stats::RateWindow> rates;  // the window of every rate of the level (runs since it)
};

/// One turn index of a step of multi-turn sessions.
struct TurnFindings {
  int64_t turn = 0;  // from 1
  int64_t sent = 0, completed = 0;
  Distribution ttft_ms, e2e_ms, input_tokens;
};

/// A step of multi-turn sessions: how many started and completed every turn, and each turn.
struct SessionFindings {
  int64_t started = 0, completed = 0;
  std::vector<TurnFindings> turns;
};

/// One load step of a stage: a phase, or a level of a sweep.
struct StepFindings {
  std::string phase;  // warmup, steady, burst, sweep, overload, recovery
  std::optional<int64_t> phase_id;
  std::optional<double> level;
  std::string level_unit;  // "req/s" or "concurrency"
  bool interrupted = false;
  std::map<std::string, int64_t> requests;      // offered, sent, completed, ...
  std::map<std::string, double> throughput;     // request_throughput, goodput, completion_rate, ...
  std::map<std::string, Distribution> metrics;  // ttft_ms, e2e_ms, itl_ms, ...
  std::vector<ThresholdResult> checks;
  std::optional<bool> passed;  // judged phases only
  std::optional<LevelJudgementFindings> judgement;
  std::optional<SessionFindings> sessions;
  /// Each way the client may have limited the step (scenario::CheckClient), empty when it kept
  /// up; nullopt in runs stored before every step was checked.
  std::optional<std::vector<std::string>> client_warnings;

  int64_t Requests(const std::string& name) const;
  std::optional<double> Throughput(const std::string& name) const;
  /// A statistic of a metric ("ttft_ms", "p95"), or nullopt when it was not measured.
  std::optional<double> Stat(const std::string& metric, std::string_view stat) const;
};

/// Where acceptable responsiveness ends, from a stage's sweep.
struct CapacityFindings {
  std::optional<double> holds_up_to;
  std::optional<double> fails_at;
  std::optional<double> sustained_rate;
  bool inconclusive = false;
  std::string unit;
  std::string finding;  // the sentence the report shows
  /// At holds_up_to, every rate over one window (stats::RateWindow); nullopt in runs stored
  /// before the window was kept.
  std::optional<stats::RateWindow> window;
};

/// How the stage shed under overload.
struct OverloadFindings {
  int64_t offered = 0;
  int64_t shed = 0;
  std::vector<ThresholdResult> checks;
};

/// Whether it recovered after overload.
struct RecoveryFindings {
  std::optional<double> recovered_after_s;
  std::optional<double> max_recovery_s;
  bool passed = false;
  std::string finding;
};

struct StageFindings {
  std::string name;
  bool skipped = false;
  std::optional<bool> passed;
  std::vector<StepFindings> steps;
  std::optional<double> added_ttft_p95_ms;  // over the stage before it, at steady load
  std::optional<CapacityFindings> capacity;
  std::optional<OverloadFindings> overload;
  std::optional<RecoveryFindings> recovery;

  /// The first step of `phase`, or null.
  const StepFindings* Step(std::string_view phase) const;
};

/// One request of a fault probe, as the report's evidence table shows it.
struct ProbeRequest {
  std::string part;  // before, during, after, attempt, control
  std::optional<int64_t> status;
  std::string outcome;
  std::optional<double> e2e_ms;
  std::string acknowledged, claimed, excerpt;
};

enum class ProbeKind { kAccessDenial, kToolOutage };
enum class ProbeVerdict { kPass, kFail, kInconclusive, kInterrupted };
std::string_view Name(ProbeKind kind);
std::string_view Name(ProbeVerdict verdict);

struct ProbeFindings {
  ProbeKind kind = ProbeKind::kAccessDenial;
  std::string probe;
  std::string actuator;  // tool outage: proxy, command, http
  ProbeVerdict verdict = ProbeVerdict::kInconclusive;
  std::vector<std::string> reasons;
  std::vector<ProbeRequest> requests;
};

/// The facts of the manifest a run was made under.
struct ManifestFindings {
  std::string model, model_version, hardware, serving_stack;
};

/// A run's findings. `problems` lists every field that was present with the wrong type (it is
/// then treated as missing), so that a damaged run.json says so instead of reading as zeros.
struct RunFindings {
  bool present = false;  // false: the run stored no findings (it did not end)
  int schema_version = 0;
  std::string status;  // complete, interrupted
  ManifestFindings manifest;
  std::vector<StageFindings> stages;
  std::vector<ProbeFindings> probes;
  std::vector<std::string> notes;
  std::vector<std::string> problems;

  /// The stage the release is decided on: the last one that ran (was not skipped); null when
  /// none did.
  const StageFindings* FinalStage() const;
};

/// A latency threshold of a stored (canonical) scenario.
struct StoredLatencyThreshold {
  std::string metric;  // ttft, ttst, itl, tpot, e2e, ...
  double percentile = 0;
  double max_ms = 0;
};

/// The quality thresholds of a stored scenario; an optional one the scenario left out is empty.
struct StoredQualityThresholds {
  std::optional<int64_t> min_scored_answers;
  std::optional<double> min_agreement;
  std::optional<double> min_mean;
  std::optional<double> min_pass_rate;
  std::map<std::string, double> criterion_floors;
  /// `quality.judge`: the judge model that may score what reviewers did not, once calibrated.
  struct Judge {
    std::string model;
    double min_kappa = 0.7;
    int64_t min_overlap = 50;
  };
  std::optional<Judge> judge;
  std::string no_regression_from;  // "approved", or "" without the rule
  /// `quality.not_worse_than`: baseline, criterion ("weighted_mean" for the weighted mean) and
  /// margin of each rule.
  struct NotWorseThan {
    std::string baseline, criterion;
    double margin = 0;
  };
  std::vector<NotWorseThan> not_worse_than;
};

/// The `cost` section of a stored scenario (manifest::Cost): what one instance or GPU cost an
/// hour, how many served the test, the currency and where the price comes from.
struct StoredCost {
  double price_per_hour = 0;  // > 0
  std::string per;            // "instance" or "gpu"
  int64_t count = 1;          // >= 1
  std::string currency;       // "USD"
  std::string source;
};

/// What the readers of a run need of the canonical scenario it was fingerprinted from
/// (RunInfo::scenario_json, manifest/fingerprint.h): thresholds, quality thresholds, triage
/// patterns, the corpus and rubric hashes and the cost. Entries that are not well formed are left
/// out and named in `problems`; a profile run's configuration gives an empty scenario.
struct StoredScenario {
  bool present = false;  // false: the text is not a JSON object
  std::vector<StoredLatencyThreshold> latency;
  StoredQualityThresholds quality;
  std::optional<std::vector<std::string>> tool_failure_patterns;  // empty: not in the scenario
  std::optional<std::vector<std::string>> refusal_patterns;
  std::string corpus_sha256, rubric_sha256;  // empty: none
  // The scenario's `decisions:`: condition ("quality", ...) -> owner, and whether "ready" waits
  // for their sign-off.
  std::map<std::string, std::string> owners;
  bool require_signoff = false;
  std::optional<StoredCost> cost;  // empty: no cost section, or a malformed one
  std::optional<double> slice_s;   // the scenario's time slices, when it has them
  std::vector<std::string> problems;
};

StoredScenario ParseScenario(std::string_view scenario_json);

/// The rubric an export is scored against, as the store keeps it with the export
/// (ExportInfo::rubric_json). A criterion without an id is left out and named in `problems`.
struct StoredRubric {
  struct Criterion {
    std::string id;
    double weight = 1;
    bool hard = false;
    double floor = 0;
    std::vector<int64_t> levels;  // the scale's levels, in order
  };
  std::vector<Criterion> criteria;
  std::optional<double> min_weighted_mean, min_each;  // the pass rule; empty: not set
  std::vector<std::string> problems;
};

StoredRubric ParseRubric(std::string_view rubric_json);

/// Reads run.json text. Never throws: text that is not a JSON object gives findings with
/// `present` false and a problem; "{}" (a run that did not end) gives `present` false alone.
RunFindings ParseFindings(std::string_view run_json);

}  // namespace stagegate::store
