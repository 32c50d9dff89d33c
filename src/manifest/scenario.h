#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "manifest/capability.h"
#include "manifest/diagnostics.h"

namespace stagegate::manifest {

/// A name as written in a manifest, with where it was written: cross-references (a task's persona,
/// a probe's task) are checked after every file is loaded, and their errors point here.
struct Ref {
  std::string name;
  SourcePos pos;
};

/// A path as written in a manifest, and resolved against the folder of the file that wrote it.
struct PathRef {
  std::string written;
  std::string resolved;
  SourcePos pos;

  bool empty() const { return written.empty(); }
};

/// Facts about the system under test, recorded verbatim in every report and compared between runs.
struct ManifestFacts {
  std::string model;
  std::string model_version;
  std::string hardware;
  std::string serving_stack;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int64_t> max_tokens;
};

enum class TargetKind { kSim, kOpenAi };
enum class Endpoint { kChat, kCompletions };

struct Timeouts {
  int64_t connect_ms = 2000;
  int64_t first_token_ms = 15000;
  int64_t total_ms = 60000;
};

struct Target {
  TargetKind kind = TargetKind::kSim;
  std::string sim_profile = "default";  // kind sim: default, fast, or a resolved profile path
  std::string base_url;                 // kind openai
  std::string api_key_env;              // the variable's name; the key itself is never stored
  std::string metrics_url;
  std::string model;  // sent in requests
  Endpoint endpoint = Endpoint::kChat;
  bool stream = true;
  Timeouts timeouts;
};

enum class PhaseKind { kWarmup, kSteady, kBurst, kSweep, kOverload, kRecovery };
enum class TaskSelection { kCovered, kAll };

/// One configuration of the application, as an overlay on the target and the stages before it.
/// Unset optionals inherit; see EffectiveStages().
struct Stage {
  std::string name;
  SourcePos pos;
  std::vector<Capability> capabilities;
  std::optional<std::string> base_url;
  std::optional<std::string> path;
  std::map<std::string, std::string> headers;
  nlohmann::json body = nlohmann::json::object();
  std::optional<bool> persona_credentials;
  std::optional<bool> tools;
  std::vector<PhaseKind> phases;  // empty: every phase the scenario defines
  TaskSelection tasks = TaskSelection::kCovered;
};

enum class Arrival { kConstant, kPoisson, kGamma };
enum class OnFull { kQueue, kDrop };

struct Spike {
  double at_s = 0;
  double duration_s = 0;
  double rate = 0;
};

/// A load pattern inside a stage. Exactly one of rate and concurrency is set (for a sweep, one of
/// rate_levels and concurrency_levels); at least one of duration_s and requests.
struct LoadPhase {
  PhaseKind kind = PhaseKind::kSteady;
  SourcePos pos;
  std::optional<double> rate;
  std::optional<int64_t> concurrency;
  std::vector<double> rate_levels;
  std::vector<int64_t> concurrency_levels;
  int64_t bisect = 0;  // sweep: extra levels tried between the last pass and the first failure
  // A sweep's search for the sustained capacity (`search: auto`): from `rate` or `concurrency`,
  // doubling up to `up_to`, then bisecting to `resolution`.
  bool search = false;
  std::optional<double> up_to;
  double resolution = 0.1;
  // What a sweep level must show, and how long it may run to show it.
  double keep_pace = 0.95;               // completions against arrivals over the arrival window
  int64_t min_completed = 30;            // completed requests a level needs to tell
  std::optional<double> max_duration_s;  // a level runs on to this while it cannot tell
  Arrival arrival = Arrival::kConstant;
  std::optional<double> burstiness;  // gamma shape
  std::optional<double> ramp_to;
  std::vector<Spike> spikes;
  std::optional<int64_t> max_concurrency;
  OnFull on_full = OnFull::kQueue;
  std::optional<double> duration_s;
  std::optional<int64_t> requests;
  double grace_s = 5;
  double window_s = 5;  // recovery: the rolling window the recovery time is measured over

