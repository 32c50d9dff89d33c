#include "scenario/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "base/hashing.h"
#include "base/redact.h"
#include "base/strings.h"
#include "console/console.h"
#include "faults/access_denial.h"
#include "faults/actuator.h"
#include "faults/fault_proxy.h"
#include "load/engine.h"
#include "load/progress.h"
#include "manifest/enum_name.h"
#include "scenario/client_check.h"
#include "scenario/runner_plan.h"
#include "scenario/shard_plan.h"
#include "scenario/stage_requests.h"
#include "sim/sim_server.h"
#include "telemetry/nvml.h"
#include "telemetry/scraper.h"

namespace stagegate::scenario {
namespace {

using json = nlohmann::json;
using manifest::PhaseKind;

std::string PhaseName(PhaseKind kind) {
  return manifest::NameOf(kind, manifest::kPhaseNames);
}

// A step's name in the store's phases: the phase, or a fault-control step's label.
std::string StoredName(const PhaseStep& step) {
  return step.label.empty() ? PhaseName(step.kind) : step.label;
}

bool Judged(PhaseKind kind) {
  return kind == PhaseKind::kSteady || kind == PhaseKind::kBurst || kind == PhaseKind::kSweep;
}

// The proxies that tool-outage probes need in front of a target that is not our own sim, as
// listening port to upstream. A probe without a port, or on a port another probe forwards
// elsewhere, adds to `errors`.
std::map<int64_t, std::string> ProxyUpstreams(const manifest::Scenario& scenario, bool own_sim,
                                              std::vector<std::string>& errors) {
  std::map<int64_t, std::string> upstreams;  // listening port -> upstream
  for (const manifest::ToolOutageProbe& probe : scenario.faults.tool_outage) {
    const manifest::Actuator& a = probe.actuator;
    if (a.kind != manifest::ActuatorKind::kProxy || own_sim) continue;
    if (!a.listen_port) {
      errors.push_back(probe.pos.ToString() + ": tool-outage probe '" + probe.name +
                       "': a proxy actuator needs 'listen_port' and 'upstream' when the target "
                       "is not the built-in sim (the application's tool URL must name the proxy)");
    } else if (auto [it, added] = upstreams.emplace(*a.listen_port, a.upstream);
               !added && it->second != a.upstream) {
      errors.push_back(probe.pos.ToString() + ": tool-outage probe '" + probe.name +
                       "': the proxy on port " + std::to_string(*a.listen_port) + " forwards to " +
                       it->second + " for another probe, not " + a.upstream);
    }
  }
  return upstreams;
}

}  // namespace

json SettingsToJson(const RunSettings& s) {
  // Stored with the run, so without the URL's credentials (a resumed run is given them again).
  return {{"target_url", UrlWithoutUserinfo(s.target_url)},
          {"model", s.model},
          {"only_stage", s.only_stage},
          {"seed", s.seed ? json(*s.seed) : json(nullptr)},
          {"workers", s.workers},
          {"shard", s.shard.count > 1 ? json(load::FormatShard(s.shard)) : json(nullptr)},
          {"start_at_unix_ms", s.start_at_unix_ms ? json(*s.start_at_unix_ms) : json(nullptr)},
          {"merged_shards", s.merged_shards}};
}

RunSettings SettingsFromJson(const json& j) {
  RunSettings s;
  s.target_url = j.value("target_url", "");
  s.model = j.value("model", "");
  s.only_stage = j.value("only_stage", "");
  if (j.contains("seed") && j["seed"].is_number_unsigned()) s.seed = j["seed"].get<uint64_t>();
  s.workers = j.value("workers", 0);
  if (j.contains("shard") && j["shard"].is_string())
    if (Result<load::Shard> shard = load::ParseShard(j["shard"].get<std::string>()); shard.ok())
      s.shard = *shard;
  if (j.contains("start_at_unix_ms") && j["start_at_unix_ms"].is_number_integer())
    s.start_at_unix_ms = j["start_at_unix_ms"].get<int64_t>();
  s.merged_shards = j.value("merged_shards", int64_t{0});
  return s;
}

bool StageResult::passed() const {
  return std::all_of(steps.begin(), steps.end(), [](const StepResult& s) {
    return s.step.kind == PhaseKind::kSweep || !s.judged || s.passed();
  });
}

const StepResult* StageResult::Find(PhaseKind kind) const {
  for (const StepResult& s : steps)
    if (s.step.kind == kind) return &s;
  return nullptr;
}

Runner::Runner(const manifest::Bundle& bundle, RunSettings settings, store::Store& store,
               console::Console& console, const std::atomic<bool>& stop, RunSeam seam)
    : bundle_(bundle),
      settings_(std::move(settings)),
      store_(store),
      console_(console),
      stop_(stop),
      clock_(*seam.clock),
      transport_(std::move(seam.transport)),
      ticks_on_clock_(seam.ticks_on_clock) {
  if (bundle_.corpus) {
    refusal_tasks_ = RefusalTasks(*bundle_.corpus);
    for (const manifest::ThresholdScope& scope : bundle_.scenario.thresholds.scopes)
      scope_tasks_.push_back(ScopeTasks(scope, *bundle_.corpus));
  }
}

void Runner::ReadInputFiles(std::vector<std::string>& errors) {
  if (input_files_read_) return;
  const manifest::Scenario& scenario = bundle_.scenario;
  input_files_read_ = true;
  manifest::Diagnostics diagnostics;
  LoadInputFiles(scenario, diagnostics, input_files_);
  for (const manifest::Diagnostic& d : diagnostics.Sorted())
    errors.push_back(d.ToString());
  if (input_files_.tokenizer)
    console_.Line("tokenizer: " + input_files_.tokenizer->Describe() + " (" +
                  scenario.input.tokenizer.written + ")");
  if (!input_files_.trace.empty())
    console_.Line("input: " + std::to_string(input_files_.trace.size()) + " entries of " +
                  scenario.input.trace.written + ", replayed at each open-loop phase's rate");
  if (input_files_.dataset)
    console_.Line("input: " + input_files_.dataset->Describe(InputDatasetOptions(scenario.input)));
}

void Runner::PlanStages(const std::vector<manifest::EffectiveStage>& stages, Plan& plan,
                        std::vector<std::string>& errors) {
  const manifest::Scenario& scenario = bundle_.scenario;
  const uint64_t seed = settings_.seed.value_or(scenario.seed);
  for (size_t i = 0; i < stages.size(); ++i) {
    PlanStage stage{.effective = stages[i]};
    stage.skipped = !settings_.only_stage.empty() && stages[i].name != settings_.only_stage;
    Result<StageRequests> requests =
        StageRequests::Make(bundle_, stages[i], plan.endpoint, &input_files_);
    if (!requests.ok() && !stage.skipped) errors.push_back(requests.status().message());
    if (requests.ok()) stage.requests = std::move(*requests);
    for (const manifest::LoadPhase& phase : scenario.phases) {
      if (!stages[i].phases.empty() && std::find(stages[i].phases.begin(), stages[i].phases.end(),
                                                 phase.kind) == stages[i].phases.end())
        continue;
      const std::vector<double> levels = SweepLevels(phase);
      for (size_t l = 0; l < std::max<size_t>(levels.size(), 1); ++l) {
        Result<PhaseStep> step =
            PlanPhase(phase, levels.empty() ? std::nullopt : std::optional<double>(levels[l]),
                      StepSeed(seed, i, phase.kind), scenario.target.timeouts, settings_.workers,
                      InputTrace());
        if (!step.ok()) {
          errors.push_back("stage '" + stages[i].name + "', phase " + PhaseName(phase.kind) + ": " +
                           step.status().message());
          break;
        }
        if (l == 0) stage.steps.push_back(std::move(*step));  // later levels: planned as run
      }
    }
    plan.stages.push_back(std::move(stage));
  }
}

Status Runner::StartFaultProxies(const std::map<int64_t, std::string>& upstreams, Plan& plan) {
  // The first shard alone runs the fault controls, and so their proxies.
  for (const auto& [port, upstream] :
       settings_.shard.index == 0 ? upstreams : std::map<int64_t, std::string>()) {
    const size_t colon = upstream.rfind(':');
    Result<std::unique_ptr<faults::FaultProxy>> proxy = faults::FaultProxy::Start(
        upstream.substr(0, colon), static_cast<uint16_t>(std::stoi(upstream.substr(colon + 1))),
        static_cast<uint16_t>(port));
    if (!proxy.ok())
      return proxy.status().WithContext("starting the fault proxy on port " + std::to_string(port) +
                                        " (to " + upstream + ")");
    plan.proxies[port] = std::move(*proxy);
  }
  return Status::Ok();
}

Status Runner::StartOwnSim(Plan& plan) {
  manifest::Diagnostics diagnostics;
  std::optional<sim::SimProfile> profile =
      sim::LoadSimProfile(bundle_.scenario.target.sim_profile, diagnostics);
  if (!profile) {
    std::vector<std::string> problems;
    for (const manifest::Diagnostic& d : diagnostics.Sorted())
      problems.push_back(d.ToString());
    return Status::InvalidInput(Join(problems, "\n"));
  }
  Result<std::unique_ptr<sim::SimServer>> server =
      sim::SimServer::Start({.profile = *profile,
                             .model = plan.endpoint.model,
                             .corpus = bundle_.corpus ? &*bundle_.corpus : nullptr});
  if (!server.ok()) return server.status().WithContext("starting the reference application");
  plan.sim = std::move(*server);
  plan.endpoint.base_url = plan.sim->base_url();
  // The requests were built before the sim had a port: build them again against it.
  for (PlanStage& stage : plan.stages) {
    Result<StageRequests> requests =
        StageRequests::Make(bundle_, stage.effective, plan.endpoint, &input_files_);
    if (requests.ok()) stage.requests = std::move(*requests);
  }
  return Status::Ok();
}

Status Runner::Prepare(Plan& plan) {
  const manifest::Scenario& scenario = bundle_.scenario;
  std::vector<std::string> errors;
  std::vector<manifest::EffectiveStage> stages = manifest::EffectiveStages(scenario);
  ReadInputFiles(errors);
  if (!settings_.only_stage.empty() &&
      std::none_of(stages.begin(), stages.end(),
                   [&](const auto& s) { return s.name == settings_.only_stage; }))
    errors.push_back("--only-stage: the scenario has no stage '" + settings_.only_stage + "'");
  plan.endpoint = {
      .base_url = settings_.target_url.empty() ? scenario.target.base_url : settings_.target_url,
      .model = settings_.model.empty() ? scenario.target.model : settings_.model,
      .sim = scenario.target.kind == manifest::TargetKind::kSim};
  if (plan.endpoint.model.empty()) plan.endpoint.model = scenario.manifest.model;
  PlanStages(stages, plan, errors);
  // An endpoint baseline that cannot be asked (its key unset) is said now, not after the load.
  const auto final_stage = std::find_if(plan.stages.rbegin(), plan.stages.rend(),
                                        [](const PlanStage& s) { return !s.skipped; });
  for (const manifest::Baseline& baseline : scenario.baselines)
    if (baseline.endpoint && final_stage != plan.stages.rend() && !settings_.load_only)
      if (Result<StageRequests> asked =
              BaselineRequests(baseline, final_stage->effective, plan.endpoint);
          !asked.ok())
        errors.push_back(asked.status().message());
  const bool own_sim = plan.endpoint.sim && settings_.target_url.empty();
  const std::map<int64_t, std::string> upstreams = ProxyUpstreams(scenario, own_sim, errors);
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));
  if (settings_.replay) return Status::Ok();  // nothing is sent: no proxy, no application
  if (settings_.shard.count > 1 && own_sim)
    return Status::InvalidInput(
        "a sharded run sends to one application from every shard: give --target-url (the "
        "reference application runs on its own as `stagegate sim`), not a sim in each shard");
  SG_RETURN_IF_ERROR(StartFaultProxies(upstreams, plan));
  if (own_sim) return StartOwnSim(plan);
  if (plan.endpoint.base_url.empty())
    return Status::InvalidInput("the target has no base URL: give --target-url");
  return Status::Ok();
}

