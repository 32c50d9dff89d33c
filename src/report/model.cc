#include "report/model.h"

#include <algorithm>

#include "base/strings.h"
#include "report/comparability.h"
#include "report/decisions.h"
#include "report/task_rules_report.h"
#include "stats/summary.h"

namespace stagegate::report {
namespace {

// "measured 420, limit 1500", or, when nothing was measured, why (`absent`: "no successful
// request", "nothing was shed"). Whether such a check passed was decided when the run judged it:
// it fails unless its rule holds vacuously (nothing shed is nothing slow to shed).
std::string Measured(const store::ThresholdResult& check, const std::string& absent) {
  const std::string limit =
      check.limit ? ", limit " + FormatNumber(*check.limit, 3) : std::string();
  if (check.measured) return "measured " + FormatNumber(*check.measured, 3) + limit;
  return "not measured: " + absent + limit;
}

Check ThresholdCheckOf(Condition condition, std::string name, const store::ThresholdResult& check,
                       const std::string& absent) {
  // A threshold scope with too few requests in the phase cannot be judged yet.
  if (check.pending)
    return {.condition = condition,
            .name = std::move(name),
            .status = CheckStatus::kPending,
            .detail = "too few requests of the scope to judge: " + std::to_string(check.requests) +
                      " measured" +
                      (check.measured ? " (" + Measured(check, absent) + ")" : std::string())};
  return {.condition = condition,
          .name = std::move(name),
          .status = check.passed ? CheckStatus::kPass : CheckStatus::kFail,
          .detail = Measured(check, absent)};
}

void AddResponsiveness(const store::RunFindings& findings, ReportModel& m) {
  const store::StageFindings* stage = findings.FinalStage();
  bool any = false;
  if (stage) {
    for (const store::StepFindings& step : stage->steps) {
      if (step.phase != "steady" && step.phase != "burst") continue;
      for (const store::ThresholdResult& check : step.checks) {
        any = true;
        m.checks.push_back(ThresholdCheckOf(Condition::kResponsiveness,
                                            stage->name + " " + step.phase + ": " + check.check,
                                            check, "no successful request"));
      }
    }
  }
  // Where responsiveness ends: a sweep too short to tell keeps condition 1 from passing.
  if (stage && stage->capacity)
    m.checks.push_back(
        {.condition = Condition::kResponsiveness,
         .name = stage->name + " capacity: where responsiveness ends is known",
         .status = stage->capacity->inconclusive ? CheckStatus::kPending : CheckStatus::kPass,
         .detail = stage->capacity->finding});
  if (!any)
    m.checks.push_back({.condition = Condition::kResponsiveness,
                        .name = "latency thresholds at steady and burst load",
                        .status = CheckStatus::kPending,
                        .detail = "no steady or burst phase of the final stage was measured"});
}

void AddQuality(const quality::QualitySummary& q, ReportModel& m) {
  if (q.verdict == quality::QualityVerdict::kPass) {
    const quality::GroupScores* all = q.groups.empty() ? nullptr : &q.groups.front();
    m.checks.push_back(
        {.condition = Condition::kQuality,
         .name = "independent scores meet the rubric's thresholds",
         .status = CheckStatus::kPass,
         .detail =
             std::to_string(q.scored) + " answers scored" +
             (q.scored_by_judge ? " (" + std::to_string(q.scored - q.scored_by_judge) +
                                      " by reviewers, " + std::to_string(q.scored_by_judge) +
                                      " by the calibrated judge " + q.judge_model + ")"
                                : "") +
             (all && all->weighted_mean ? ", mean " + FormatNumber(*all->weighted_mean, 2) : "") +
             (all && all->pass_rate() ? ", pass rate " + FormatNumber(*all->pass_rate(), 2) : "")});
    return;
  }
  // What is still missing stays pending even beside a failure.
  for (size_t i = 0; i < q.reasons.size(); ++i)
    m.checks.push_back({.condition = Condition::kQuality,
                        .name = q.reasons[i],
                        .status = static_cast<int64_t>(i) < q.pending_reasons
                                      ? CheckStatus::kPending
                                      : CheckStatus::kFail,
                        .detail = ""});
}

void AddProbes(const store::RunFindings& findings, ReportModel& m) {
  for (const store::ProbeFindings& probe : findings.probes) {
    std::vector<std::string> reasons = probe.reasons;
    if (probe.verdict == store::ProbeVerdict::kInconclusive)
      reasons.insert(reasons.begin(), "inconclusive: the probe could not show anything");
    const char* label =
        probe.kind == store::ProbeKind::kAccessDenial ? "access denial" : "tool outage";
    m.checks.push_back({.condition = Condition::kRecoverability,
                        .name = std::string(label) + " probe " + probe.probe,
                        .status = probe.verdict == store::ProbeVerdict::kPass ? CheckStatus::kPass
                                  : probe.verdict == store::ProbeVerdict::kInterrupted
                                      ? CheckStatus::kPending
                                      : CheckStatus::kFail,
                        .detail = Join(reasons, "; ")});
  }
}

void AddRecoverability(const store::RunFindings& findings, ReportModel& m) {
  const store::StageFindings* stage = findings.FinalStage();
  if (stage && stage->overload) {
    for (const store::ThresholdResult& check : stage->overload->checks)
      m.checks.push_back(ThresholdCheckOf(Condition::kRecoverability, "overload: " + check.check,
                                          check, "nothing was shed"));
  } else {
    m.checks.push_back({.condition = Condition::kRecoverability,
                        .name = "overload is shed clearly",
                        .status = CheckStatus::kPending,
                        .detail = "no overload phase was measured"});
  }
  if (stage && stage->recovery) {
    const store::RecoveryFindings& r = *stage->recovery;
    m.checks.push_back({.condition = Condition::kRecoverability,
                        .name = r.max_recovery_s ? "recovery after overload within " +
                                                       FormatNumber(*r.max_recovery_s, 1) + " s"
                                                 : "recovery after overload",
                        .status = r.passed ? CheckStatus::kPass : CheckStatus::kFail,
                        .detail = r.finding});
  } else {
    m.checks.push_back({.condition = Condition::kRecoverability,
                        .name = "recovery after overload",
                        .status = CheckStatus::kPending,
                        .detail = "no recovery phase was measured"});
  }
  AddProbes(findings, m);
}

// The phases a chart may draw: every phase not measured again by a resumed run.
std::map<int64_t, const store::PhaseInfo*> LivePhases(const std::vector<store::PhaseInfo>& phases) {
  std::map<int64_t, const store::PhaseInfo*> phase_of;
  for (const store::PhaseInfo& p : phases)
    if (p.status != store::PhaseStatus::kSuperseded) phase_of[p.id] = &p;
  return phase_of;
}

// Latency distributions of every stage's steady phase (load only, not the answers sampled one at
// a time at rest), or of every level of a profile run, keyed "<kind> <level>".
void AddSteadyDistributions(const std::vector<load::RequestRecord>& records,
                            const std::map<int64_t, const store::PhaseInfo*>& phase_of,
                            bool profile, ChartData& charts) {
  // Each phase's key, once: a profile's level kind is read from the phase's stored config.
  std::map<int64_t, std::string> key_of;
  for (const auto& [id, p] : phase_of)
    if (profile)
      key_of[id] = p->ProfileLevelKind() + (p->level ? " " + FormatNumber(*p->level) : "");
    else if (p->phase == "steady" && !p->at_rest)
      key_of[id] = p->stage;
  for (const load::RequestRecord& r : records) {
    auto found = key_of.find(r.phase_id);
    if (found == key_of.end() || r.warmup || r.outcome != load::Outcome::kOk || !r.sent_ns)
      continue;
    const std::string& stage = found->second;
    if (r.first_token_ns)
      charts.steady_ttft_ms[stage].push_back(static_cast<double>(*r.first_token_ns - *r.sent_ns) /
                                             1e6);
    if (r.end_ns)
      charts.steady_e2e_ms[stage].push_back(static_cast<double>(*r.end_ns - *r.sent_ns) / 1e6);
  }
}

// The final stage's sweep, level by level.
void AddSweep(const store::StageFindings& stage, ChartData& charts) {
  ChartLine ttft{"ttft p95"}, e2e{"e2e p95"}, goodput{"goodput"};
  for (const store::StepFindings& step : stage.steps) {
    if (step.phase != "sweep" || !step.level) continue;
    charts.sweep_unit = step.level_unit.empty() ? "req/s" : step.level_unit;
    if (auto p95 = step.Stat("ttft_ms", "p95")) ttft.points.push_back({*step.level, *p95});
    if (auto p95 = step.Stat("e2e_ms", "p95")) e2e.points.push_back({*step.level, *p95});
    // A level's goodput over the window of its sustained rate, as the capacity line quotes it;
    // a run stored before that window was kept, over the step's.
    if (step.judgement && step.judgement->rates)
      goodput.points.push_back({*step.level, step.judgement->rates->Rate(static_cast<double>(
                                                 step.judgement->rates->met_slos))});
    else if (auto g = step.Throughput("goodput"))
      goodput.points.push_back({*step.level, *g});
  }
  for (ChartLine* line : {&ttft, &e2e, &goodput}) {
    std::sort(line->points.begin(), line->points.end());
    if (!line->points.empty()) charts.sweep.push_back(*line);
  }
  if (stage.capacity) {
    charts.holds_up_to = stage.capacity->holds_up_to;
    charts.fails_at = stage.capacity->fails_at;
  }
}

bool InTimeline(const store::PhaseInfo& p, const std::string& final_stage) {
  return p.status != store::PhaseStatus::kSuperseded && p.stage == final_stage && !p.at_rest &&
         p.started_ns && p.ended_ns &&
         (p.phase == "burst" || p.phase == "overload" || p.phase == "recovery");
}

// The final stage's burst, overload and recovery, slice by slice (of `slice_ns`: the scenario's
// slice_s, else a second) from the first of them: requests sent a second and the TTFT p95 of each
// slice. Returns the span drawn, if any.
std::optional<std::pair<int64_t, int64_t>> AddTimeline(
    const std::vector<store::PhaseInfo>& phases, const std::vector<load::RequestRecord>& records,
    const std::map<int64_t, const store::PhaseInfo*>& phase_of, const std::string& final_stage,
    int64_t slice_ns, ChartData& charts) {
  std::optional<int64_t> from_ns, to_ns;
  for (const store::PhaseInfo& p : phases) {
    if (!InTimeline(p, final_stage)) continue;
    if (!from_ns || *p.started_ns < *from_ns) from_ns = *p.started_ns;
    if (!to_ns || *p.ended_ns > *to_ns) to_ns = *p.ended_ns;
  }
  if (!from_ns || !to_ns || *to_ns <= *from_ns) return std::nullopt;
  for (const store::PhaseInfo& p : phases)
    if (InTimeline(p, final_stage))
      charts.phases.push_back({p.phase,
                               {static_cast<double>(*p.started_ns - *from_ns) / 1e9,
                                static_cast<double>(*p.ended_ns - *from_ns) / 1e9}});
  slice_ns = std::max(slice_ns, (*to_ns - *from_ns) / 2000 + 1);  // at most 2,000 points a line
  const size_t slices = static_cast<size_t>((*to_ns - *from_ns) / slice_ns) + 1;
  std::vector<int64_t> sent(slices, 0);
  std::vector<std::vector<double>> ttft(slices);
  for (const load::RequestRecord& r : records) {
    auto found = phase_of.find(r.phase_id);
    if (found == phase_of.end() || found->second->stage != final_stage || found->second->at_rest ||
        !r.sent_ns || *r.sent_ns < *from_ns || *r.sent_ns > *to_ns)
      continue;
    const size_t slice = static_cast<size_t>((*r.sent_ns - *from_ns) / slice_ns);
    ++sent[slice];
    if (r.first_token_ns && r.outcome == load::Outcome::kOk)
      ttft[slice].push_back(static_cast<double>(*r.first_token_ns - *r.sent_ns) / 1e6);
  }
  const double slice_s = static_cast<double>(slice_ns) / 1e9;
  ChartLine sent_line{"sent/s"}, ttft_line{"ttft p95"};
  for (size_t s = 0; s < slices; ++s) {
    const double x = static_cast<double>(s) * slice_s;
    sent_line.points.push_back({x, static_cast<double>(sent[s]) / slice_s});
    if (!ttft[s].empty()) {
      std::sort(ttft[s].begin(), ttft[s].end());
      ttft_line.points.push_back({x, stats::PercentileOfSorted(ttft[s], 95)});
    }
  }
  charts.slice_s = slice_s;
  charts.timeline = {sent_line, ttft_line};
  return std::pair{*from_ns, *to_ns};
}

// The server's and the GPUs' own view of the timeline's seconds, when they were scraped: running
// and waiting; KV cache and GPU utilisation in percent; GPU power and memory.
Status AddServerLines(store::Store& store, const std::string& run_id, int64_t from_ns,
                      int64_t to_ns, ChartData& charts) {
  using telemetry::Series;
  Result<std::map<Series, SeriesValues>> series = ReadServerSeries(store, run_id, from_ns, to_ns);
  if (!series.ok()) return series.status();
  const auto add = [&](std::vector<ChartLine>& lines, Series s, const std::string& name,
                       double scale) {
    auto found = series->find(s);
    if (found == series->end()) return;
    ChartLine line{name};
    for (const auto& [t_ns, value] : found->second)
      line.points.push_back({static_cast<double>(t_ns - from_ns) / 1e9, value * scale});
    lines.push_back(std::move(line));
  };
  add(charts.server, Series::kRunning, "running", 1);
  add(charts.server, Series::kWaiting, "waiting", 1);
  add(charts.server_share, Series::kKvCache, "kv cache %", 100);
  add(charts.server_share, Series::kGpuUtilization, "gpu utilization %", 100);
  add(charts.gpu_power, Series::kGpuPower, "power W", 1);
  add(charts.gpu_memory, Series::kGpuMemory, "memory GiB", 1.0 / (1024.0 * 1024.0 * 1024.0));
  return Status::Ok();
}

// The verdict: not ready when a check failed, else pending when one cannot decide yet, else
// ready. Its reasons are the failed checks, then the pending ones: beside a failure, each is
// marked "pending: ", since what is missing still has to come before the run can be ready.
void Decide(ReportModel& m) {
  const auto reasons = [&m](CheckStatus status, const std::string& mark) {
    for (const Check& c : m.checks)
      if (c.status == status)
        m.verdict_reasons.push_back(mark + std::string(Name(c.condition)) + ": " + c.name +
                                    (c.detail.empty() ? "" : " (" + c.detail + ")"));
  };
  reasons(CheckStatus::kFail, "");
  const bool failed = !m.verdict_reasons.empty();
  reasons(CheckStatus::kPending, failed ? "pending: " : "");
  m.verdict = failed                      ? Verdict::kNotReady
              : m.verdict_reasons.empty() ? Verdict::kReady
                                          : Verdict::kPending;
}

Status AddCharts(store::Store& store, const store::RunInfo& run, const store::RunFindings& findings,
                 ReportModel& m) {
  Result<std::vector<store::PhaseInfo>> phases = store.ListPhases(run.id);
  if (!phases.ok()) return phases.status();
  Result<std::vector<load::RequestRecord>> records = store.ListRequests(run.id);
  if (!records.ok()) return records.status();
  const std::map<int64_t, const store::PhaseInfo*> phase_of = LivePhases(*phases);
  AddSteadyDistributions(*records, phase_of, run.is_profile(), m.charts);
  if (const store::StageFindings* final_stage = findings.FinalStage()) {
    AddSweep(*final_stage, m.charts);
    if (final_stage->capacity) {
      Result<Saturation> saturation =
          FindSaturation(store, run, *phases, final_stage->name, final_stage->capacity->unit);
      if (!saturation.ok()) return saturation.status();
      m.saturation = std::move(*saturation);
    }
    Result<EnergyFigures> energy = ComputeEnergy(store, run, *phases, findings, m.cost.pass_rate);
    if (!energy.ok()) return energy.status();
    m.energy = std::move(*energy);
    m.energy->provisional = m.cost.provisional;
    const store::StoredScenario scenario = store::ParseScenario(run.scenario_json);
    const int64_t slice_ns =
        scenario.slice_s ? static_cast<int64_t>(*scenario.slice_s * 1e9) : 1'000'000'000;
    if (auto span = AddTimeline(*phases, *records, phase_of, final_stage->name,
                                std::max<int64_t>(slice_ns, 1'000'000), m.charts))
      SG_RETURN_IF_ERROR(AddServerLines(store, run.id, span->first, span->second, m.charts));
  }
  Result<std::map<std::string, std::map<int64_t, int64_t>>> levels = store.ScoreLevelCounts(run.id);
  if (!levels.ok()) return levels.status();
  m.charts.score_levels = std::move(*levels);
  return Status::Ok();
}

}  // namespace

std::string_view Name(Condition condition) {
  switch (condition) {
    case Condition::kResponsiveness:
      return "responsiveness";
    case Condition::kQuality:
      return "quality";
    case Condition::kRecoverability:
      break;
  }
  return "recoverability";
}

std::string_view Name(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kPending:
      break;
  }
  return "pending";
}

