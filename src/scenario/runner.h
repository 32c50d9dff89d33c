#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/fake_clock.h"
#include "base/status.h"
#include "console/console.h"
#include "faults/access_denial.h"
#include "faults/tool_outage.h"
#include "http/scripted_transport.h"
#include "http/transport.h"
#include "load/metrics.h"
#include "load/response_budget.h"
#include "load/sessions.h"
#include "load/slices.h"
#include "manifest/bundle.h"
#include "scenario/findings.h"
#include "scenario/level_judge.h"
#include "scenario/phase_plan.h"
#include "scenario/stage_requests.h"
#include "scenario/step_runner.h"
#include "scenario/telemetry_scrapers.h"
#include "stats/capacity.h"
#include "stats/recovery.h"
#include "store/store.h"
#include "telemetry/nvml.h"
#include "telemetry/scraper.h"

namespace stagegate::scenario {

/// The command line's one-flag changes to a scenario.
struct RunSettings {
  std::string target_url;  // replaces the target's base URL (for a sim target: no sim is started)
  std::string model;
  std::string only_stage;
  std::optional<uint64_t> seed;
  int workers = 0;
  /// The client's own resource, not part of what is measured: not stored with the run, and a
  /// resumed run takes it from its command line. 0: no limit.
  int64_t response_memory_bytes = load::ResponseBudget::kDefaultLimitBytes;
  /// `--shard I/N`: this process sends slice I of every load step, each at its planned offset
  /// (scenario/shard_plan.h); the first shard alone samples answers, probes faults and scrapes
  /// telemetry. `--start-at`: the run's time zero, the same wall-clock instant in every shard.
  load::Shard shard;
  std::optional<int64_t> start_at_unix_ms;
  /// A run merged from this many shards (`merge`), 0 for any other.
  int64_t merged_shards = 0;
  /// `merge`: every step is taken from the store (ResumeFrom), nothing is sent, no application
  /// is started; a step the store does not hold is an error. Not stored.
  bool replay = false;
  /// Load alone (`profile`): no quality samples and no fault controls, nor notes about them.
  bool load_only = false;
  /// Every telemetry sample stored is kept in the report too (RunReport::telemetry_samples).
  bool keep_telemetry = false;
  /// How the console names a step of a stage (its progress lines); empty: "STAGE STEP", e.g.
  /// "bare sweep 8.00 req/s". Not stored.
  std::function<std::string(const std::string& stage, const PhaseStep& step)> step_label;

  /// The plan is one of shards: every sweep level runs, and none ends early.
  bool sharded() const { return shard.count > 1 || merged_shards > 1; }
};

/// What an interrupted run left in the store, for `run --resume`: its phases and records. A
/// step whose phase completed is taken from here instead of being run again.
struct ResumeFrom {
  std::vector<store::PhaseInfo> phases;
  std::vector<load::RequestRecord> records;
};

/// RunSettings as stored with a run (runs.settings_json), and back.
nlohmann::json SettingsToJson(const RunSettings& settings);
RunSettings SettingsFromJson(const nlohmann::json& json);

/// What a run reads time from and sends through: the steady clock and curl over sockets, or, in
/// a test, Scripted: a FakeClock that a scripted application's answers move, so that a whole
/// scenario (its phases, sweep and the sweep's live controller, probes and samples, and every
/// verdict on them) runs in the time its records take to compute, with exact times. Give such a
/// run a target URL (no reference application is started) and one worker (scripted transports on
/// several threads share one clock).
struct RunSeam {
  const Clock* clock = &SteadyClock::Get();
  http::TransportFactory transport;  // empty: curl over sockets
  bool ticks_on_clock = false;       // load::RunControl::ticks_on_clock