void Runner::Summarize(StepResult& result, std::span<const load::RequestRecord> records,
                       bool scoped) const {
  const manifest::Thresholds& thresholds = bundle_.scenario.thresholds;
  // Goodput counts the requests that met every latency limit of the thresholds.
  result.metrics = load::ComputeMetrics(records, SlosOf(thresholds));
  result.expected_denials = CountExpectedDenials(records, refusal_tasks_);
  if (result.judged)
    result.checks = CheckThresholds(thresholds, result.metrics, result.expected_denials);
  for (size_t i = 0; result.judged && scoped && i < scope_tasks_.size(); ++i) {
    const manifest::ThresholdScope& scope = thresholds.scopes[i];
    std::vector<load::RequestRecord> mine;
    for (const load::RequestRecord& r : records)
      if (scope_tasks_[i].contains(r.task_id)) mine.push_back(r);
    const load::PhaseMetrics metrics =
        load::ComputeMetrics(mine, SlosOf({.latency = scope.latency}));
    for (ThresholdCheck& check : CheckScope(scope, thresholds.completion_rate, metrics,
                                            CountExpectedDenials(mine, refusal_tasks_)))
      result.checks.push_back(std::move(check));
  }
  result.server_timing_ms = ServerTimingMeans(records);
  if (bundle_.scenario.slice_s)
    result.slices =
        load::ComputeSlices(records, SlosOf(thresholds), result.started_ns, result.ended_ns,
                            static_cast<int64_t>(*bundle_.scenario.slice_s * 1e9));
}

