// reports/index.html: every run by scenario, with its verdict, key figures and a trend chart.

#include <map>

#include "base/strings.h"
#include "report/model.h"
#include "report/svg.h"

namespace stagegate::report {
namespace {

// The key figures of a run: steady TTFT and e2e p95 on its final stage, where responsiveness
// ends, the recovery time and the reviewers' mean.
struct KeyFigures {
  std::optional<double> ttft_p95, e2e_p95, holds_up_to, recovered_s, mean_score;
};

KeyFigures KeyFiguresOf(const ReportModel& m) {
  KeyFigures k;
  if (const store::StageFindings* stage = m.findings.FinalStage()) {
    if (const store::StepFindings* steady = stage->Step("steady")) {
      k.ttft_p95 = steady->Stat("ttft_ms", "p95");
      k.e2e_p95 = steady->Stat("e2e_ms", "p95");
    }
    if (stage->capacity) k.holds_up_to = stage->capacity->holds_up_to;
    if (stage->recovery) k.recovered_s = stage->recovery->recovered_after_s;
  }
  if (!m.quality.groups.empty() && m.quality.groups.front().weighted_mean)
    k.mean_score = m.quality.groups.front().weighted_mean;
  return k;
}

std::string Figure(const std::optional<double>& value, int decimals) {
  return value ? FormatNumber(*value, decimals) : "-";
}

}  // namespace

std::string DashboardHtml(const std::vector<ReportModel>& runs,
                          const std::function<bool(const std::string&)>& has_report) {
  const auto e = [](const std::string& text) { return EscapeHtml(text); };
  std::map<std::string, std::vector<const ReportModel*>> by_scenario;
  for (const ReportModel& m : runs)
    by_scenario[m.run.scenario_name].push_back(&m);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; img-src data:\">\n<link rel=\"icon\" href=\"data:,\">\n"
      "<title>stagegate: runs</title>\n<style>\n"
      "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;margin:2em "
      "auto;padding:0 1em;color:#1a1a1a}h2{margin-top:2em;border-bottom:1px solid #ddd}\n"
      "table{border-collapse:collapse;font-size:.92em}td,th{border:1px solid #ddd;padding:.3em "
      ".6em;text-align:left}th{background:#f5f5f5}\n"
      ".ready{color:#0b6e2e;font-weight:600}.not-ready{color:#b00020;font-weight:600}"
      ".pending{color:#8a5a00;font-weight:600}svg{max-width:100%;height:auto}\n"
      "</style></head><body>\n<h1>Runs</h1>\n<p>" +
      std::to_string(runs.size()) + " runs of " + std::to_string(by_scenario.size()) +
      " scenarios, oldest first.</p>\n";
  for (auto& [scenario, list] : by_scenario) {
    std::sort(list.begin(), list.end(), [](const ReportModel* a, const ReportModel* b) {
      return a->run.started_unix_ms < b->run.started_unix_ms;
    });
    out += "<h2>" + e(scenario) +
           "</h2>\n<table><tr><th>#</th><th>run</th><th>status</th>"
           "<th>verdict</th><th>steady TTFT p95 (ms)</th><th>steady e2e p95 (ms)</th><th>holds "
           "up to</th><th>recovered after (s)</th><th>mean score</th></tr>\n";
    Series ttft{.name = "steady TTFT p95", .dots = true},
        e2e{.name = "steady e2e p95", .dots = true};
    for (size_t i = 0; i < list.size(); ++i) {
      const ReportModel& m = *list[i];
      const KeyFigures k = KeyFiguresOf(m);
      const std::string id = e(m.run.id);
      const std::string link =
          has_report(m.run.id) ? "<a href=\"" + id + "/report.html\">" + id + "</a>" : id;
      const std::string verdict_class(VerdictClass(m.verdict));
      out += "<tr><td>" + std::to_string(i + 1) + "</td><td>" + link + "</td><td>" +
             e(std::string(store::RunStatusName(m.run.status))) + "</td><td class=\"" +
             verdict_class + "\">" + e(std::string(Name(m.verdict))) + "</td><td>" +
             Figure(k.ttft_p95, 1) + "</td><td>" + Figure(k.e2e_p95, 1) + "</td><td>" +
             Figure(k.holds_up_to, 1) + "</td><td>" + Figure(k.recovered_s, 2) + "</td><td>" +
             Figure(k.mean_score, 2) + "</td></tr>\n";
      if (k.ttft_p95) ttft.points.push_back({static_cast<double>(i + 1), *k.ttft_p95});
      if (k.e2e_p95) e2e.points.push_back({static_cast<double>(i + 1), *k.e2e_p95});
    }
    out += "</table>\n";
    if (ttft.points.size() + e2e.points.size() > 1) {
      Chart trend{.title = scenario + ": steady latency, run by run",
                  .description =
                      "TTFT and e2e p95 at steady load on the final stage of each run, "
                      "numbered as in the table.",
                  .x_label = "run",
                  .y_label = "ms",
                  .series = {ttft, e2e}};
      out += "<figure>" + LineChartSvg(trend) + "</figure>\n";
    }
  }
  return out + "</body></html>\n";
}

}  // namespace stagegate::report
