// The report's writers: JSON, Markdown, HTML (inline SVG charts), JUnit XML and CSV, all from one
// ReportModel.

#include <algorithm>
#include <cmath>
#include <set>

#include "base/strings.h"
#include "report/compare_runs.h"
#include "report/decisions.h"
#include "report/model.h"
#include "report/responsiveness_charts.h"
#include "report/scopes.h"
#include "report/svg.h"
#include "report/task_rules_report.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

std::string ConditionTitle(Condition condition) {
  switch (condition) {
    case Condition::kResponsiveness:
      return "Condition 1: responsiveness";
    case Condition::kQuality:
      return "Condition 2: quality";
    case Condition::kRecoverability:
      break;
  }
  return "Condition 3: recoverability";
}

// The worst status of a condition's checks: fail, then pending, then pass.
CheckStatus ConditionStatus(const ReportModel& m, Condition condition) {
  bool pending = false, any = false;
  for (const Check& c : m.checks) {
    if (c.condition != condition) continue;
    any = true;
    if (c.status == CheckStatus::kFail) return CheckStatus::kFail;
    pending = pending || c.status == CheckStatus::kPending;
  }
  return pending || !any ? CheckStatus::kPending : CheckStatus::kPass;
}

// A statistic in ms to one decimal, or "-" when it was not measured.
std::string Ms(const store::StepFindings* step, const char* metric, const char* stat) {
  const std::optional<double> value = step ? step->Stat(metric, stat) : std::nullopt;
  return value ? FormatNumber(*value, 1) : "-";
}

// Every fact of a run: which run it is, and what makes it comparable.
std::vector<std::pair<std::string, std::string>> Facts(const ReportModel& m) {
  std::vector<std::pair<std::string, std::string>> facts = {
      {"run", m.run.id},
      {"scenario", m.run.scenario_name + " (" + m.run.scenario_file + ")"},
      {"status", m.findings.status.empty() ? std::string("unknown") : m.findings.status},
      {"fingerprint", m.run.fingerprint},
  };
  for (auto& fact : ComparableFacts(m))
    facts.push_back(std::move(fact));
  return facts;
}