void Runner::UseSessions(const StageRequests& requests, PhaseStep& step) {
  if (requests.has_sessions()) step.options.sessions = requests.Sessions();
}

void Runner::SummarizeSessions(const StageRequests& requests, StepResult& step) const {
  if (!requests.has_sessions()) return;
  step.sessions = load::ComputeSessionMetrics(
      RecordsOf(step), [&requests](int64_t session) { return requests.TurnsOf(session); });
}

double StepResult::completion_rate() const {
  return CompletionRate(metrics, expected_denials);
}

Status Runner::JudgeStep(StepResult& result, std::span<const load::RequestRecord> records,
                         const LevelCriteria& level, const std::string& ended_early_reason) {
  // The server's own queue over the level, as a second witness of a queue that grows.
  std::vector<stats::QueueSample> queue;
  SG_RETURN_IF_ERROR(FlushTelemetry());
  Result<std::vector<std::pair<int64_t, double>>> waiting =
      store_.SeriesTotal(run_id_, "num_requests_waiting", result.started_ns, result.ended_ns);
  if (!waiting.ok()) return waiting.status();
  for (const auto& [t_ns, value] : *waiting)
    queue.push_back({.t_s = static_cast<double>(t_ns - result.started_ns) / 1e9, .waiting = value});
  result.level = JudgeLevel(records, result.metrics, queue, level, !result.step.closed_loop,
                            result.started_ns, ended_early_reason);
  return Status::Ok();
}

