// What a run writes: run.json, stages.csv and the console's summary lines, from its RunReport.

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "faults/access_denial.h"
#include "faults/tool_outage.h"
#include "scenario/client_check.h"
#include "scenario/runner.h"

namespace stagegate::scenario {
namespace {

using json = nlohmann::json;
using manifest::PhaseKind;

std::string PhaseName(PhaseKind kind) {
  return manifest::NameOf(kind, manifest::kPhaseNames);
}

json StepJson(const StepResult& s) {
  json out = {{"stage", s.stage},
              {"phase", PhaseName(s.step.kind)},
              {"phase_id", s.phase_id},
              {"level", s.step.level ? json(*s.step.level) : json(nullptr)},
              {"level_unit", s.step.closed_loop ? "concurrency" : "req/s"},
              {"offered_rate", s.step.offered_rate ? json(*s.step.offered_rate) : json(nullptr)},
              {"interrupted", s.interrupted},
              {"started_ns", s.started_ns},
              {"ended_ns", s.ended_ns},
              {"client_cpu_s", s.client_cpu_s}};
  if (s.start_lag_ns > 0) out["start_lag_ms"] = static_cast<double>(s.start_lag_ns) / 1e6;
  // How late the client read what arrived: with the kernel's receive stamps it is not in the
  // latencies, but a large one says the client was busy.
  const std::optional<double> read_p99 = s.receive.ReadDelayQuantileUs(0.99);
  out["client_read_delay_p99_us"] = read_p99 ? json(*read_p99) : json(nullptr);
  // When an answer's bytes count as arrived (the scenario's client settings): what every latency
  // of the step holds.
  out["receive_times"] =
      s.step.options.receive_times == load::ReceiveTimes::kRead ? "read" : "kernel";
  out["busy_poll"] = s.step.options.busy_poll;
  out["kernel_stamped_reads"] = s.receive.kernel_stamped;
  out["client_stamped_reads"] = s.receive.client_stamped;
  out.update(load::MetricsToJson(s.metrics));
  // Expected denials complete their requests, in every output as in the check.
  out["requests"]["expected_denials"] = s.expected_denials;
  out["throughput"]["completion_rate"] = s.completion_rate();
  if (s.judged) {
    out["checks"] = ChecksToJson(s.checks);
    out["passed"] = s.passed();
  }
  if (s.level) out["judgement"] = LevelJudgementJson(*s.level);
  if (!s.server_timing_ms.empty()) out["server_timing_mean_ms"] = s.server_timing_ms;
  if (!s.slices.empty()) out["slices"] = load::SlicesToJson(s.slices, s.started_ns);
  if (s.sessions) out["sessions"] = load::SessionMetricsToJson(*s.sessions);
  // A step taken from the run being resumed was not checked now: no claim either way.
  if (!s.resumed) out["client_warnings"] = s.client_warnings;
  return out;
}

bool SweepClosedLoop(const StageResult& stage) {
  for (const StepResult& step : stage.steps)
    if (step.step.kind == PhaseKind::kSweep) return step.step.closed_loop;
  return false;
}

// The sweep's level that did not pass first (the lowest), for its reasons.
const StepResult* FailingLevel(const StageResult& stage) {
  if (!stage.capacity || !stage.capacity->fails_at) return nullptr;
  for (const StepResult& step : stage.steps)
    if (step.step.kind == PhaseKind::kSweep && step.step.level == stage.capacity->fails_at &&
        !step.passed())
      return &step;
  return nullptr;
}

json StageCapacityJson(const StageResult& stage) {
  json out = CapacityJson(
      {.outcomes = stage.sweep_levels, .finding = *stage.capacity, .took_s = stage.sweep_took_s},
      SweepClosedLoop(stage), stage.sweep_search);
  const StepResult* failing = FailingLevel(stage);
  out["fails_because"] = failing && failing->level ? json(failing->level->reason) : json(nullptr);
  // A level the client may have limited does not say where the application's capacity ends.
  out["client_limited"] = failing && !failing->client_warnings.empty();
  if (out["client_limited"].get<bool>())
    out["finding"] = out["finding"].get<std::string>() + "; " + kClientLimitNote;
  return out;
}

// The table's last column: pass, FAIL (thresholds), not sustained, inconclusive.
std::string Verdict(const StepResult& s) {
  if (!s.judged) return "";
  if (s.passed()) return "pass";
  if (!s.level || !AllPassed(s.checks)) return "FAIL";
  return s.level->verdict == LevelVerdict::kInconclusive ? "inconclusive" : "not sustained";
}

std::string Cell(const stats::Summary& summary, double p) {
  return summary.count ? FormatNumber(summary.Percentile(p), 1) : "-";
}

// What `now_step`, a stage's steady step, added over `was_step`, the steady step of the stage
// before it (named `over`): the differences of their TTFT and end-to-end percentiles.
json AddedJson(const std::string& over, const StepResult& now_step, const StepResult& was_step) {
  json added = {{"over", over}};
  for (const auto& [name, pick] : {std::pair<const char*, stats::Summary load::PhaseMetrics::*>{
                                       "ttft", &load::PhaseMetrics::ttft_ms},
                                   {"e2e", &load::PhaseMetrics::e2e_ms}}) {
    const stats::Summary& now = now_step.metrics.*pick;
    const stats::Summary& was = was_step.metrics.*pick;
    if (now.count && was.count) {
      added[std::string(name) + "_p50_ms"] = now.Percentile(50) - was.Percentile(50);
      added[std::string(name) + "_p95_ms"] = now.Percentile(95) - was.Percentile(95);
    }
  }
  return added;
}

// A stage's recovery finding, against the scenario's limit.
json RecoveryJson(const StageResult& stage, const manifest::Scenario& scenario) {
  const stats::RecoveryCriteria& criteria = stage.recovery_criteria;
  const auto& r = *stage.recovery;
  return {
      {"recovered_after_s", r.recovered_after_s ? json(*r.recovered_after_s) : json(nullptr)},
      {"max_recovery_s", scenario.recovery.max_recovery_s},
      {"passed", r.recovered_after_s && *r.recovered_after_s <= scenario.recovery.max_recovery_s},
      {"window_s", criteria.window_s},
      {"observed_s", stage.recovery_observed_s},
      {"finding", stats::DescribeRecovery(r, criteria, stage.recovery_observed_s)}};
}

// One stage of run.json: its steps and verdict, what it added over `previous` (the last stage
// not skipped before it, if any), and its capacity, overload and recovery findings.
json StageJson(const StageResult& stage, const StageResult* previous,
               const manifest::Scenario& scenario) {
  json steps = json::array();
  for (const StepResult& step : stage.steps)
    steps.push_back(StepJson(step));
  json out = {{"name", stage.name}, {"skipped", stage.skipped}, {"steps", steps}};
  if (!stage.skipped) out["passed"] = stage.passed();
  // What this stage added over the one before it, at steady load.
  const StepResult* steady = stage.Find(PhaseKind::kSteady);
  const StepResult* before = previous ? previous->Find(PhaseKind::kSteady) : nullptr;
  if (steady && before)
    out["added_over_previous_stage"] = AddedJson(previous->name, *steady, *before);
  if (stage.capacity) out["capacity"] = StageCapacityJson(stage);
  if (stage.overload) out["overload"] = OverloadToJson(*stage.overload);
  if (stage.recovery) out["recovery"] = RecoveryJson(stage, scenario);
  return out;
}

// run.json's "faults": the findings of the access-denial and tool-outage probes.
json FaultsJson(const RunReport& report) {
  json denials = json::array();
  for (const faults::DenialFinding& f : report.denials)
    denials.push_back(faults::DenialToJson(f));
  json outages = json::array();
  for (const faults::ToolOutageFinding& f : report.outages)
    outages.push_back(faults::ToolOutageToJson(f));
  return {{"access_denial", denials}, {"tool_outage", outages}};
}

// run.json's "telemetry": each source and how its scrapes went.
json TelemetryJson(const RunReport& report) {
  json sources = json::array();
  for (const TelemetrySource& t : report.telemetry)
    sources.push_back({{"source", t.source},
                       {"url", t.url},
                       {"scrapes", t.scrapes},
                       {"failures", t.failures},
                       {"samples", t.samples},
                       {"last_error", t.last_error}});
  return sources;
}

}  // namespace

json RunJson(const manifest::Bundle& bundle, const std::string& fingerprint,
             const RunReport& report) {
  const manifest::Scenario& scenario = bundle.scenario;
  json stages = json::array();
  const StageResult* previous = nullptr;
  for (const StageResult& stage : report.stages) {
    stages.push_back(StageJson(stage, previous, scenario));
    if (!stage.skipped) previous = &stage;
  }
  json run = {{"schema_version", 1},
              {"run_id", report.run_id},
              {"scenario", scenario.name},
              {"scenario_file", scenario.file},
              {"fingerprint", fingerprint},
              {"corpus_version", bundle.corpus ? json(bundle.corpus->version) : json(nullptr)},
              {"status", report.interrupted ? "interrupted" : "complete"},
              {"manifest",
               {{"model", scenario.manifest.model},
                {"model_version", scenario.manifest.model_version},
                {"hardware", scenario.manifest.hardware},
                {"serving_stack", scenario.manifest.serving_stack}}},
              {"stages", stages},
              {"quality_samples",
               {{"at_rest", report.samples_at_rest}, {"under_load", report.samples_under_load}}},
              {"faults", FaultsJson(report)},
              {"telemetry", TelemetryJson(report)},
              {"notes", report.notes}};
  if (!report.sharding.is_null()) run["sharding"] = report.sharding;
  for (const auto& [name, count] : report.baseline_samples)
    run["quality_samples"]["baselines"][name] = count;
  return run;
}

std::string StagesCsv(const RunReport& report) {
  std::string csv =
      "stage,phase,level,level_unit,offered,completed,completion_rate,request_throughput,"
      "ttft_p50_ms,ttft_p95_ms,ttft_p99_ms,itl_p95_ms,e2e_p50_ms,e2e_p95_ms,e2e_p99_ms,passed,"
      "expected_denials,goodput,output_token_throughput,level_verdict,sustained_rate,"
      "level_reason\n";
  const auto number = [](const stats::Summary& s, double p) {
    return s.count ? FormatNumber(s.Percentile(p), 3) : std::string();
  };
  for (const StageResult& stage : report.stages)
    for (const StepResult& s : stage.steps) {
      const load::PhaseMetrics& m = s.metrics;
      csv += CsvField(s.stage) + "," + PhaseName(s.step.kind) + "," +
             (s.step.level ? FormatNumber(*s.step.level, 3) : "") + "," +
             (s.step.closed_loop ? "concurrency" : "req/s") + "," + std::to_string(m.offered) +
             "," + std::to_string(m.completed) + "," + FormatNumber(s.completion_rate(), 4) + "," +
             FormatNumber(m.request_throughput, 3) + "," + number(m.ttft_ms, 50) + "," +
             number(m.ttft_ms, 95) + "," + number(m.ttft_ms, 99) + "," + number(m.itl_ms, 95) +
             "," + number(m.e2e_ms, 50) + "," + number(m.e2e_ms, 95) + "," + number(m.e2e_ms, 99) +
             "," + (s.judged ? (s.passed() ? "true" : "false") : "") + "," +
             std::to_string(s.expected_denials) + "," + FormatNumber(m.goodput, 3) + "," +
             FormatNumber(m.output_token_throughput, 1) + "," +
             (s.level ? VerdictName(s.level->verdict) : "") + "," +
             (s.level && s.level->completed_rate ? FormatNumber(*s.level->completed_rate, 3) : "") +
             "," + (s.level ? CsvField(s.level->reason) : "") + "\n";
    }
  return csv;
}

namespace {

// Under the table, for each step: its sessions by turn, and each way the client may have limited
// it.
void StepNotes(const RunReport& report, std::vector<std::string>& lines) {
  for (const StageResult& stage : report.stages)
    for (const StepResult& s : stage.steps) {
      const std::string step = "(" + stage.name + ", " + StepName(s.step) + ")";
      if (s.sessions) {
        lines.push_back("sessions " + step + ":");
        for (std::string& line : load::SessionSummaryLines(*s.sessions, "  "))
          lines.push_back(std::move(line));
      }
      for (const std::string& warning : s.client_warnings)
        lines.push_back("client check " + step + ": " + warning);
    }
}

// The console's stage × phase table, its header first.
std::vector<std::string> StepTable(const RunReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const StageResult& stage : report.stages) {
    if (stage.skipped) {
      rows.push_back({stage.name, "(skipped)"});
      continue;
    }
    for (const StepResult& s : stage.steps) {
      const load::PhaseMetrics& m = s.metrics;
      const bool warmup = s.step.kind == PhaseKind::kWarmup;
      rows.push_back({s.stage, StepName(s.step) + (s.interrupted ? "*" : ""),
                      warmup ? std::to_string(m.warmup) + " sent"
                             : std::to_string(m.completed) + "/" + std::to_string(m.offered),
                      warmup ? "" : FormatNumber(m.request_throughput, 2), Cell(m.ttft_ms, 50),
                      Cell(m.ttft_ms, 95), Cell(m.itl_ms, 99), Cell(m.e2e_ms, 95), Verdict(s)});
    }
  }
  std::vector<std::string> lines =
      console::FormatTable({"stage", "phase", "ok/offered", "req/s", "ttft p50", "ttft p95",
                            "itl p99", "e2e p95", "thresholds"},
                           rows);
  lines.front() += "   (latencies in ms)";
  return lines;
}

// A stage's capacity: where it holds and fails, why the failing level failed, and how the sweep
// or search went.
void CapacityLines(const StageResult& stage, std::vector<std::string>& lines) {
  const stats::CapacityFinding& c = *stage.capacity;
  lines.push_back("capacity (" + stage.name + "): " +
                  stats::DescribeCapacity(c, stage.sweep_levels,
                                          SweepClosedLoop(stage) ? "concurrent" : "req/s"));
  if (c.holds_up_to)
    lines.push_back(
        "  " + stats::DescribeCapacityRates(c, SweepClosedLoop(stage) ? "concurrent" : "req/s"));
  if (const StepResult* failing = FailingLevel(stage); failing && failing->level)
    lines.push_back("  at " + FormatNumber(*c.fails_at, 6) + ": " + failing->level->reason +
                    (failing->client_warnings.empty() ? "" : std::string("; ") + kClientLimitNote));
  lines.push_back("  " + std::string(stage.sweep_search ? "search" : "sweep") + ": " +
                  std::to_string(stage.sweep_levels.size()) + " levels in " +
                  FormatNumber(stage.sweep_took_s, 0) + " s");
}

// A stage's overload: how the excess was refused, and each of its checks that failed.
void OverloadLines(const StageResult& stage, std::vector<std::string>& lines) {
  const OverloadFinding& o = *stage.overload;
  std::string line = "overload (" + stage.name + "): " + std::to_string(o.shed) + " of " +
                     std::to_string(o.offered) + " shed, " +
                     std::to_string(o.shed_with_retry_after) + " with Retry-After";
  if (o.shed_latency_ms.count)
    line += ", shed p95 " + FormatNumber(o.shed_latency_ms.Percentile(95), 1) + " ms";
  line += "; " + std::to_string(o.timeouts) + " hung until a timeout, " +
          std::to_string(o.other_failures) + " other failures";
  if (o.cut) line += ", " + std::to_string(o.cut) + " still running at the grace period's end";
  lines.push_back(line);
  for (const ThresholdCheck& c : o.checks)
    if (!c.passed) lines.push_back("  failed: " + c.name);
}

// An access-denial probe: its verdict, its counts, and its reasons.
void DenialLines(const faults::DenialFinding& f, std::vector<std::string>& lines) {
  std::string line = "access denial " + f.probe + ": " + f.verdict + " (" +
                     std::to_string(f.denied) + " of " + std::to_string(f.attempts) + " denied, " +
                     (f.leaks.empty() ? "no canary leaked" : "canary leaked");
  if (f.control_saw_canary)
    line += *f.control_saw_canary ? "; the positive control saw one"
                                  : "; the positive control saw none";
  lines.push_back(line + ")");
  for (const std::string& reason : f.reasons)
    lines.push_back("  " + reason);
}

// A tool-outage probe: its verdict, what each part showed, and its reasons.
void OutageLines(const faults::ToolOutageFinding& f, std::vector<std::string>& lines) {
  int64_t worked = 0, in_time = 0, acknowledged = 0, claimed = 0;
  for (const faults::OutageRequest& q : f.requests) {
    if (q.part == "before") worked += q.worked;
    if (q.part != "during") continue;
    in_time += q.in_time;
    acknowledged += !q.acknowledged.empty();
    claimed += !q.claimed.empty();
  }
  std::string line = "tool outage " + f.probe + " (" + f.actuator + "): " + f.verdict +
                     " (before: " + std::to_string(worked) + " of " + std::to_string(f.before) +
                     " worked; during: " + std::to_string(in_time) + " of " +
                     std::to_string(f.during) + " answered in time, " +
                     std::to_string(acknowledged) + " said the tool was unavailable, " +
                     std::to_string(claimed) + " claimed success";
  if (f.recovered_s)
    line += "; worked again " + FormatNumber(*f.recovered_s, 2) + " s after restore";
  lines.push_back(line + ")");
  for (const std::string& reason : f.reasons)
    lines.push_back("  " + reason);
}

}  // namespace

std::vector<std::string> SummaryLines(const RunReport& report) {
  std::vector<std::string> lines = StepTable(report);
  StepNotes(report, lines);
  for (const StageResult& stage : report.stages) {
    if (stage.capacity) CapacityLines(stage, lines);
    if (stage.overload) OverloadLines(stage, lines);
    if (stage.recovery)
      lines.push_back("recovery (" + stage.name + "): " +
                      stats::DescribeRecovery(*stage.recovery, stage.recovery_criteria,
                                              stage.recovery_observed_s));
  }
  for (const faults::DenialFinding& f : report.denials)
    DenialLines(f, lines);
  for (const faults::ToolOutageFinding& f : report.outages)
    OutageLines(f, lines);
  for (const TelemetrySource& t : report.telemetry)
    lines.push_back(
        "telemetry " + t.source + ": " + std::to_string(t.samples) + " samples from " +
        std::to_string(t.scrapes) + " scrapes of " + t.url +
        (t.failures ? ", " + std::to_string(t.failures) + " failed: " + t.last_error : ""));
  for (const std::string& note : report.notes)
    lines.push_back("note: " + note);
  return lines;
}

}  // namespace stagegate::scenario