  // What `profile`'s flags set, not scenario keys (docs/cli.md: profile builds a scenario).
  /// The first requests of each step, sent and recorded but not measured (`--warmup`).
  int64_t warmup_requests = 0;
  /// An input trace replayed at its own times, this much faster (`--trace --speedup`), in place
  /// of `rate`: the step's level is the speedup.
  std::optional<double> speedup;
  /// The seed every step of the phase draws its schedule from; unset: one per stage and phase
  /// (StepSeed). `profile` draws every level from --seed.
  std::optional<uint64_t> schedule_seed;
  /// A sweep decides its levels: each offers its nominal rate exactly over duration_s and ends
  /// once told, and a list of levels stops one past the first miss. False (`profile` without
  /// --slo or --search): every level runs whole (a level with max_duration_s still ends once
  /// told).
  bool decide_levels = true;
};

struct TokenDistribution {
  double mean = 0;
  double std = 0;
};

enum class InputSource { kCorpus, kSynthetic, kDataset, kTrace };

/// `input.sessions`: requests as multi-turn sessions. A synthetic source draws the turn count and
/// each follow-up's length; a corpus source takes its turns from each task's `follow_ups`.
struct SessionSpec {
  SourcePos pos;
  std::optional<TokenDistribution> turns;             // synthetic: turns per session
  TokenDistribution think_ms{0, 0};                   // before each turn after the first
  std::optional<TokenDistribution> follow_up_tokens;  // synthetic: as input_tokens without it
};

/// Synthetic prompts that start alike, as a long system prompt or a shared document makes them
/// (`input.shared_prefix`, `profile --shared-prefix`): `count` prefixes of `tokens` tokens, one of
/// which starts each of a `share` of the requests.
struct SharedPrefixSpec {
  int64_t count = 1;
  int64_t tokens = 1;
  double share = 1;
};

struct InputSpec {
  InputSource source = InputSource::kCorpus;
  std::optional<TokenDistribution> input_tokens;
  std::optional<TokenDistribution> output_tokens;
  // source dataset: the file (relative to the scenario), "jsonl", "sharegpt" or "" (from its
  // content), and the prompt lengths in tokens to keep.
  PathRef dataset;
  std::string dataset_format;
  // source trace: a Mooncake-format JSONL (relative to the scenario), and the tokens each of an
  // entry's hash_ids stands for.
  PathRef trace;
  int64_t block_tokens = 512;
  std::optional<int64_t> min_tokens, max_tokens;
  std::optional<int64_t> max_output_tokens;  // `profile --dataset-max-output-tokens`; not a key
  nlohmann::json extra_body = nlohmann::json::object();
  /// The model's tokenizer (tokenizer.json or a SentencePiece .model), for exact synthetic
  /// lengths and counts where the server gives none; empty: counts are estimated.
  PathRef tokenizer;
  std::optional<SessionSpec> sessions;
  std::optional<SharedPrefixSpec> shared_prefix;  // source synthetic only
};

enum class LatencyMetric { kTtft, kTtst, kItl, kTpot, kE2e, kCorrected, kScheduleLag };

struct LatencyThreshold {
  LatencyMetric metric = LatencyMetric::kTtft;
  double percentile = 95;
  double max_ms = 0;
};

/// Thresholds for one kind of task: the requests of the corpus tasks of one category, or of the
/// tasks carrying one tag. Condition 1 judges them on those requests alone, beside the thresholds
/// every request is held to.
struct ThresholdScope {
  std::string name;      // "actions": unique among the scopes
  SourcePos pos;         // of the scope's mapping
  std::string category;  // exactly one of category and tag is set
  std::string tag;
  std::vector<LatencyThreshold> latency;
  std::optional<double> completion_rate;  // unset: the scenario's
  int64_t min_requests = 20;              // fewer in a phase: its checks are pending
};

/// Condition 1.
struct Thresholds {
  std::vector<LatencyThreshold> latency;
  double completion_rate = 0.99;
  std::vector<ThresholdScope> scopes;
};

/// `quality.judge`: when an LLM judge may score the answers reviewers did not. Only when, in the
/// run, its kappa against the reviewers' consensus has a 95% interval whose lower bound is at least
/// `min_kappa` on every criterion, on at least `min_overlap` answers both scored.
struct JudgeGate {
  std::string model;  // the judge's model, as `stagegate judge --model` named it
  SourcePos pos;
  double min_kappa = 0.7;    // in [-1, 1]
  int64_t min_overlap = 50;  // >= 2
};

/// Condition 2.
/// Which earlier run each task is compared with (`quality.no_regression_from`): none, or the
/// most recent run of the same fingerprint whose quality an owner accepted.
enum class RegressionBaseline { kNone, kApproved };
inline constexpr EnumName<RegressionBaseline> kRegressionBaselineNames[] = {
    {RegressionBaseline::kApproved, "approved"},
};

/// `quality.not_worse_than`: the assistant's mean on a criterion may be below a baseline's by at
/// most `margin`, judged on the lower bound of the difference's 95% interval (non-inferiority).
struct NotWorseThan {
  Ref baseline;   // a name of the scenario's `baselines:`
  Ref criterion;  // a rubric criterion, or "weighted_mean"
  double margin = 0;
  SourcePos pos;
};

struct QualityThresholds {
  int64_t samples_at_rest = 20;
  int64_t samples_under_load = 20;
  int64_t reviewers_per_answer = 2;
  int64_t min_scored_answers = 30;
  double min_agreement = 0.6;
  std::optional<double> min_mean;
  std::optional<double> min_pass_rate;
  std::vector<std::pair<Ref, double>> criterion_floors;
  std::vector<Ref> hard_criteria;
  std::optional<JudgeGate> judge;  // unset: a judge's scores always stay apart
  RegressionBaseline no_regression_from = RegressionBaseline::kNone;
  std::vector<NotWorseThan> not_worse_than;
};

/// Condition 3, the overload part.
struct RecoveryPolicy {
  std::vector<int64_t> shed_statuses = {429, 503};
  bool require_retry_after = true;
  double max_shed_latency_ms = 500;
  double max_recovery_s = 30;
};

enum class Credentials { kPersona, kNone, kInvalid };

struct AccessDenialProbe {
  std::string name;
  SourcePos pos;
  Credentials credentials = Credentials::kPersona;
  std::optional<Ref> persona;
  std::optional<Ref> task;
  std::string prompt;
  std::vector<int64_t> expect_status;
  std::string expect_answer;
  std::optional<Ref> positive_control;
  int64_t repeat = 1;
};

enum class ActuatorKind { kProxy, kCommand, kHttp };
enum class ProxyMode { kRefuse, kReset, kDelay, kHang, kStatus, kTrickle };

struct HttpCall {
  std::string method = "POST";
  std::string url;
  nlohmann::json body;  // null: no body
};

struct Actuator {
  ActuatorKind kind = ActuatorKind::kProxy;
  ProxyMode mode = ProxyMode::kRefuse;
  int64_t delay_ms = 0;
  int64_t status = 503;
  int64_t bytes_per_s = 16;
  // proxy, for a target other than the built-in sim: where the proxy listens (the address the
  // application's tool URL names) and the tool service it forwards to ("host:port").
  std::optional<int64_t> listen_port;
  std::string upstream;
  std::string inject_command;
  std::string restore_command;
  HttpCall inject_http;
  HttpCall restore_http;
};

struct ToolOutageProbe {
  std::string name;
  SourcePos pos;
  std::optional<Ref> task;
  std::string prompt;
  std::optional<Ref> persona;
  Actuator actuator;
  int64_t before = 2;
  int64_t during = 4;
  int64_t after = 2;
  double answer_within_ms = 10000;
  std::string expect_answer;
  std::string must_not;
  std::string expect_working;  // an answer that shows the tool worked; "": any other answer
  double recover_within_s = 10;
};

struct FaultControls {
  std::vector<AccessDenialProbe> access_denial;
  std::vector<ToolOutageProbe> tool_outage;
};

enum class OnStageFailure { kContinue, kStop };

struct TriageRules {
  std::vector<std::string> tool_failure_patterns = {"tool .* unavailable", "could not reach",
                                                    "service is unavailable"};
  std::vector<std::string> refusal_patterns = {"not (authori[sz]ed|permitted)", "cannot share",
                                               "don't have access", "do not have access"};
};

enum class GpuTelemetry { kAuto, kOff, kDcgm };

struct Telemetry {
  int64_t scrape_interval_ms = 1000;
  GpuTelemetry gpu = GpuTelemetry::kAuto;
  std::string dcgm_url;
};

/// Who owns each condition's release decision, and whether "ready" waits for their sign-off
/// (`stagegate signoff`). Owners are keyed "responsiveness", "quality" and "recoverability".
struct Decisions {
  bool present = false;  // the scenario has a `decisions:` section
  SourcePos pos;
  std::map<std::string, std::string> owners;
  bool require_signoff = false;
};

enum class CostPer { kInstance, kGpu };

/// `cost:` what serving the test costs, for the report's cost per accepted answer. It describes
/// the decision, not the measurement: the fingerprint leaves it out (manifest/fingerprint.h).
struct Cost {
  double price_per_hour = 0;  // of one instance or one GPU, > 0
  CostPer per = CostPer::kInstance;
  int64_t count = 1;  // instances or GPUs that served the test
  std::string currency = "USD";
  std::string source;  // where the price comes from
};

/// When an answer's bytes arrived: the kernel's receive time of the read that brought them, or
/// when the client read them (load::ReceiveTimes).
enum class ReceiveTimes { kKernel, kRead };

/// How the load generator reads answers (`client:`; `profile --busy-poll`, `--receive-times`).
struct ClientSettings {
  bool busy_poll = false;  // workers poll their sockets without sleeping, a core each
  ReceiveTimes receive_times = ReceiveTimes::kKernel;