const store::PhaseInfo* Runner::Stored(const std::string& stage, const PhaseStep& step) const {
  if (resume_ == nullptr) return nullptr;
  for (const store::PhaseInfo& phase : resume_->phases)
    if (phase.stage == stage && phase.phase == StoredName(step) && phase.level == step.level &&
        phase.at_rest == step.at_rest && phase.status != store::PhaseStatus::kSuperseded)
      return &phase;
  return nullptr;
}

Result<StepResult> Runner::ResumedStep(StepResult result, PhaseStep step,
                                       const store::PhaseInfo& stored, const LevelCriteria* level) {
  std::vector<load::RequestRecord> records;
  for (const load::RequestRecord& r : resume_->records)
    if (r.phase_id == stored.id) records.push_back(r);
  result.phase_id = stored.id;
  result.resumed = true;
  result.started_ns = stored.started_ns.value_or(0);
  result.ended_ns = stored.ended_ns.value_or(0);
  Summarize(result, records, level == nullptr);
  step.options.arrivals = {};
  result.step = std::move(step);
  if (level) SG_RETURN_IF_ERROR(JudgeStep(result, records, *level, ""));
  result.first_record = records_.size();
  result.record_count = records.size();
  records_.insert(records_.end(), records.begin(), records.end());
  return result;
}

