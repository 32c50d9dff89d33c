#include "report/model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/strings.h"
#include "store/sqlite.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

std::string Measured(const json& check) {
  const double measured = check.value("measured", 0.0), limit = check.value("limit", 0.0);
  return "measured " + FormatNumber(measured, 3) + ", limit " + FormatNumber(limit, 3);
}

// The p-th percentile (0..100) of sorted values, by linear interpolation.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = p / 100 * static_cast<double>(sorted.size() - 1);
  const size_t low = static_cast<size_t>(std::floor(rank));
  const size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - static_cast<double>(low));
}

void AddResponsiveness(const json& findings, ReportModel& m) {
  const json* stage = FinalStage(findings);
  bool any = false;
  if (stage) {
    for (const json& step : (*stage)["steps"]) {
      const std::string phase = step.value("phase", "");
      if ((phase != "steady" && phase != "burst") || !step.contains("checks")) continue;
      for (const json& check : step["checks"]) {
        any = true;
        m.checks.push_back({.condition = "responsiveness",
                            .name = (*stage)["name"].get<std::string>() + " " + phase + ": " +
                                    check.value("check", ""),
                            .status = check.value("passed", false) ? "pass" : "fail",
                            .detail = Measured(check)});
      }
    }
  }
  // Where responsiveness ends: a sweep too short to tell keeps condition 1 from passing.
  if (stage && stage->contains("capacity") && (*stage)["capacity"].is_object()) {
    const json& c = (*stage)["capacity"];
    const bool inconclusive = c.value("inconclusive", false);
    m.checks.push_back({.condition = "responsiveness",
                        .name = (*stage)["name"].get<std::string>() +
                                " capacity: where responsiveness ends is known",
                        .status = inconclusive ? "pending" : "pass",
                        .detail = c.value("finding", "")});
  }
  if (!any)
    m.checks.push_back({.condition = "responsiveness",
                        .name = "latency thresholds at steady and burst load",
                        .status = "pending",
                        .detail = "no steady or burst phase of the final stage was measured"});
}

void AddQuality(const quality::QualitySummary& q, ReportModel& m) {
  if (q.verdict == "pass") {
    const quality::GroupScores* all = q.groups.empty() ? nullptr : &q.groups.front();
    m.checks.push_back(
        {.condition = "quality",
         .name = "independent scores meet the rubric's thresholds",
         .status = "pass",
         .detail =
             std::to_string(q.scored) + " answers scored" +
             (all && all->weighted_mean ? ", mean " + FormatNumber(*all->weighted_mean, 2) : "") +
             (all && all->pass_rate() ? ", pass rate " + FormatNumber(*all->pass_rate(), 2) : "")});
    return;
  }
  for (const std::string& reason : q.reasons)
    m.checks.push_back({.condition = "quality",
                        .name = reason,
                        .status = q.verdict == "fail" ? "fail" : "pending",
                        .detail = ""});
  // A failing verdict's reasons may include pending ones (too few scores): those stay pending.
  if (q.verdict == "fail")
    for (Check& c : m.checks)
      if (c.condition == "quality" && (c.name.find("fully scored") != std::string::npos ||
                                       c.name.find("cannot be computed") != std::string::npos))
        c.status = "pending";
}

void AddRecoverability(const json& findings, ReportModel& m) {
  const json* stage = FinalStage(findings);
  if (stage && stage->contains("overload")) {
    for (const json& check : (*stage)["overload"]["checks"])
      m.checks.push_back({.condition = "recoverability",
                          .name = "overload: " + check.value("check", ""),
                          .status = check.value("passed", false) ? "pass" : "fail",
                          .detail = Measured(check)});
  } else {
    m.checks.push_back({.condition = "recoverability",
                        .name = "overload is shed clearly",
                        .status = "pending",
                        .detail = "no overload phase was measured"});
  }
  if (stage && stage->contains("recovery")) {
    const json& r = (*stage)["recovery"];
    m.checks.push_back({.condition = "recoverability",
                        .name = "recovery after overload within " +
                                FormatNumber(r.value("max_recovery_s", 0.0), 1) + " s",
                        .status = r.value("passed", false) ? "pass" : "fail",
                        .detail = r.value("finding", "")});
  } else {
    m.checks.push_back({.condition = "recoverability",
                        .name = "recovery after overload",
                        .status = "pending",
                        .detail = "no recovery phase was measured"});
  }
  const json faults = findings.value("faults", json::object());
  for (const auto& [kind, label] :
       {std::pair<const char*, const char*>{"access_denial", "access denial"},
        {"tool_outage", "tool outage"}}) {
    if (!faults.contains(kind)) continue;
    for (const json& probe : faults[kind]) {
      const std::string verdict = probe.value("verdict", "");
      std::vector<std::string> reasons;
      for (const json& reason : probe.value("reasons", json::array()))
        reasons.push_back(reason.get<std::string>());
      if (verdict == "inconclusive")
        reasons.insert(reasons.begin(), "inconclusive: the probe could not show anything");
      m.checks.push_back({.condition = "recoverability",
                          .name = std::string(label) + " probe " + probe.value("probe", ""),
                          .status = verdict == "pass"          ? "pass"
                                    : verdict == "interrupted" ? "pending"
                                                               : "fail",
                          .detail = Join(reasons, "; ")});
    }
  }
}