  static RunSeam Scripted(FakeClock& clock, http::Script script) {
    return {.clock = &clock,
            .transport = http::ScriptedTransport::Factory(clock, std::move(script)),
            .ticks_on_clock = true};
  }
};

/// One load step that ran: a phase, or one level of a sweep.
struct StepResult {
  std::string stage;
  PhaseStep step;  // its options' schedule is dropped once it ran
  int64_t phase_id = 0;
  load::PhaseMetrics metrics;
  std::vector<ThresholdCheck> checks;  // empty for phases the thresholds do not judge
  std::vector<load::Slice> slices;     // with the scenario's slice_s: its time slices
  bool judged = false;                 // steady, burst and sweep levels are
  bool interrupted = false;
  bool resumed = false;                  // taken from the store, measured before a resume
  int64_t started_ns = 0, ended_ns = 0;  // from the run's origin
  double client_cpu_s = 0;
  double idle_poll_s = 0;      // of client_cpu_s, busy polling that found nothing
  double max_worker_busy = 0;  // the busiest worker's share of the step, idle polling left out
  int workers = 0;
  int64_t dropped = 0;         // arrivals dropped at a full max_concurrency
  load::ReceiveStats receive;  // how arrivals were stamped (not kept for a resumed step)
  std::map<std::string, double> server_timing_ms;  // mean per Server-Timing entry
  size_t first_record = 0, record_count = 0;       // where its records are in Runner::records()
  int64_t start_lag_ns = 0;      // a sharded step: how late it started against its planned offset
  int64_t expected_denials = 0;  // of its measured requests: denials the corpus expects
  /// A sweep level: thresholds, sustained load and length judged together.
  std::optional<LevelJudgement> level;
  /// A sweep level its live controller ended before its schedule did: why (LevelController).
  std::string ended_early;
  /// A step of multi-turn sessions: its metrics by turn, and how many sessions completed.
  std::optional<load::SessionMetrics> sessions;
  /// Each way the client may have limited this step (CheckClient); not checked, and not written
  /// to run.json, for a step taken from the run being resumed.
  std::vector<std::string> client_warnings;

  bool passed() const {
    return judged && AllPassed(checks) && (!level || level->verdict == LevelVerdict::kPass);
  }
  /// Completed requests (expected denials among them) over measured ones: what the completion
  /// check reads.
  double completion_rate() const;
};

struct StageResult {
  std::string name;
  std::vector<StepResult> steps;
  bool skipped = false;  // the failure policy stopped the run before it, or --only-stage
  std::optional<stats::CapacityFinding> capacity;
  std::vector<stats::LevelOutcome> sweep_levels;  // in the order they ran
  bool sweep_search = false;                      // the sweep searched for its levels
  double sweep_took_s = 0;
  std::optional<OverloadFinding> overload;
  std::optional<stats::RecoveryFinding> recovery;
  stats::RecoveryCriteria recovery_criteria;
  double recovery_observed_s = 0;

  /// Its steady and burst phases held every threshold (true when it has neither).
  bool passed() const;
  const StepResult* Find(manifest::PhaseKind kind) const;
};

struct RunReport {
  std::string run_id;
  std::vector<TelemetrySource> telemetry;
  /// With RunSettings::keep_telemetry: every sample as stored, oldest first.
  std::vector<telemetry::TimedSample> telemetry_samples;
  bool interrupted = false;
  std::vector<StageResult> stages;
  int64_t samples_at_rest = 0, samples_under_load = 0;
  /// Each baseline's answers that joined the review: those to the tasks sampled (an endpoint's,
  /// those it answered).
  std::vector<std::pair<std::string, int64_t>> baseline_samples;
  std::vector<faults::DenialFinding> denials;      // access-denial probes, in the scenario's order
  std::vector<faults::ToolOutageFinding> outages;  // tool-outage probes, in the scenario's order
  std::vector<std::string> notes;  // facts for the reader: telemetry absent, a stage skipped...
  /// A shard's run: its shard, start time and clock anchors; a merged run: its shards' (merge
  /// writes it). Null for any other run.
  nlohmann::json sharding;
};

/// Runs a scenario: its stages in order, each stage's load phases in order (warmup, steady, burst,
/// sweep, overload, recovery), the final stage's quality samples at rest and under load. Every
/// step is planned before the first request goes out; every step's records go to the store when
/// it ends. A stop (SIGINT) ends the step in flight after its grace period and the run after it.
class Runner {
 public:
  Runner(const manifest::Bundle& bundle, RunSettings settings, store::Store& store,
         console::Console& console, const std::atomic<bool>& stop, RunSeam seam = {});

  /// Plans the run, calls `on_planned` (which creates the run in the store) and runs it. Fails on
  /// bad input before anything is sent (InvalidInput), or on a runtime failure of the store or
  /// the sim.
  Result<RunReport> Run(const std::string& run_id, const std::function<Status()>& on_planned,
                        const ResumeFrom* resume = nullptr);

  /// The input's files, read already (the tokenizer, dataset or trace the scenario's input
  /// names): the run uses these instead of reading them again.
  void UseInputFiles(InputFiles files) {
    input_files_ = std::move(files);
    input_files_read_ = true;
  }