void Runner::SummarizeLoad(StepResult& result, const load::LoadResult& load, const PhaseStep& step,
                           bool scoped) const {
  result.started_ns = load.started_ns;
  result.ended_ns = load.ended_ns;
  Summarize(result, load.records, scoped);
  result.interrupted = load.interrupted;
  result.start_lag_ns = load.start_lag_ns;
  result.client_cpu_s = load.client_cpu_s;
  result.idle_poll_s = load.idle_poll_s;
  result.workers = load.workers;
  result.dropped = load.dropped;
  result.receive = load.receive;
  for (double busy : load.worker_busy)
    result.max_worker_busy = std::max(result.max_worker_busy, busy);
  // On a fake clock (a test's scripted transport) CPU against the clock's time says nothing.
  result.client_warnings = CheckClient({.metrics = result.metrics,
                                        .records = load.records,
                                        .open_loop = !step.closed_loop,
                                        .max_worker_busy = transport_ ? 0 : result.max_worker_busy,
                                        .receive_times = step.options.receive_times,
                                        .receive = load.receive});
}

Result<StepResult> Runner::RunStep(const std::string& stage, PhaseStep step,
                                   const load::RequestSource& source, bool measure_again,
                                   const LevelCriteria* level) {
  StepResult result{.stage = stage, .judged = step.label.empty() && Judged(step.kind)};
  // A shard's load step holds its slot of the shared plan, whichever shard it is; so does a step
  // of any run whose time zero is an agreed instant (--start-at), which waits for it.
  std::optional<int64_t> slot_ns;
  if ((settings_.shard.count > 1 || settings_.start_at_unix_ms) && step.label.empty() &&
      !step.at_rest) {
    slot_ns = next_slot_ns_;
    next_slot_ns_ += SlotNs(step);
    TakeShard(step, settings_.shard);
  }
  const store::PhaseInfo* stored = Stored(stage, step);
  if (settings_.replay && (!stored || stored->status != store::PhaseStatus::kComplete))
    return Status::InvalidInput("the shards hold no complete '" + StoredName(step) +
                                "' of stage '" + stage + "'" +
                                (step.level ? " at " + FormatNumber(*step.level) : "") +
                                ": a shard was interrupted or failed");
  if (stored) {
    if (stored->status == store::PhaseStatus::kComplete && (!measure_again || settings_.replay))
      return ResumedStep(std::move(result), std::move(step), *stored, level);
    // Cut short by the interruption, or needed again: measured anew, the old phase kept.
    SG_RETURN_IF_ERROR(store_.SetPhaseStatus(stored->id, store::PhaseStatus::kSuperseded));
  }
  step.options.response_memory_bytes = settings_.response_memory_bytes;
  step.options.busy_poll = bundle_.scenario.client.busy_poll;
  step.options.receive_times =
      bundle_.scenario.client.receive_times == manifest::ReceiveTimes::kRead
          ? load::ReceiveTimes::kRead
          : load::ReceiveTimes::kKernel;
  json config = {
      {"closed_loop", step.closed_loop},
      {"offered_rate", step.offered_rate ? json(*step.offered_rate) : json(nullptr)},
      {"requests", step.options.requests ? json(*step.options.requests) : json(nullptr)},
      {"duration_s", step.options.duration_s ? json(*step.options.duration_s) : json(nullptr)}};
  if (slot_ns) config["planned_start_ns"] = *slot_ns;
  config.update(step.extra_config);
  std::string ended_early_reason;
  const int64_t planned = step.closed_loop ? step.options.requests.value_or(0)
                                           : static_cast<int64_t>(step.options.arrivals.size());
  Result<StepRunner::Ran> ran = steps_->Run(
      {.stage = stage,
       .phase = StoredName(step),
       .at_rest = step.at_rest,
       .level = step.level,
       .label = settings_.step_label ? settings_.step_label(stage, step)
                                     : stage + (step.at_rest ? " at rest " : " ") + StepName(step),
       .config = config,
       .options = step.options,
       .source = source,
       .end_early = level && step.may_end_early && !settings_.sharded()
                        ? LevelController(*level, !step.closed_loop, step.options.arrivals, planned,
                                          ended_early_reason)
                        : StepRunner::EndEarly(),
       .start_ns = slot_ns});
  if (!ran.ok()) return ran.status();
  load::LoadResult& load = ran->load;
  result.phase_id = ran->phase_id;
  SummarizeLoad(result, load, step, level == nullptr);
  step.options.arrivals = {};
  result.step = std::move(step);
  if (ran->ended_early) result.ended_early = ended_early_reason;
  if (level) SG_RETURN_IF_ERROR(JudgeStep(result, load.records, *level, result.ended_early));
  result.first_record = records_.size();
  result.record_count = load.records.size();
  records_.reserve(records_.size() + load.records.size());
  for (load::RequestRecord& record : load.records)
    records_.push_back(std::move(record));
  return result;
}