Status AddCharts(store::Store& store, const store::RunInfo& run, const json& findings,
                 ReportModel& m) {
  Result<std::vector<store::PhaseInfo>> phases = store.ListPhases(run.id);
  if (!phases.ok()) return phases.status();
  Result<std::vector<load::RequestRecord>> records = store.ListRequests(run.id);
  if (!records.ok()) return records.status();
  std::map<int64_t, const store::PhaseInfo*> phase_of;
  for (const store::PhaseInfo& p : *phases)
    if (p.status != "superseded") phase_of[p.id] = &p;
  const json* final_stage = FinalStage(findings);
  const std::string final_name = final_stage ? (*final_stage)["name"].get<std::string>() : "";

  // Latency distributions of every stage's steady phase.
  for (const load::RequestRecord& r : *records) {
    auto found = phase_of.find(r.phase_id);
    // Steady load only: the answers sampled one at a time ("<stage> at rest") are not load.
    if (found == phase_of.end() || found->second->phase != "steady" ||
        found->second->stage.ends_with(" at rest") || r.warmup || r.outcome != load::Outcome::kOk ||
        !r.sent_ns)
      continue;
    if (r.first_token_ns)
      m.charts.steady_ttft_ms[found->second->stage].push_back(
          static_cast<double>(*r.first_token_ns - *r.sent_ns) / 1e6);
    if (r.end_ns)
      m.charts.steady_e2e_ms[found->second->stage].push_back(
          static_cast<double>(*r.end_ns - *r.sent_ns) / 1e6);
  }

  // The final stage's sweep.
  if (final_stage) {
    ChartLine ttft{"ttft p95"}, e2e{"e2e p95"}, goodput{"goodput"};
    for (const json& step : (*final_stage)["steps"]) {
      if (step.value("phase", "") != "sweep" || !step["level"].is_number()) continue;
      const double level = step["level"].get<double>();
      m.charts.sweep_unit = step.value("level_unit", "req/s");
      const json& metrics = step["metrics"];
      if (metrics.contains("ttft_ms") && metrics["ttft_ms"].value("count", 0) > 0)
        ttft.points.push_back({level, metrics["ttft_ms"].value("p95", 0.0)});
      if (metrics.contains("e2e_ms") && metrics["e2e_ms"].value("count", 0) > 0)
        e2e.points.push_back({level, metrics["e2e_ms"].value("p95", 0.0)});
      if (step.contains("throughput"))
        goodput.points.push_back({level, step["throughput"].value("goodput", 0.0)});
    }
    for (ChartLine* line : {&ttft, &e2e, &goodput}) {
      std::sort(line->points.begin(), line->points.end());
      if (!line->points.empty()) m.charts.sweep.push_back(*line);
    }
    if (final_stage->contains("capacity")) {
      const json& c = (*final_stage)["capacity"];
      if (c["holds_up_to"].is_number()) m.charts.holds_up_to = c["holds_up_to"].get<double>();
      if (c["fails_at"].is_number()) m.charts.fails_at = c["fails_at"].get<double>();
    }
  }

  // The final stage's burst, overload and recovery, second by second.
  std::optional<int64_t> from_ns, to_ns;
  for (const store::PhaseInfo& p : *phases) {
    if (p.status == "superseded" || p.stage != final_name || !p.started_ns || !p.ended_ns) continue;
    if (p.phase != "burst" && p.phase != "overload" && p.phase != "recovery") continue;
    if (!from_ns || *p.started_ns < *from_ns) from_ns = *p.started_ns;
    if (!to_ns || *p.ended_ns > *to_ns) to_ns = *p.ended_ns;
  }
  if (from_ns && to_ns && *to_ns > *from_ns) {
    for (const store::PhaseInfo& p : *phases)
      if (p.status != "superseded" && p.stage == final_name && p.started_ns && p.ended_ns &&
          *p.started_ns >= *from_ns && *p.ended_ns <= *to_ns &&
          (p.phase == "burst" || p.phase == "overload" || p.phase == "recovery"))
        m.charts.phases.push_back({p.phase,
                                   {static_cast<double>(*p.started_ns - *from_ns) / 1e9,
                                    static_cast<double>(*p.ended_ns - *from_ns) / 1e9}});
    const size_t seconds = static_cast<size_t>((*to_ns - *from_ns) / 1'000'000'000) + 1;
    std::vector<int64_t> sent(seconds, 0);
    std::vector<std::vector<double>> ttft(seconds);
    for (const load::RequestRecord& r : *records) {
      auto found = phase_of.find(r.phase_id);
      if (found == phase_of.end() || found->second->stage != final_name || !r.sent_ns ||
          *r.sent_ns < *from_ns || *r.sent_ns > *to_ns)
        continue;
      const size_t second = static_cast<size_t>((*r.sent_ns - *from_ns) / 1'000'000'000);
      ++sent[second];
      if (r.first_token_ns && r.outcome == load::Outcome::kOk)
        ttft[second].push_back(static_cast<double>(*r.first_token_ns - *r.sent_ns) / 1e6);
    }
    ChartLine sent_line{"sent/s"}, ttft_line{"ttft p95"};
    for (size_t s = 0; s < seconds; ++s) {
      sent_line.points.push_back({static_cast<double>(s), static_cast<double>(sent[s])});
      if (!ttft[s].empty()) {
        std::sort(ttft[s].begin(), ttft[s].end());
        ttft_line.points.push_back({static_cast<double>(s), Percentile(ttft[s], 95)});
      }
    }
    m.charts.timeline = {sent_line, ttft_line};

    // The server's own view over the same seconds, when it was scraped.
    Result<store::Statement> q = store::Statement::Prepare(
        store.database(),
        "SELECT series, t_ns, value FROM telemetry_samples WHERE run_id = ? AND t_ns BETWEEN ? "
        "AND ? AND (series LIKE '%num_requests_running' OR series LIKE '%num_requests_waiting') "
        "ORDER BY series, t_ns");
    if (!q.ok()) return q.status();
    q->Bind(1, run.id).Bind(2, *from_ns).Bind(3, *to_ns);
    std::map<std::string, ChartLine> server;
    while (q->Step()) {
      const std::string series = q->Text(0);
      const std::string name = series.ends_with("running") ? "running" : "waiting";
      server[name].name = name;
      server[name].points.push_back({static_cast<double>(q->Int(1) - *from_ns) / 1e9, q->Real(2)});
    }
    SG_RETURN_IF_ERROR(q->status());
    for (auto& [name, line] : server)
      m.charts.server.push_back(std::move(line));
  }

  // Reviewers' scores, level by level.
  Result<store::Statement> q = store::Statement::Prepare(
      store.database(),
      "SELECT s.criterion, s.value, COUNT(*) FROM scores s JOIN review_items i ON i.item_id = "
      "s.item_id JOIN exports e ON e.export_id = i.export_id WHERE i.run_id = ? AND e.scorer = "
      "'reviewers' GROUP BY s.criterion, s.value");
  if (!q.ok()) return q.status();
  q->Bind(1, run.id);
  while (q->Step())
    m.charts.score_levels[q->Text(0)][q->Int(1)] = q->Int(2);
  return q->status();
}

}  // namespace

const nlohmann::json* FinalStage(const nlohmann::json& findings) {
  const json* last = nullptr;
  if (findings.contains("stages") && findings["stages"].is_array())
    for (const json& stage : findings["stages"])
      if (!stage.value("skipped", false)) last = &stage;
  return last;
}

Result<ReportModel> BuildReport(store::Store& store, const store::RunInfo& run,
                                const manifest::Bundle* bundle, bool charts) {
  ReportModel m{.run = run};
  m.findings = json::parse(run.findings_json, nullptr, false);
  if (!m.findings.is_object()) m.findings = json::object();
  m.scenario = json::parse(run.scenario_json, nullptr, false);
  if (!m.scenario.is_object()) m.scenario = json::object();
  Result<quality::QualitySummary> quality = quality::SummarizeQuality(store, run, bundle);
  if (!quality.ok()) return quality.status();
  m.quality = std::move(*quality);

  if (m.findings.empty()) {
    m.notes.push_back(
        "the run has no stored findings (it did not end, or it ran before findings "
        "were kept in the store): conditions 1 and 3 are pending");
  }
  if (run.status == store::RunStatus::kInterrupted)
    m.notes.push_back("the run was interrupted: what it did not measure is pending");
  AddResponsiveness(m.findings, m);
  AddQuality(m.quality, m);
  AddRecoverability(m.findings, m);
  if (charts) SG_RETURN_IF_ERROR(AddCharts(store, run, m.findings, m));

  bool failed = false, pending = false;
  for (const Check& c : m.checks) {
    if (c.status == "fail") {
      failed = true;
      m.verdict_reasons.push_back(c.condition + ": " + c.name +
                                  (c.detail.empty() ? "" : " (" + c.detail + ")"));
    }
  }
  if (!failed)
    for (const Check& c : m.checks)
      if (c.status == "pending") {
        pending = true;
        m.verdict_reasons.push_back(c.condition + ": " + c.name +
                                    (c.detail.empty() ? "" : " (" + c.detail + ")"));
      }
  m.verdict = failed ? "not ready" : pending ? "pending" : "ready";
  return m;
}

}  // namespace stagegate::report