  /// Every record of the run, in run order (for requests.jsonl).
  const std::vector<load::RequestRecord>& records() const { return records_; }
  /// The steady-clock reading record times count from.
  int64_t origin_ns() const { return origin_ns_; }
  /// The records of one step.
  std::span<const load::RequestRecord> RecordsOf(const StepResult& step) const {
    return std::span<const load::RequestRecord>(records_).subspan(step.first_record,
                                                                  step.record_count);
  }

 private:
  struct Plan;
  struct PlanStage;
  /// Plans the run into `plan` and starts what it sends to (the fault proxies, our sim). Fails
  /// with every problem of the input at once (InvalidInput), or on the first that cannot start.
  Status Prepare(Plan& plan);
  /// Reads the input's files, unless UseInputFiles gave them, and says what they hold; their
  /// problems go to `errors`.
  void ReadInputFiles(std::vector<std::string>& errors);
  /// Plans each of `stages`: its requests, against plan.endpoint, and its steps (a sweep's first
  /// level). Problems go to `errors`.
  void PlanStages(const std::vector<manifest::EffectiveStage>& stages, Plan& plan,
                  std::vector<std::string>& errors);
  /// Starts the fault proxies of `upstreams` (listening port to upstream): the first shard's.
  Status StartFaultProxies(const std::map<int64_t, std::string>& upstreams, Plan& plan);
  /// Starts our sim as the target, and builds the stages' requests again against it.
  Status StartOwnSim(Plan& plan);
  /// A run in shards, or with --start-at: time zero is the agreed wall-clock instant. Sets the
  /// origin and returns the report's "sharding" (the shard, the start and the clock anchors).
  nlohmann::json AgreeOnOrigin();
  /// Runs a step, or takes it from the run being resumed when its phase completed there (not
  /// when `measure_again`: then the stored phase is marked superseded).
  /// A sweep level (`level` set) may end early once it is decided, and is judged as a level.
  Result<StepResult> RunStep(const std::string& stage, PhaseStep step,
                             const load::RequestSource& source, bool measure_again = false,
                             const LevelCriteria* level = nullptr);
  /// A step whose phase the run being resumed completed: its records taken from the store and
  /// summarized (and judged, for a level) as if measured now.
  Result<StepResult> ResumedStep(StepResult result, PhaseStep step, const store::PhaseInfo& stored,
                                 const LevelCriteria* level);
  /// What a step's load measured (Summarize, `scoped` as there), and each way its client may have
  /// limited it (CheckClient).
  void SummarizeLoad(StepResult& result, const load::LoadResult& load, const PhaseStep& step,
                     bool scoped) const;
  /// Judges a sweep level from its records, with the server's queue depth over it when scraped.
  Status JudgeStep(StepResult& result, std::span<const load::RequestRecord> records,
                   const LevelCriteria& level, const std::string& ended_early_reason);
  /// The scenario's access-denial probes, one request at a time, through `requests` (the final
  /// stage's configuration) with each probe's credentials.
  Status RunDenialProbes(const StageRequests& requests, const Endpoint& endpoint,
                         RunReport& report);
  /// The scenario's tool-outage probes, one request at a time through `requests`: before,
  /// inject, during, restore, after. The actuator restores whatever happens in between.
  Status RunToolOutageProbes(const StageRequests& requests, Plan& plan, RunReport& report);
  /// One tool-outage probe under way (fault_probes.cc).
  class OutageProbeRun;
  /// Stores a probe's verdict and evidence, and one row for each request in evidence["requests"]
  /// (each with its part, phase_id, sequence and passed).
  Status StoreFaultResult(const std::string& probe, const std::string& kind, int64_t phase_id,
                          const std::string& verdict, const nlohmann::json& evidence);
  /// A fault-control step: `count` requests, one at a time, with the target's timeouts or, when
  /// given, `bound_ms` for both the first token and the whole answer.
  PhaseStep ProbeStep(std::string label, int64_t count,
                      std::optional<int64_t> bound_ms = std::nullopt) const;
  /// The bearer token of a persona (none for a null ref or an unknown persona).
  std::optional<std::string> TokenOf(const std::optional<manifest::Ref>& persona,
                                     const Endpoint& endpoint) const;
  /// A step's statistics, threshold checks and Server-Timing means, from its records (measured
  /// now, or taken from the store on a resume).
  /// With `scoped`, each threshold scope is checked too, on the requests of its tasks (a sweep
  /// level is judged on the scenario's thresholds alone).
  void Summarize(StepResult& result, std::span<const load::RequestRecord> records,
                 bool scoped) const;
  /// The stored phase of a step, if the run being resumed has one.
  const store::PhaseInfo* Stored(const std::string& stage, const PhaseStep& step) const;