void Runner::StartTelemetry(const Plan& plan, RunReport& report) {
  const manifest::Scenario& scenario = bundle_.scenario;
  if (scenario.telemetry.scrape_interval_ms <= 0) return;
  ScrapePlan scrape{.metrics_url = scenario.target.metrics_url,
                    .nvml = scenario.telemetry.gpu == manifest::GpuTelemetry::kAuto,
                    .interval_ms = scenario.telemetry.scrape_interval_ms};
  if (scrape.metrics_url.empty() && plan.sim)
    scrape.metrics_url = plan.sim->base_url() + "/metrics";
  if (scenario.telemetry.gpu == manifest::GpuTelemetry::kDcgm)
    scrape.dcgm_url = scenario.telemetry.dcgm_url;
  telemetry_.emplace(scrape, origin_ns_, clock_, report.notes);
}

Status Runner::FlushTelemetry() {
  return telemetry_ ? telemetry_->Flush(store_, run_id_,
                                        settings_.keep_telemetry ? &telemetry_kept_ : nullptr)
                    : Status::Ok();
}

Status Runner::FinishTelemetry(RunReport& report) {
  if (!telemetry_) return Status::Ok();
  Result<std::vector<TelemetrySource>> sources =
      telemetry_->Finish(store_, run_id_, settings_.keep_telemetry ? &telemetry_kept_ : nullptr);
  if (!sources.ok()) return sources.status();
  report.telemetry = std::move(*sources);
  report.telemetry_samples = std::move(telemetry_kept_);
  std::stable_sort(report.telemetry_samples.begin(), report.telemetry_samples.end(),
                   [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
  telemetry_.reset();
  return Status::Ok();
}

Status Runner::RunStagePhases(PlanStage& stage, size_t index, StageResult& result) {
  const manifest::Scenario& scenario = bundle_.scenario;
  const StageRequests& requests = *stage.requests;
  const load::RequestSource source = [&requests](int64_t n) { return requests(n); };
  std::optional<int64_t> overload_end_ns;
  for (PhaseStep& planned : stage.steps) {
    if (stop_.load()) break;
    SG_RETURN_IF_ERROR(FlushTelemetry());
    const PhaseKind kind = planned.kind;
    if (kind == PhaseKind::kSweep) {
      SG_RETURN_IF_ERROR(RunStageSweep(stage, index, source, result));
      continue;
    }
    const int64_t schedule_ns =
        planned.options.arrivals.empty() ? 0 : planned.options.arrivals.back().intended_ns;
    // Recovery is timed from the end of the overload, on the same clock: when the recovery of a
    // resumed run is still to measure, so is its overload.
    bool measure_again = false;
    if (kind == PhaseKind::kOverload) {
      PhaseStep recovery{.kind = PhaseKind::kRecovery};
      if (const manifest::LoadPhase* r = scenario.FindPhase(PhaseKind::kRecovery))
        recovery.level = r->rate ? r->rate : std::optional<double>(r->concurrency);
      const store::PhaseInfo* stored = Stored(stage.effective.name, recovery);
      measure_again =
          resume_ != nullptr && (!stored || stored->status != store::PhaseStatus::kComplete);
    }
    UseSessions(requests, planned);
    Result<StepResult> step =
        RunStep(stage.effective.name, std::move(planned), source, measure_again);
    if (!step.ok()) return step.status();
    SummarizeSessions(requests, *step);
    if (kind == PhaseKind::kOverload) {
      result.overload = FindOverload(RecordsOf(*step), scenario.recovery, refusal_tasks_);
      const int64_t span = step->step.options.duration_s
                               ? static_cast<int64_t>(*step->step.options.duration_s * 1e9)
                               : schedule_ns;
      overload_end_ns = step->started_ns + span;
    }
    if (kind == PhaseKind::kRecovery && overload_end_ns) {
      result.recovery_criteria = RecoveryCriteriaOf(scenario);
      result.recovery =
          stats::FindRecovery(RecoverySamples(RecordsOf(*step), *overload_end_ns, refusal_tasks_),
                              result.recovery_criteria);
      result.recovery_observed_s = static_cast<double>(step->ended_ns - *overload_end_ns) / 1e9;
    }
    result.steps.push_back(std::move(*step));
  }
  return Status::Ok();
}

Status Runner::RunStageSweep(const PlanStage& stage, size_t index,
                             const load::RequestSource& source, StageResult& result) {
  // A fixed list of levels with bisection, or a search for the sustained capacity. Every level
  // is judged on its thresholds, on whether the load was sustained, and on whether it ran long
  // enough to tell.
  const manifest::Scenario& scenario = bundle_.scenario;
  const manifest::LoadPhase& phase = *scenario.FindPhase(PhaseKind::kSweep);
  const uint64_t seed = settings_.seed.value_or(scenario.seed);
  const LevelCriteria criteria = LevelCriteriaOf(phase, scenario.thresholds, refusal_tasks_);
  const RunLevel run_level = [&](double level) -> Result<stats::LevelOutcome> {
    Result<PhaseStep> step = PlanPhase(phase, level, StepSeed(seed, index, PhaseKind::kSweep),
                                       scenario.target.timeouts, settings_.workers, InputTrace());
    if (!step.ok()) return step.status();
    UseSessions(*stage.requests, *step);
    // A level's duration: its phase's, or how long its schedule lasts.
    LevelCriteria level_criteria = criteria;
    if (!phase.duration_s && !step->options.arrivals.empty())
      level_criteria.duration_s =
          static_cast<double>(step->options.arrivals.back().intended_ns) / 1e9;
    Result<StepResult> ran =
        RunStep(stage.effective.name, std::move(*step), source, false, &level_criteria);
    if (!ran.ok()) return ran.status();
    SummarizeSessions(*stage.requests, *ran);
    stats::LevelOutcome outcome = OutcomeOf(level, *ran->level);
    result.steps.push_back(std::move(*ran));
    return outcome;
  };
  SweepPlan plan = SweepPlanOf(phase);
  plan.every_level = settings_.sharded() || !phase.decide_levels;
  Result<SweepResult> sweep = RunSweep(plan, run_level, stop_, clock_);
  if (!sweep.ok()) return sweep.status();
  result.capacity = sweep->finding;
  result.sweep_levels = sweep->outcomes;
  result.sweep_search = phase.search;
  result.sweep_took_s = sweep->took_s;
  // Merged from the store, the sweep took what its levels spanned, not the replay's time.
  if (settings_.replay && !result.steps.empty()) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const StepResult& s : result.steps)
      if (s.step.kind == PhaseKind::kSweep) {
        first = std::min(first, s.started_ns);
        last = std::max(last, s.ended_ns);
      }
    if (last > first) result.sweep_took_s = static_cast<double>(last - first) / 1e9;
  }
  return Status::Ok();
}