std::string_view Name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kReady:
      return "ready";
    case Verdict::kNotReady:
      return "not ready";
    case Verdict::kPending:
      break;
  }
  return "pending";
}

std::string_view VerdictClass(Verdict verdict) {
  return verdict == Verdict::kReady     ? "ready"
         : verdict == Verdict::kPending ? "pending"
                                        : "not-ready";
}

Result<ReportModel> BuildReport(store::Store& store, const store::RunInfo& run,
                                const manifest::Bundle* bundle, bool charts) {
  const store::StoredScenario scenario = store::ParseScenario(run.scenario_json);
  ReportModel m{.run = run,
                .findings = store::ParseFindings(run.findings_json),
                .latency_limits = scenario.latency};
  Result<quality::QualitySummary> quality = quality::SummarizeQuality(store, run, bundle);
  if (!quality.ok()) return quality.status();
  m.quality = std::move(*quality);

  if (!m.findings.present)
    m.notes.push_back(
        "the run has no stored findings (it did not end, or it ran before findings "
        "were kept in the store): conditions 1 and 3 are pending");
  for (const std::string& problem : m.findings.problems)
    m.notes.push_back("stored findings: " + problem + " (read as not measured)");
  if (run.status == store::RunStatus::kInterrupted)
    m.notes.push_back("the run was interrupted: what it did not measure is pending");
  if (bundle && bundle->corpus) {
    const auto& tasks = bundle->corpus->tasks;
    const auto examples = std::count_if(tasks.begin(), tasks.end(),
                                        [](const manifest::Task& t) { return t.example; });
    if (examples > 0)
      m.notes.push_back("the corpus is not yet the team's own: " + std::to_string(examples) +
                        " of its " + std::to_string(tasks.size()) +
                        " tasks are stagegate init's examples (replace them with approved "
                        "questions; stagegate corpus import)");
  }
  AddResponsiveness(m.findings, m);
  // The tasks that fail a per-task rule come first among condition 2's checks.
  SG_RETURN_IF_ERROR(AddTaskRules(store, bundle, m));
  AddQuality(m.quality, m);
  AddRecoverability(m.findings, m);
  SG_RETURN_IF_ERROR(AddDecisions(store, m));
  // After the checks, and outside them: the cost is information, not part of the verdict.
  m.cost = ComputeCost(scenario.cost, m.findings, m.quality);
  for (const std::string& problem : scenario.problems)
    if (problem.starts_with("cost"))
      m.notes.push_back("stored scenario: " + problem + " (the cost is shown in instance-seconds)");
  if (charts) SG_RETURN_IF_ERROR(AddCharts(store, run, m.findings, m));
  Decide(m);
  return m;
}

}  // namespace stagegate::report