  /// Starts the scrapers of the target's /metrics, a DCGM exporter or NVML, on the run's clock.
  void StartTelemetry(const Plan& plan, RunReport& report);
  /// Stores the samples scraped since the last flush.
  Status FlushTelemetry();
  /// Stops the scrapers, stores what is left and records each source in the report.
  Status FinishTelemetry(RunReport& report);
  /// A stage's load phases in order (overload and recovery judged together), the sweep among
  /// them.
  Status RunStagePhases(PlanStage& stage, size_t index, StageResult& result);
  /// The stage's sweep or capacity search, every level judged.
  Status RunStageSweep(const PlanStage& stage, size_t index, const load::RequestSource& source,
                       StageResult& result);
  /// The answers sampled for review from the final stage (`effective`, its requests against
  /// `endpoint`): under load, then at rest; then each baseline's.
  Status SampleAnswers(const StageRequests& requests, const StageResult& stage,
                       const manifest::EffectiveStage& effective, const Endpoint& endpoint,
                       RunReport& report);
  Status StoreBaselines(const manifest::EffectiveStage& effective, const Endpoint& endpoint,
                        RunReport& report);
  /// A baseline's recorded answers to `tasks`, stored as the answers of a phase at `ordinal`;
  /// in a merged run, those the first shard stored.
  Status StoreRecordedBaseline(const std::string& name,
                               const std::vector<manifest::RecordedAnswer>& answers,
                               int64_t ordinal, const std::set<std::string>& tasks,
                               RunReport& report);
  /// The requests of an endpoint baseline: the final stage's (`effective`) with its overlay.
  Result<StageRequests> BaselineRequests(const manifest::Baseline& baseline,
                                         const manifest::EffectiveStage& effective,
                                         const Endpoint& endpoint);
  /// Asks an endpoint baseline `tasks`, one at a time, as the run's final stage would.
  Status AskBaseline(const manifest::Baseline& baseline, const manifest::EffectiveStage& effective,
                     const Endpoint& endpoint, const std::set<std::string>& tasks,
                     RunReport& report);
  /// One request at a time, `requests` of them, with the target's timeouts.
  PhaseStep AtRestStep(int64_t requests) const;
  Status SampleAtRest(const StageRequests& requests, const std::string& stage,
                      std::optional<int64_t> steady_phase_id, RunReport& report);

  /// The scenario's trace, when its input is one: open-loop phases replay it.
  const std::vector<load::TraceEntry>* InputTrace() const {
    return input_files_.trace.empty() ? nullptr : &input_files_.trace;
  }
  /// Sets the step's sessions, when the stage's requests are sessions, before it runs.
  static void UseSessions(const StageRequests& requests, PhaseStep& step);
  /// The step's metrics by turn and over sessions, when it ran sessions.
  void SummarizeSessions(const StageRequests& requests, StepResult& step) const;

  const manifest::Bundle& bundle_;
  RunSettings settings_;
  store::Store& store_;
  console::Console& console_;
  const std::atomic<bool>& stop_;
  const Clock& clock_;
  http::TransportFactory transport_;
  bool ticks_on_clock_;
  std::string run_id_;
  int64_t origin_ns_ = 0;
  std::optional<StepRunner> steps_;  // set once the run starts
  // The telemetry sources; the sampler outlives the scrapers that read it (destroyed first).
  std::optional<TelemetryScrapers> telemetry_;
  std::vector<telemetry::TimedSample> telemetry_kept_;  // with settings_.keep_telemetry
  std::vector<load::RequestRecord> records_;
  std::set<std::string> refusal_tasks_;             // a denial of these is the right answer
  std::vector<std::set<std::string>> scope_tasks_;  // the tasks of each threshold scope
  InputFiles input_files_;  // the input's tokenizer and dataset, when it names them
  bool input_files_read_ = false;
  const ResumeFrom* resume_ = nullptr;
  int64_t next_ordinal_ = 0;
  int64_t next_slot_ns_ = 0;  // a sharded run: where the next load step's slot starts
};

/// run.json: the run's findings, schema version 1.
nlohmann::json RunJson(const manifest::Bundle& bundle, const std::string& fingerprint,
                       const RunReport& report);
/// stages.csv: one row per step.
std::string StagesCsv(const RunReport& report);
/// The console's stage × phase table, and the capacity, overload and recovery findings.
std::vector<std::string> SummaryLines(const RunReport& report);

}  // namespace stagegate::scenario
