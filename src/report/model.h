#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "manifest/bundle.h"
#include "quality/summary.h"
#include "quality/task_rules.h"
#include "report/cost.h"
#include "report/energy.h"
#include "report/server_series.h"
#include "store/findings.h"
#include "store/store.h"

namespace stagegate::report {

/// The three conditions of the release decision, in the report's order.
enum class Condition { kResponsiveness, kQuality, kRecoverability };
inline constexpr Condition kConditions[] = {Condition::kResponsiveness, Condition::kQuality,
                                            Condition::kRecoverability};
enum class CheckStatus { kPass, kFail, kPending };
/// ready: every check passed; not ready: one failed; pending: none failed, one cannot decide yet.
enum class Verdict { kReady, kNotReady, kPending };
std::string_view Name(Condition condition);  // "responsiveness", "quality", "recoverability"
std::string_view Name(CheckStatus status);   // "pass", "fail", "pending"
std::string_view Name(Verdict verdict);      // "ready", "not ready", "pending"
/// The CSS class of a verdict in the HTML pages: "ready", "pending", "not-ready".
std::string_view VerdictClass(Verdict verdict);

/// One check of the release decision, as the verdict and JUnit see it.
struct Check {
  Condition condition = Condition::kResponsiveness;
  std::string name;  // "tools steady: ttft p95 <= 1500 ms"
  CheckStatus status = CheckStatus::kPending;
  std::string detail;  // the measured value against the limit, or why not pass
};

/// A line of a chart: its name and points.
struct ChartLine {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

/// What the charts draw, taken from the store.
struct ChartData {
  std::map<std::string, std::vector<double>> steady_ttft_ms;  // stage -> TTFT of its steady phase
  std::map<std::string, std::vector<double>> steady_e2e_ms;
  // The final stage's sweep, level by level: offered rate (or concurrency), p95s and goodput.
  std::string sweep_unit;        // "req/s" or "concurrency"
  std::vector<ChartLine> sweep;  // "ttft p95", "e2e p95", "goodput"
  std::optional<double> holds_up_to, fails_at;
  // The final stage's burst, overload and recovery, slice by slice from the first of them (each
  // slice_s long: the scenario's slice_s, else a second).
  std::vector<ChartLine> timeline;  // "sent/s", "ttft p95", ...
  double slice_s = 1;
  std::vector<std::pair<std::string, std::pair<double, double>>> phases;  // name -> [from, to] s
  std::vector<ChartLine> server;        // telemetry over the same seconds: running, waiting
  std::vector<ChartLine> server_share;  // and in percent: KV cache, GPU utilisation
  std::vector<ChartLine> gpu_power;     // watts, all GPUs
  std::vector<ChartLine> gpu_memory;    // GiB in use, all GPUs
  // Reviewers' scores: criterion -> level -> count.
  std::map<std::string, std::map<int64_t, int64_t>> score_levels;
};

/// One condition's release decision: who owns it and what was last decided.
struct Decision {
  Condition condition = Condition::kResponsiveness;
  std::string owner;                     // "" when the scenario names none
  std::string evidence;                  // the condition's evidence fingerprint now
  std::optional<store::Signoff> latest;  // the last decision recorded, if any
  bool stale = false;                    // `latest` was made on other evidence
};

/// Everything a report shows, built from the store alone.
struct ReportModel {
  store::RunInfo run;
  store::RunFindings findings;  // the run's run.json, as stored with it
  std::vector<store::StoredLatencyThreshold> latency_limits;  // of the run's scenario
  Verdict verdict = Verdict::kPending;
  std::vector<std::string> verdict_reasons;  // failed checks, then what is missing
  std::vector<Check> checks;
  // Each condition's owner and decision (report/decisions.h), in kConditions order; whether
  // "ready" waits for the owners' acceptance.
  std::vector<Decision> decisions;
  bool require_signoff = false;
  quality::QualitySummary quality;
  // The per-task gate rules (report/task_rules_report.h): required tasks, regressions from the
  // approved run, missing tasks.
  quality::TaskRules task_rules;
  CostFigures cost;  // information beside the verdict, never a check
  ChartData charts;
  // What saturated first as the final stage's sweep rose (report/server_series.h); set with the
  // chart data.
  std::optional<Saturation> saturation;
  // Joules per completed request, output token and accepted answer (report/energy.h); set with
  // the chart data. Information, never a check.
  std::optional<EnergyFigures> energy;
  std::vector<std::string> notes;
  // Set by the caller: the support triage of every request, class -> count, in the order of
  // report/triage.h (shed, error, denied, tool-failure, wrong, slow, ok).
  std::vector<std::pair<std::string, int64_t>> triage;
  // Set by the caller when the report compares with a baseline (report/compare_runs.h).
  std::optional<nlohmann::json> baseline;   // ComparisonJson
  std::vector<std::string> baseline_lines;  // ComparisonLines
  bool incomparable_baseline = false;       // compared although not comparable: said at the top
};

/// Builds the report of a run from the store: its findings, requests, scores and telemetry.
/// `bundle` (the run's scenario read again; may be null) lets the automated checks run. Without
/// `charts` the chart data is left out (a verdict alone reads no request).
Result<ReportModel> BuildReport(store::Store& store, const store::RunInfo& run,
                                const manifest::Bundle* bundle, bool charts = true);

/// The report as JSON, schema version 1 (docs/report.md).
nlohmann::json ReportJson(const ReportModel& model);
/// The report as Markdown.
std::string ReportMarkdown(const ReportModel& model);
/// The report as one self-contained HTML file with inline SVG charts.
std::string ReportHtml(const ReportModel& model);
/// JUnit XML: one test suite a condition, one test case a check.
std::string ReportJunit(const ReportModel& model);
/// Per-step statistics of every stage, as CSV.
std::string ReportCsv(const ReportModel& model);
/// reports/index.html: every run (built without chart data) by scenario, oldest first, with its
/// verdict and key figures, a trend chart of them per scenario, and a link to each run's
/// report.html where `has_report(run id)` says there is one (a path relative to reports/).
std::string DashboardHtml(const std::vector<ReportModel>& runs,
                          const std::function<bool(const std::string&)>& has_report);

}  // namespace stagegate::report