  bool operator==(const ClientSettings&) const = default;
};

/// Today's workflow, whose answers to the corpus's tasks are scored blind beside the assistant's:
/// recorded answers, from a CSV or JSON Lines file (manifest/recorded_answers.h).
/// What the assistant is compared with: today's answers to the same tasks, either recorded
/// (`answers`) or asked of a service (`endpoint`) over the tasks of the assistant's sampled
/// answers, at rest, through the same engine.
struct Baseline {
  std::string name;
  SourcePos pos;
  PathRef answers;  // recorded answers; empty for an endpoint
  // The service, as an overlay on the run's final stage (its base_url, path, headers, body,
  // persona_credentials and tools); its name is the baseline's.
  std::optional<Stage> endpoint;
  // The variable holding the service's API key. Unset: the target's key goes to a baseline on the
  // target's own server (no base_url of its own, no Authorization header), and no key elsewhere.
  std::string api_key_env;
  // A plain HTTP JSON API in place of the OpenAI-compatible one: the JSON pointer of the answer's
  // text in the service's reply. Each request's body is then the endpoint's `body` alone, with
  // "{prompt}" in its strings replaced by the task's question, sent whole, not streamed.
  std::string answer_at;
};

/// A loaded scenario: every default applied, every path resolved against the scenario's folder.
struct Scenario {
  std::string file;  // as the user named it
  std::string name;
  std::string description;
  ManifestFacts manifest;
  uint64_t seed = 0;
  PathRef corpus;  // a folder
  PathRef rubric;  // a file
  Target target;
  std::vector<Stage> stages;
  InputSpec input;
  std::vector<LoadPhase> phases;  // in PhaseKind order
  Thresholds thresholds;
  QualityThresholds quality;
  RecoveryPolicy recovery;
  FaultControls faults;
  OnStageFailure on_stage_failure = OnStageFailure::kContinue;
  TriageRules triage;
  Telemetry telemetry;
  Decisions decisions;
  std::optional<Cost> cost;
  std::string baseline;             // a run id for `compare` (an earlier run of the same assistant)
  std::vector<Baseline> baselines;  // today's workflow, scored blind beside the assistant
  /// Seconds of each time slice of every step's metrics in run.json, and of the report's
  /// timeline; unset: no slices, and the timeline by the second.
  std::optional<double> slice_s;
  ClientSettings client;