json Runner::AgreeOnOrigin() {
  // Time zero is the agreed instant: every shard's steps start at the same offsets from it.
  const ClockAnchors anchors = ReadClockAnchors();
  if (settings_.start_at_unix_ms)
    origin_ns_ = anchors.steady_ns + (*settings_.start_at_unix_ms * 1'000'000 - anchors.wall_ns);
  if (settings_.start_at_unix_ms && origin_ns_ < anchors.steady_ns)
    console_.Line(
        "start: " + FormatNumber(static_cast<double>(anchors.steady_ns - origin_ns_) / 1e9, 3) +
        " s after --start-at; each step starts late by what it could not make up");
  return {{"shard", load::FormatShard(settings_.shard)},
          {"start_at_unix_ms",
           settings_.start_at_unix_ms ? json(*settings_.start_at_unix_ms) : json(nullptr)},
          {"anchors", {{"wall_ns", anchors.wall_ns}, {"steady_ns", anchors.steady_ns}}},
          {"origin_steady_ns", origin_ns_}};
}

Result<RunReport> Runner::Run(const std::string& run_id, const std::function<Status()>& on_planned,
                              const ResumeFrom* resume) {
  resume_ = resume;
  if (resume)
    for (const store::PhaseInfo& phase : resume->phases)
      next_ordinal_ = std::max(next_ordinal_, phase.ordinal + 1);
  Plan plan;
  SG_RETURN_IF_ERROR(Prepare(plan));
  SG_RETURN_IF_ERROR(on_planned());
  run_id_ = run_id;
  origin_ns_ = clock_.NowNs();
  RunReport report{.run_id = run_id};
  const bool first_shard = settings_.shard.index == 0;
  if (!settings_.replay && (settings_.shard.count > 1 || settings_.start_at_unix_ms))
    report.sharding = AgreeOnOrigin();
  steps_.emplace(StepRunner::Context{.run_id = run_id_,
                                     .store = store_,
                                     .console = console_,
                                     .clock = clock_,
                                     .origin_ns = origin_ns_,
                                     .stop = stop_,
                                     .next_ordinal = next_ordinal_,
                                     .transport = transport_,
                                     .ticks_on_clock = ticks_on_clock_});
  const manifest::Scenario& scenario = bundle_.scenario;
  // Telemetry on the same clock as the requests, for the whole run; samples go to the store
  // after every step, as records do, and at the end.
  if (first_shard && !settings_.replay) StartTelemetry(plan, report);
  size_t final_stage = 0;
  for (size_t i = 0; i < plan.stages.size(); ++i)
    if (!plan.stages[i].skipped) final_stage = i;

  bool stopped_by_policy = false;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    PlanStage& stage = plan.stages[i];
    StageResult stage_result{.name = stage.effective.name};
    if (stage.skipped || stopped_by_policy || stop_.load()) {
      stage_result.skipped = true;
      report.stages.push_back(std::move(stage_result));
      continue;
    }
    SG_RETURN_IF_ERROR(RunStagePhases(stage, i, stage_result));
    // Quality samples of the final stage: at rest, one request at a time, and under load.
    const StageRequests& requests = *stage.requests;
    if (i == final_stage && requests.task_count() == 0 && !settings_.load_only)
      report.notes.push_back(
          std::string("no quality samples: the input is ") +
          (bundle_.scenario.input.source == manifest::InputSource::kDataset ? "a dataset"
           : bundle_.scenario.input.source == manifest::InputSource::kTrace ? "a trace"
                                                                            : "synthetic") +
          ", with no task to review");
    if (i == final_stage && !stop_.load() && requests.task_count() > 0 && first_shard &&
        !settings_.load_only)
      SG_RETURN_IF_ERROR(
          SampleAnswers(requests, stage_result, stage.effective, plan.endpoint, report));
    if (!stage_result.passed() && scenario.on_stage_failure == manifest::OnStageFailure::kStop) {
      stopped_by_policy = true;
      report.notes.push_back("stage '" + stage_result.name +
                             "' failed its thresholds; the failure policy stops the run there");
    }
    report.stages.push_back(std::move(stage_result));
  }
  // The fault controls send one request at a time, not load: the first shard alone runs them.
  const bool controls = first_shard && !settings_.load_only;
  if (!first_shard && !settings_.load_only)
    report.notes.push_back("shard " + load::FormatShard(settings_.shard) +
                           ": quality samples and fault controls are the first shard's");
  if (!stop_.load() && plan.stages[final_stage].requests && controls)
    SG_RETURN_IF_ERROR(RunDenialProbes(*plan.stages[final_stage].requests, plan.endpoint, report));
  if (!stop_.load() && plan.stages[final_stage].requests && controls)
    SG_RETURN_IF_ERROR(RunToolOutageProbes(*plan.stages[final_stage].requests, plan, report));
  SG_RETURN_IF_ERROR(FinishTelemetry(report));
  report.interrupted = stop_.load();
  return report;
}

}  // namespace stagegate::scenario