// Text for Markdown, where it may come from the model or the corpus: shown as written, never
// live. Renderers pass HTML through, so & < > are written as entities (which also ends <...>
// autolinks); \ [ ] ` are backslash-escaped, so no link, image ("![..](..)" needs its
// brackets), reference definition or code span can start; line breaks become spaces, so no text
// can open a block of its own.
std::string MarkdownText(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\\':
      case '[':
      case ']':
      case '`':
        out += '\\';
        out += c;
        break;
      case '\r':
      case '\n':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

constexpr const char* kScopeTitle = "Thresholds by kind of task (final stage)";
constexpr const char* kLevelTitle = "Sweep levels (final stage)";

// The responsiveness table of the stages, a header row first, as plain text for either format.
std::vector<std::vector<std::string>> StageTable(const store::RunFindings& findings) {
  std::vector<std::vector<std::string>> table = {{"stage", "steady ttft p50", "steady ttft p95",
                                                  "steady e2e p95", "burst ttft p95",
                                                  "added over previous (ttft p95)"}};
  for (const store::StageFindings& stage : findings.stages) {
    if (stage.skipped) continue;
    const store::StepFindings* steady = stage.Step("steady");
    const store::StepFindings* burst = stage.Step("burst");
    const std::string added =
        stage.added_ttft_p95_ms ? FormatNumber(*stage.added_ttft_p95_ms, 1) + " ms" : "-";
    table.push_back({stage.name, Ms(steady, "ttft_ms", "p50"), Ms(steady, "ttft_ms", "p95"),
                     Ms(steady, "e2e_ms", "p95"), Ms(burst, "ttft_ms", "p95"), added});
  }
  return table;
}

// TTFT by turn for each step of multi-turn sessions, a header row first; only the header when
// no step ran sessions.
std::vector<std::vector<std::string>> TurnTable(const store::RunFindings& findings) {
  std::vector<std::vector<std::string>> table = {{"stage", "phase", "turn", "completed",
                                                  "ttft p50 (ms)", "ttft p95 (ms)", "e2e p95 (ms)",
                                                  "input tokens (mean)", "sessions completed"}};
  const auto stat = [](const store::Distribution& d, const char* name, int digits) {
    const std::optional<double> value = d.At(name);
    return value ? FormatNumber(*value, digits) : "-";
  };
  for (const store::StageFindings& stage : findings.stages)
    for (const store::StepFindings& step : stage.steps) {
      if (!step.sessions) continue;
      const std::string phase =
          step.phase + (step.level ? " " + FormatNumber(*step.level) + " " + step.level_unit : "");
      for (const store::TurnFindings& turn : step.sessions->turns)
        table.push_back({stage.name, phase, std::to_string(turn.turn),
                         std::to_string(turn.completed) + " of " + std::to_string(turn.sent),
                         stat(turn.ttft_ms, "p50", 1), stat(turn.ttft_ms, "p95", 1),
                         stat(turn.e2e_ms, "p95", 1), stat(turn.input_tokens, "mean", 0),
                         turn.turn == 1 ? std::to_string(step.sessions->completed) + " of " +
                                              std::to_string(step.sessions->started)
                                        : ""});
    }
  return table;
}

// The final stage's sweep, a level a row in the order they ran, a header row first; only the
// header when it had no sweep.
std::vector<std::vector<std::string>> LevelTable(const store::RunFindings& findings) {
  std::vector<std::vector<std::string>> table = {
      {"level", "sent", "completed (req/s)", "ttft p95 (ms)", "e2e p95 (ms)", "verdict", "why"}};
  const store::StageFindings* stage = findings.FinalStage();
  if (!stage) return table;
  for (const store::StepFindings& step : stage->steps) {
    if (step.phase != "sweep" || !step.level) continue;
    const std::optional<double> completed =
        step.judgement ? step.judgement->completed_rate : std::nullopt;
    const std::string verdict = step.judgement ? step.judgement->verdict : "-";
    std::string why = step.judgement ? step.judgement->reason : "";
    if (why.starts_with(verdict + ": ")) why.erase(0, verdict.size() + 2);
    table.push_back({FormatNumber(*step.level) + " " + step.level_unit,
                     std::to_string(step.Requests("sent")),
                     completed ? FormatNumber(*completed, 2) : "-", Ms(&step, "ttft_ms", "p95"),
                     Ms(&step, "e2e_ms", "p95"), verdict, why});
  }
  return table;
}

// Each way the client may have limited a step, a header row first (scenario::CheckClient).
std::vector<std::vector<std::string>> ClientTable(const store::RunFindings& findings) {
  std::vector<std::vector<std::string>> table = {
      {"stage", "phase", "sent", "achieved (req/s)", "the client may have limited it"}};
  for (const store::StageFindings& stage : findings.stages)
    for (const store::StepFindings& step : stage.steps) {
      if (!step.client_warnings) continue;
      const std::string phase =
          step.phase + (step.level ? " " + FormatNumber(*step.level) + " " + step.level_unit : "");
      const std::optional<double> achieved = step.Throughput("achieved_rate");
      for (const std::string& warning : *step.client_warnings)
        table.push_back({stage.name, phase, std::to_string(step.Requests("sent")),
                         achieved ? FormatNumber(*achieved, 2) : "-", warning});
    }
  return table;
}

// Whether the client kept up: nullopt for a run stored before every step was checked.
std::optional<std::string> ClientSentence(const store::RunFindings& findings) {
  int checked = 0, limited = 0;
  for (const store::StageFindings& stage : findings.stages)
    for (const store::StepFindings& step : stage.steps)
      if (step.client_warnings) {
        ++checked;
        limited += step.client_warnings->empty() ? 0 : 1;
      }
  if (checked == 0) return std::nullopt;
  if (limited == 0)
    return "Client check: the load generator kept up in every step (" + std::to_string(checked) +
           " checked); what was measured is the application's.";
  return "Client check: the load generator may have limited " + std::to_string(limited) +
         " of the " + std::to_string(checked) +
         " steps checked; their figures may be the client's, not the application's.";
}

// A Markdown table cell: as MarkdownText, with | escaped.
std::string MarkdownCell(std::string text) {
  return ReplaceAll(MarkdownText(std::move(text)), "|", "\\|");
}

// A line of an indented code block, shown as it is: only a line break could end the block.
std::string CodeLine(std::string line) {
  line = ReplaceAll(std::move(line), "\r", " ");
  return "    " + ReplaceAll(std::move(line), "\n", " ") + "\n";
}

std::string StatusWord(CheckStatus status) {
  return status == CheckStatus::kPass ? "PASS" : status == CheckStatus::kFail ? "FAIL" : "PENDING";
}

// The sentence on where responsiveness ends, when the final stage had a sweep.
std::optional<std::string> CapacityFinding(const ReportModel& m) {
  const store::StageFindings* stage = m.findings.FinalStage();
  if (!stage || !stage->capacity) return std::nullopt;
  return stage->capacity->finding;
}

std::string E(const std::string& text) {
  return EscapeHtml(text);
}

// The verdict, its reasons, the baseline warning and the run's facts.
std::string HtmlVerdict(const ReportModel& m) {
  std::string out = "<p class=\"verdict " + std::string(VerdictClass(m.verdict)) +
                    "\">Verdict: <strong>" + E(std::string(Name(m.verdict))) + "</strong></p>\n";
  if (!m.verdict_reasons.empty()) {
    out += "<ul>\n";
    for (const std::string& reason : m.verdict_reasons)
      out += "<li>" + E(reason) + "</li>\n";
    out += "</ul>\n";
  }
  if (m.incomparable_baseline)
    out +=
        "<p class=\"fail\">Warning: compared with a baseline that is not comparable (see "
        "Baseline comparison).</p>\n";
  out += "<table>\n";
  for (const auto& [label, value] : Facts(m))
    out += "<tr><th>" + E(label) + "</th><td>" + E(value) + "</td></tr>\n";
  return out + "</table>\n";
}

// A condition's heading and the table of its checks.
std::string HtmlChecks(const ReportModel& m, Condition condition) {
  const std::string status(Name(ConditionStatus(m, condition)));
  std::string out = "<h2>" + E(ConditionTitle(condition)) + ": <span class=\"" + status + "\">" +
                    status +
                    "</span></h2>\n<table><tr><th>check</th><th>status</th><th>detail</th></tr>\n";
  for (const Check& c : m.checks)
    if (c.condition == condition)
      out += "<tr><td>" + E(c.name) + "</td><td class=\"" + std::string(Name(c.status)) + "\">" +
             StatusWord(c.status) + "</td><td>" + E(c.detail) + "</td></tr>\n";
  return out + "</table>\n";
}

// A table of text, its first row the header, every cell escaped.
std::string HtmlTable(const std::vector<std::vector<std::string>>& table) {
  std::string out = "<table>";
  for (size_t row = 0; row < table.size(); ++row) {
    const char* cell_tag = row == 0 ? "th" : "td";
    out += "<tr>";
    for (const std::string& cell : table[row])
      out += std::string("<") + cell_tag + ">" + E(cell) + "</" + cell_tag + ">";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// The same in Markdown.
std::string MarkdownTable(const std::vector<std::vector<std::string>>& table) {
  std::string out;
  for (size_t row = 0; row < table.size(); ++row) {
    for (const std::string& cell : table[row])
      out += "| " + MarkdownCell(cell) + " ";
    out += "|\n";
    if (row == 0) {
      for (size_t i = 0; i < table[0].size(); ++i)
        out += "| --- ";
      out += "|\n";
    }
  }
  return out;
}

// What the decisions do to the verdict, after `lead`.
std::string DecisionRule(const ReportModel& m, const std::string& lead) {
  return lead + (m.require_signoff
                     ? "Ready needs each named owner's acceptance, on the evidence as it is now."
                     : "Sign-off is not required: an owner's rejection still makes the run not "
                       "ready.");
}

// The stage table and where responsiveness ends; TTFT by turn when sessions ran.
std::string HtmlStageTable(const ReportModel& m) {
  if (m.findings.stages.empty()) return "";
  std::string out = HtmlTable(StageTable(m.findings));
  if (const std::optional<std::string> finding = CapacityFinding(m))
    out += "<p>Where acceptable responsiveness ends: <strong>" + E(*finding) + "</strong>.</p>\n";
  if (m.saturation) out += "<p>What saturated first: " + E(m.saturation->sentence) + ".</p>\n";
  if (const auto levels = LevelTable(m.findings); levels.size() > 1)
    out += "<h3>" + std::string(kLevelTitle) + "</h3>\n" + HtmlTable(levels);
  if (const auto scopes = ScopeTable(m.findings); scopes.size() > 1)
    out += "<h3>" + std::string(kScopeTitle) + "</h3>\n" + HtmlTable(scopes);
  const std::vector<std::vector<std::string>> turns = TurnTable(m.findings);
  if (turns.size() > 1) out += "<h3>TTFT by turn (multi-turn sessions)</h3>\n" + HtmlTable(turns);
  if (const std::optional<std::string> client = ClientSentence(m.findings)) {
    out += "<p>" + E(*client) + "</p>\n";
    if (const auto limited = ClientTable(m.findings); limited.size() > 1) out += HtmlTable(limited);
  }
  return out;
}

std::string HtmlResponsiveness(const ReportModel& m) {
  return HtmlStageTable(m) + ResponsivenessChartsHtml(m);
}

// The quality summary and the reviewers' scores by level.
std::string HtmlQuality(const ReportModel& m) {
  std::string out;
  if (const auto tasks = TaskRulesTable(m); tasks.size() > 1)
    out += "<h3>" + std::string(kTaskRulesTitle) + "</h3>\n" + HtmlTable(tasks);
  out += "<pre>";
  for (const std::string& line : quality::QualityLines(m.quality))
    out += E(line) + "\n";
  out += "</pre>\n";
  if (m.charts.score_levels.empty()) return out;
  BarChart bars{.title = "Reviewers' scores by level, per criterion",
                .description = "How many scores each level received, one bar a criterion.",
                .x_label = "level",
                .y_label = "scores"};
  std::set<int64_t> levels;
  for (const auto& [criterion, counts] : m.charts.score_levels) {
    bars.series_names.push_back(criterion);
    for (const auto& [level, count] : counts)
      levels.insert(level);
  }
  for (int64_t level : levels) {
    BarGroup group{.label = std::to_string(level)};
    for (const auto& [criterion, counts] : m.charts.score_levels) {
      auto found = counts.find(level);
      group.values.push_back(found == counts.end() ? 0.0 : static_cast<double>(found->second));
    }
    bars.groups.push_back(std::move(group));
  }
  return out + "<figure>" + BarChartSvg(bars) + "</figure>\n";
}

// Each tool-outage probe's requests: what the user saw while the tool was down.
std::string HtmlToolOutageEvidence(const ReportModel& m) {
  std::string out;
  for (const store::ProbeFindings& probe : m.findings.probes) {
    if (probe.kind != store::ProbeKind::kToolOutage) continue;
    out += "<h3>Tool outage probe " + E(probe.probe) + " (" + E(probe.actuator) +
           ")</h3>\n<table><tr><th>part</th><th>status</th>"
           "<th>e2e ms</th><th>said unavailable</th><th>claimed</th><th>answer</th></tr>\n";
    for (const store::ProbeRequest& q : probe.requests)
      out += "<tr><td>" + E(q.part) + "</td><td>" +
             E(q.status ? std::to_string(*q.status) : q.outcome) + "</td><td>" +
             (q.e2e_ms ? FormatNumber(*q.e2e_ms, 0) : "-") + "</td><td>" + E(q.acknowledged) +
             "</td><td>" + E(q.claimed) + "</td><td>" + E(q.excerpt) + "</td></tr>\n";
    out += "</table>\n";
  }
  return out;
}

std::string HtmlTriage(const ReportModel& m) {
  if (m.triage.empty()) return "";
  int64_t total = 0;
  for (const auto& [name, count] : m.triage)
    total += count;
  std::string out =
      "<h2>Support triage</h2>\n<table><tr><th>class</th><th>requests</th><th>share</th></tr>\n";
  for (const auto& [name, count] : m.triage)
    out += "<tr><td>" + E(name) + "</td><td>" + std::to_string(count) + "</td><td>" +
           FormatNumber(total ? 100.0 * static_cast<double>(count) / static_cast<double>(total) : 0,
                        1) +
           "%</td></tr>\n";
  return out + "</table>\n<p>Each request's evidence and trace id: <code>stagegate triage " +
         E(m.run.id) + " --class CLASS</code> (docs/support-triage.md).</p>\n";
}

constexpr const char* kCostTitle = "Cost per accepted answer (information, not a check)";
constexpr const char* kEnergyTitle = "Energy (information, not a check)";
constexpr const char* kEnergyNote =
    "Joules of all GPUs over the phase, from their cumulative energy counters read on each side "
    "of its boundaries (or, without a counter, their sampled power integrated), brought to the "
    "whole phase when the samples cover part of it, divided by the requests the phase completed, "
    "their output tokens, and completed requests times the reviewers' pass rate. Idle and "
    "host power are not in it.";

// The cost section: its facts, the formulas with the numbers put in, what it does not claim.
std::string MarkdownCost(const CostFigures& cost) {
  const CostText text = DescribeCost(cost);
  std::string out = std::string("\n## ") + kCostTitle + "\n\n";
  for (const std::string& fact : text.facts)
    out += "- " + MarkdownText(fact) + "\n";
  if (!text.formulas.empty()) {
    out += "\nFormulas, with the numbers put in (r: completed req/s, p: pass rate):\n\n";
    for (const std::string& formula : text.formulas)
      out += CodeLine(formula);
  }
  return out + "\n" + MarkdownText(text.not_claimed) + "\n";
}

std::string HtmlCost(const CostFigures& cost) {
  const CostText text = DescribeCost(cost);
  std::string out = std::string("<h2>") + E(kCostTitle) + "</h2>\n<ul>\n";
  for (const std::string& fact : text.facts)
    out += "<li>" + E(fact) + "</li>\n";
  out += "</ul>\n";
  if (!text.formulas.empty()) {
    out += "<p>Formulas, with the numbers put in (r: completed req/s, p: pass rate):</p>\n<pre>";
    for (const std::string& formula : text.formulas)
      out += E(formula) + "\n";
    out += "</pre>\n";
  }
  return out + "<p>" + E(text.not_claimed) + "</p>\n";
}

}  // namespace

json ReportJson(const ReportModel& m) {
  json checks = json::array();
  for (const Check& c : m.checks)
    checks.push_back({{"condition", Name(c.condition)},
                      {"name", c.name},
                      {"status", Name(c.status)},
                      {"detail", c.detail}});
  json facts = json::object();
  for (const auto& [label, value] : Facts(m))
    facts[label] = value;
  json conditions = json::object();
  for (Condition condition : kConditions)
    conditions[std::string(Name(condition))] = {{"status", Name(ConditionStatus(m, condition))}};
  // The evidence as the run stored it (run.json), passed through as it is.
  const json stored = json::parse(m.run.findings_json, nullptr, false);
  if (stored.is_object() && stored.contains("stages"))
    conditions["responsiveness"]["stages"] = stored["stages"];
  conditions["quality"]["summary"] = quality::QualityToJson(m.quality);
  conditions["quality"]["task_rules"] = TaskRulesJson(m);
  conditions["recoverability"]["faults"] =
      stored.is_object() && stored.contains("faults") ? stored["faults"] : json::object();
  return {{"schema_version", 1},
          {"verdict", Name(m.verdict)},
          {"verdict_reasons", m.verdict_reasons},
          {"facts", facts},
          {"checks", checks},
          {"conditions", conditions},
          {"triage",
           [&] {
             json classes = json::object();
             for (const auto& [name, count] : m.triage)
               classes[name] = count;
             return classes;
           }()},
          {"scopes", ScopesJson(m.findings)},
          {"saturation", m.saturation ? SaturationJson(*m.saturation) : json(nullptr)},
          {"decisions", DecisionsJson(m)},
          {"cost", CostJson(m.cost)},
          {"energy", m.energy ? EnergyJson(*m.energy) : json(nullptr)},
          {"baseline", m.baseline ? *m.baseline : json(nullptr)},
          {"notes", m.notes}};
}

std::string ReportMarkdown(const ReportModel& m) {
  std::string out = "# Release report: " + MarkdownText(m.run.scenario_name) + "\n\n";
  out += "**Verdict: " + std::string(Name(m.verdict)) + "**\n\n";
  for (const std::string& reason : m.verdict_reasons)
    out += "- " + MarkdownText(reason) + "\n";
  if (m.incomparable_baseline)
    out += "\n**Warning: compared with a baseline that is not comparable (see below).**\n";
  out += "\n| fact | value |\n| --- | --- |\n";
  for (const auto& [label, value] : Facts(m))
    out += "| " + label + " | " + MarkdownCell(value) + " |\n";
  for (Condition condition : kConditions) {
    out += "\n## " + ConditionTitle(condition) + ": " +
           std::string(Name(ConditionStatus(m, condition))) + "\n\n";
    out += "| check | status | detail |\n| --- | --- | --- |\n";
    for (const Check& c : m.checks)
      if (c.condition == condition)
        out += "| " + MarkdownCell(c.name) + " | " + StatusWord(c.status) + " | " +
               MarkdownCell(c.detail) + " |\n";
    if (condition == Condition::kResponsiveness && !m.findings.stages.empty()) {
      out += "\n" + MarkdownTable(StageTable(m.findings));
      if (const std::optional<std::string> finding = CapacityFinding(m))
        out += "\nWhere acceptable responsiveness ends: " + MarkdownText(*finding) + ".\n";
      if (m.saturation)
        out += "\nWhat saturated first: " + MarkdownText(m.saturation->sentence) + ".\n";
      if (const auto levels = LevelTable(m.findings); levels.size() > 1)
        out += "\n### " + std::string(kLevelTitle) + "\n\n" + MarkdownTable(levels);
      if (const auto scopes = ScopeTable(m.findings); scopes.size() > 1)
        out += "\n### " + std::string(kScopeTitle) + "\n\n" + MarkdownTable(scopes);
      const std::vector<std::vector<std::string>> turns = TurnTable(m.findings);
      if (turns.size() > 1)
        out += "\n### TTFT by turn (multi-turn sessions)\n\n" + MarkdownTable(turns);
      if (const std::optional<std::string> client = ClientSentence(m.findings)) {
        out += "\n" + MarkdownText(*client) + "\n";
        if (const auto limited = ClientTable(m.findings); limited.size() > 1)
          out += "\n" + MarkdownTable(limited);
      }
    }
    if (condition == Condition::kQuality) {
      if (const auto tasks = TaskRulesTable(m); tasks.size() > 1)
        out += "\n### " + std::string(kTaskRulesTitle) + "\n\n" + MarkdownTable(tasks);
      out += "\n";
      for (const std::string& line : quality::QualityLines(m.quality))
        out += CodeLine(line);
    }
  }
  if (const auto decisions = DecisionTable(m); decisions.size() > 1)
    out += "\n## Decisions\n\n" + MarkdownTable(decisions) + DecisionRule(m, "\n") + "\n";
  out += MarkdownCost(m.cost);
  if (m.energy && !m.energy->phases.empty())
    out += std::string("\n## ") + kEnergyTitle + "\n\n" +
           (Measured(*m.energy) ? MarkdownTable(EnergyTable(*m.energy)) + "\n" + kEnergyNote
                                : "Not measured: " + m.energy->phases.front().basis + ".") +
           "\n";
  if (!m.triage.empty()) {
    int64_t total = 0;
    for (const auto& [name, count] : m.triage)
      total += count;
    out += "\n## Support triage\n\n| class | requests | share |\n| --- | --- | --- |\n";
    for (const auto& [name, count] : m.triage)
      out += "| " + name + " | " + std::to_string(count) + " | " +
             FormatNumber(
                 total ? 100.0 * static_cast<double>(count) / static_cast<double>(total) : 0, 1) +
             "% |\n";
    out += "\nEach request's evidence and trace id: `stagegate triage " + MarkdownText(m.run.id) +
           " --class CLASS` (docs/support-triage.md).\n";
  }
  if (!m.baseline_lines.empty()) {
    out += "\n## Baseline comparison\n\n";
    for (const std::string& line : m.baseline_lines)
      out += CodeLine(line);
  }
  if (!m.notes.empty()) {
    out += "\n## Notes\n\n";
    for (const std::string& note : m.notes)
      out += "- " + MarkdownText(note) + "\n";
  }
  return out;
}

std::string ReportJunit(const ReportModel& m) {
  int64_t failures_all = 0, skipped_all = 0;
  for (const Check& c : m.checks) {
    failures_all += c.status == CheckStatus::kFail;
    skipped_all += c.status == CheckStatus::kPending;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"stagegate " +
                    EscapeHtml(m.run.id) + "\" tests=\"" + std::to_string(m.checks.size()) +
                    "\" failures=\"" + std::to_string(failures_all) + "\" skipped=\"" +
                    std::to_string(skipped_all) + "\">\n";
  for (Condition condition : kConditions) {
    const std::string name(Name(condition));
    int64_t tests = 0, failures = 0, skipped = 0;
    for (const Check& c : m.checks) {
      if (c.condition != condition) continue;
      ++tests;
      failures += c.status == CheckStatus::kFail;
      skipped += c.status == CheckStatus::kPending;
    }
    out += "  <testsuite name=\"" + name + "\" tests=\"" + std::to_string(tests) +
           "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" + std::to_string(skipped) +
           "\">\n";
    for (const Check& c : m.checks) {
      if (c.condition != condition) continue;
      out +=
          "    <testcase classname=\"stagegate." + name + "\" name=\"" + EscapeHtml(c.name) + "\">";
      if (c.status == CheckStatus::kFail)
        out += "<failure message=\"" + EscapeHtml(c.detail.empty() ? c.name : c.detail) + "\">" +
               EscapeHtml(c.detail) + "</failure>";
      else if (c.status == CheckStatus::kPending)
        out += "<skipped message=\"pending: " + EscapeHtml(c.detail.empty() ? c.name : c.detail) +
               "\"/>";
      out += "</testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

std::string ReportCsv(const ReportModel& m) {
  std::string out =
      "stage,phase,level,level_unit,offered,completed,ttft_p50_ms,ttft_p95_ms,ttft_p99_ms,"
      "e2e_p50_ms,e2e_p95_ms,itl_p99_ms,goodput,passed\n";
  for (const store::StageFindings& stage : m.findings.stages) {
    for (const store::StepFindings& step : stage.steps) {
      const auto cell = [](const std::string& v) { return v == "-" ? std::string() : v; };
      const std::optional<double> goodput = step.Throughput("goodput");
      out += CsvField(stage.name) + "," + CsvField(step.phase) + "," +
             (step.level ? FormatNumber(*step.level) : "") + "," + CsvField(step.level_unit) + "," +
             std::to_string(step.Requests("offered")) + "," +
             std::to_string(step.Requests("completed")) + "," + cell(Ms(&step, "ttft_ms", "p50")) +
             "," + cell(Ms(&step, "ttft_ms", "p95")) + "," + cell(Ms(&step, "ttft_ms", "p99")) +
             "," + cell(Ms(&step, "e2e_ms", "p50")) + "," + cell(Ms(&step, "e2e_ms", "p95")) + "," +
             cell(Ms(&step, "itl_ms", "p99")) + "," + (goodput ? FormatNumber(*goodput, 3) : "") +
             "," + (step.passed ? (*step.passed ? "true" : "false") : "") + "\n";
    }
  }
  return out;
}

std::string ReportHtml(const ReportModel& m) {
  const auto e = [](const std::string& text) { return EscapeHtml(text); };
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; img-src data:\">\n"
      "<link rel=\"icon\" href=\"data:,\">\n<title>Release report: " +
      e(m.run.scenario_name) + " (" + e(m.run.id) +
      ")</title>\n<style>\n"
      "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:980px;margin:2em "
      "auto;padding:0 1em;color:#1a1a1a;line-height:1.45}\n"
      "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ddd}\n"
      "table{border-collapse:collapse;margin:.8em 0;font-size:.92em}td,th{border:1px solid "
      "#ddd;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f5f5f5}\n"
      ".pass{color:#0b6e2e;font-weight:600}.fail{color:#b00020;font-weight:600}"
      ".pending{color:#8a5a00;font-weight:600}\n"
      ".verdict{font-size:1.3em;padding:.6em 1em;border-radius:6px;display:inline-block}\n"
      ".verdict.ready{background:#e3f4e8}.verdict.not-ready{background:#fde7ea}"
      ".verdict.pending{background:#fff3d6}\n"
      "pre{white-space:pre-wrap;background:#f7f7f7;padding:.8em;font-size:.9em}\n"
      "figure{margin:1.2em 0}svg{max-width:100%;height:auto}\n"
      "</style></head><body>\n";
  out += "<h1>Release report: " + e(m.run.scenario_name) + "</h1>\n";
  out += HtmlVerdict(m);
  for (Condition condition : kConditions) {
    out += HtmlChecks(m, condition);
    if (condition == Condition::kResponsiveness) out += HtmlResponsiveness(m);
    if (condition == Condition::kQuality) out += HtmlQuality(m);
    if (condition == Condition::kRecoverability) out += HtmlToolOutageEvidence(m);
  }
  if (const auto decisions = DecisionTable(m); decisions.size() > 1)
    out +=
        "<h2>Decisions</h2>\n" + HtmlTable(decisions) + "<p>" + e(DecisionRule(m, "")) + "</p>\n";
  out += HtmlCost(m.cost);
  if (m.energy && !m.energy->phases.empty())
    out +=
        std::string("<h2>") + kEnergyTitle + "</h2>\n" +
        (Measured(*m.energy) ? HtmlTable(EnergyTable(*m.energy)) + "<p>" + kEnergyNote + "</p>\n"
                             : "<p>Not measured: " + E(m.energy->phases.front().basis) + ".</p>\n");
  out += HtmlTriage(m);
  if (!m.baseline_lines.empty()) {
    out += "<h2>Baseline comparison</h2>\n<pre>";
    for (const std::string& line : m.baseline_lines)
      out += e(line) + "\n";
    out += "</pre>\n";
  }
  if (!m.notes.empty()) {
    out += "<h2>Notes</h2>\n<ul>\n";
    for (const std::string& note : m.notes)
      out += "<li>" + e(note) + "</li>\n";
    out += "</ul>\n";
  }
  return out +
         "<p><small>stagegate report, schema 1, from the store "
         "alone.</small></p>\n</body></html>\n";
}

}  // namespace stagegate::report