  const LoadPhase* FindPhase(PhaseKind kind) const;
};

/// What a stage sends once the stages before it are applied: overlays accumulate in order.
struct EffectiveStage {
  std::string name;
  std::vector<Capability> capabilities;  // this stage's and every earlier stage's
  std::string base_url;
  std::string path;
  std::map<std::string, std::string> headers;
  nlohmann::json body;
  bool persona_credentials = false;
  bool tools = false;
  std::vector<PhaseKind> phases;
  TaskSelection tasks = TaskSelection::kCovered;
};

std::vector<EffectiveStage> EffectiveStages(const Scenario& scenario);

/// Lays `stage`'s overlay over `effective` (the stage before it): its capabilities are added,
/// what it sets replaces, its headers replace those of the same name in any spelling, and its
/// body is merged in as a JSON merge patch. The name, tasks and phases are left alone.
void ApplyOverlay(const Stage& stage, EffectiveStage& effective);

/// Loads and checks one scenario file. Every problem goes to `diagnostics`; the result is nullopt
/// when there was any. Referenced files (corpus, rubric) are not opened here: see LoadBundle.
std::optional<Scenario> LoadScenario(const std::string& path, Diagnostics& diagnostics);

/// As LoadScenario, but returns what could be read even when there were problems (nullopt only
/// when the file could not be read or parsed), so that LoadBundle can go on to check the files it
/// references and report their problems in the same pass.
std::optional<Scenario> ReadScenario(const std::string& path, Diagnostics& diagnostics);

inline constexpr EnumName<PhaseKind> kPhaseNames[] = {
    {PhaseKind::kWarmup, "warmup"},     {PhaseKind::kSteady, "steady"},
    {PhaseKind::kBurst, "burst"},       {PhaseKind::kSweep, "sweep"},
    {PhaseKind::kOverload, "overload"}, {PhaseKind::kRecovery, "recovery"},
};
inline constexpr EnumName<TargetKind> kTargetKindNames[] = {{TargetKind::kSim, "sim"},
                                                            {TargetKind::kOpenAi, "openai"}};
inline constexpr EnumName<Endpoint> kEndpointNames[] = {{Endpoint::kChat, "chat"},
                                                        {Endpoint::kCompletions, "completions"}};
inline constexpr EnumName<TaskSelection> kTaskSelectionNames[] = {
    {TaskSelection::kCovered, "covered"}, {TaskSelection::kAll, "all"}};
inline constexpr EnumName<Arrival> kArrivalNames[] = {
    {Arrival::kConstant, "constant"}, {Arrival::kPoisson, "poisson"}, {Arrival::kGamma, "gamma"}};
inline constexpr EnumName<OnFull> kOnFullNames[] = {{OnFull::kQueue, "queue"},
                                                    {OnFull::kDrop, "drop"}};
inline constexpr EnumName<InputSource> kInputSourceNames[] = {
    {InputSource::kCorpus, "corpus"},
    {InputSource::kSynthetic, "synthetic"},
    {InputSource::kDataset, "dataset"},
    {InputSource::kTrace, "trace"}};
inline constexpr EnumName<LatencyMetric> kLatencyMetricNames[] = {
    {LatencyMetric::kTtft, "ttft"},
    {LatencyMetric::kTtst, "ttst"},
    {LatencyMetric::kItl, "itl"},
    {LatencyMetric::kTpot, "tpot"},
    {LatencyMetric::kE2e, "e2e"},
    {LatencyMetric::kCorrected, "corrected"},
    {LatencyMetric::kScheduleLag, "schedule_lag"},
};
inline constexpr EnumName<Credentials> kCredentialsNames[] = {{Credentials::kPersona, "persona"},
                                                              {Credentials::kNone, "none"},
                                                              {Credentials::kInvalid, "invalid"}};
inline constexpr EnumName<ActuatorKind> kActuatorKindNames[] = {{ActuatorKind::kProxy, "proxy"},
                                                                {ActuatorKind::kCommand, "command"},
                                                                {ActuatorKind::kHttp, "http"}};
inline constexpr EnumName<ProxyMode> kProxyModeNames[] = {
    {ProxyMode::kRefuse, "refuse"}, {ProxyMode::kReset, "reset"},
    {ProxyMode::kDelay, "delay"},   {ProxyMode::kHang, "hang"},
    {ProxyMode::kStatus, "status"}, {ProxyMode::kTrickle, "trickle"},
};
inline constexpr EnumName<OnStageFailure> kOnStageFailureNames[] = {
    {OnStageFailure::kContinue, "continue"}, {OnStageFailure::kStop, "stop"}};
inline constexpr EnumName<CostPer> kCostPerNames[] = {{CostPer::kInstance, "instance"},
                                                      {CostPer::kGpu, "gpu"}};
inline constexpr EnumName<ReceiveTimes> kReceiveTimesNames[] = {{ReceiveTimes::kKernel, "kernel"},
                                                                {ReceiveTimes::kRead, "read"}};

inline constexpr EnumName<GpuTelemetry> kGpuTelemetryNames[] = {
    {GpuTelemetry::kAuto, "auto"}, {GpuTelemetry::kOff, "off"}, {GpuTelemetry::kDcgm, "dcgm"}};

}  // namespace stagegate::manifest
