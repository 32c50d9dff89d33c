#include "report/compare_runs.h"

#include <algorithm>

#include "base/strings.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

constexpr int kResamples = 2000;
constexpr uint64_t kSeed = 0x5eed;  // comparisons are reproducible
constexpr double kAlpha = 0.05;

// The load phases in a line: "warmup 2 concurrent, 6 requests; steady poisson 3/s for 12 s; ...".
std::string LoadProfile(const json& phases) {
  std::vector<std::string> parts;
  for (const json& p : phases) {
    std::string text = p.value("kind", "");
    const auto number = [&](const char* key) {
      return p.contains(key) && p[key].is_number() ? FormatNumber(p[key].get<double>())
                                                   : std::string();
    };
    std::vector<std::string> levels;
    for (const char* key : {"rates", "concurrencies"})
      for (const json& level : p.value(key, json::array()))
        levels.push_back(FormatNumber(level.get<double>()));
    if (!levels.empty())
      text += " " + Join(levels, "/") +
              (p.value("rates", json::array()).empty() ? " concurrent" : "/s");
    else if (!number("rate").empty())
      text += " " + p.value("arrival", std::string()) + " " + number("rate") + "/s";
    else if (!number("concurrency").empty())
      text += " " + number("concurrency") + " concurrent";
    if (!number("duration_s").empty()) text += " for " + number("duration_s") + " s";
    if (!number("requests").empty()) text += ", " + number("requests") + " requests";
    if (!p.value("spikes", json::array()).empty()) text += " with spikes";
    parts.push_back(text);
  }
  return Join(parts, "; ");
}

std::string FinalStageName(const json& findings) {
  const json* stage = FinalStage(findings);
  return stage != nullptr ? stage->value("name", "") : "";
}

double P95(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const double rank = 0.95 * static_cast<double>(values.size() - 1);
  const size_t low = static_cast<size_t>(rank);
  const size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (values[high] - values[low]) * (rank - static_cast<double>(low));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ComparableFacts(const ReportModel& m) {
  const json manifest = m.findings.value("manifest", json::object());
  const json scenario_manifest = m.scenario.value("manifest", json::object());
  std::vector<std::pair<std::string, std::string>> facts = {
      {"corpus version", m.run.corpus_version},
      {"model", manifest.value("model", std::string()) + " " +
                    manifest.value("model_version", std::string())},
      {"hardware", manifest.value("hardware", std::string())},
      {"serving stack", manifest.value("serving_stack", std::string())},
      {"sampling", scenario_manifest.contains("sampling") ? scenario_manifest["sampling"].dump()
                                                          : std::string()},
      {"load profile",
       m.scenario.contains("phases") ? LoadProfile(m.scenario["phases"]) : std::string()},
  };
  std::vector<std::string> stages;
  if (m.findings.contains("stages"))
    for (const json& s : m.findings["stages"])
      stages.push_back(s.value("name", "") + (s.value("skipped", false) ? " (skipped)" : ""));
  facts.push_back({"stages", Join(stages, " -> ")});
  return facts;
}

RunComparison CompareRuns(const ReportModel& current, const ReportModel& baseline,
                          bool allow_incomparable) {
  RunComparison c{.baseline_id = baseline.run.id, .allowed_incomparable = allow_incomparable};
  const auto now = ComparableFacts(current), then = ComparableFacts(baseline);
  for (size_t i = 0; i < now.size(); ++i)
    if (now[i].second != then[i].second)
      c.differences.push_back(now[i].first + ": " + then[i].second + " (baseline) / " +
                              now[i].second + " (this run)");
  c.comparable = c.differences.empty();
  if (!c.comparable && !allow_incomparable) {
    c.verdict = "refused: the runs are not comparable";
    return c;
  }

  // Latency at steady load on the final stage.
  const std::string stage_now = FinalStageName(current.findings);
  const std::string stage_then = FinalStageName(baseline.findings);
  for (const auto& [metric, pick] :
       {std::pair<const char*, const std::map<std::string, std::vector<double>> ChartData::*>{
            "TTFT p95", &ChartData::steady_ttft_ms},
        {"e2e p95", &ChartData::steady_e2e_ms}}) {
    const auto a = (current.charts.*pick).find(stage_now);
    const auto b = (baseline.charts.*pick).find(stage_then);
    if (a == (current.charts.*pick).end() || b == (baseline.charts.*pick).end() ||
        a->second.empty() || b->second.empty())
      continue;
    MetricComparison m{.metric = metric, .baseline = P95(b->second), .current = P95(a->second)};
    m.difference = stats::BootstrapPercentileDiff(a->second, b->second, 95, kResamples, kSeed);
    if (auto test = stats::MannWhitneyU(a->second, b->second)) m.p_value = test->p_two_sided;
    m.worse = m.p_value && *m.p_value < kAlpha && m.difference && m.difference->low > 0;
    m.line = stats::DescribeDifference(metric, m.current - m.baseline, "ms", true, m.p_value);
    c.metrics.push_back(std::move(m));
  }
  // The reviewers' mean score.
  const std::vector<double>& a = current.quality.answer_scores;
  const std::vector<double>& b = baseline.quality.answer_scores;
  if (!a.empty() && !b.empty()) {
    MetricComparison m{.metric = "mean score"};
    double sum_a = 0, sum_b = 0;
    for (double v : a)
      sum_a += v;
    for (double v : b)
      sum_b += v;
    m.current = sum_a / static_cast<double>(a.size());
    m.baseline = sum_b / static_cast<double>(b.size());
    if (auto test = stats::PermutationTestMeans(a, b, kResamples, kSeed))
      m.p_value = test->p_two_sided;
    m.worse = m.p_value && *m.p_value < kAlpha && m.current < m.baseline;
    m.line = stats::DescribeDifference("mean score", m.current - m.baseline, "", false, m.p_value);
    c.metrics.push_back(std::move(m));
  }
  const bool regression =
      std::any_of(c.metrics.begin(), c.metrics.end(), [](const auto& m) { return m.worse; });
  c.verdict = regression ? "regression" : "no regression";
  return c;
}

json ComparisonJson(const RunComparison& c) {
  json metrics = json::array();
  for (const MetricComparison& m : c.metrics)
    metrics.push_back(
        {{"metric", m.metric},
         {"baseline", m.baseline},
         {"current", m.current},
         {"difference", m.difference ? json({{"estimate", m.difference->estimate},
                                             {"ci95", {m.difference->low, m.difference->high}}})
                                     : json(nullptr)},
         {"p_value", m.p_value ? json(*m.p_value) : json(nullptr)},
         {"significantly_worse", m.worse},
         {"line", m.line}});
  return {{"baseline", c.baseline_id},
          {"comparable", c.comparable},
          {"allowed_incomparable", c.allowed_incomparable},
          {"differences", c.differences},
          {"metrics", metrics},
          {"verdict", c.verdict}};
}

std::vector<std::string> ComparisonLines(const RunComparison& c) {
  std::vector<std::string> lines;
  if (!c.comparable)
    lines.push_back(c.allowed_incomparable
                        ? "WARNING: compared with " + c.baseline_id +
                              " although the runs are not comparable (--allow-incomparable):"
                        : "not compared with " + c.baseline_id +
                              ": the runs are not comparable (give --allow-incomparable to "
                              "compare anyway):");
  for (const std::string& difference : c.differences)
    lines.push_back("  " + difference);
  if (c.comparable || c.allowed_incomparable) {
    lines.push_back("against " + c.baseline_id + ": " + c.verdict);
    for (const MetricComparison& m : c.metrics)
      lines.push_back("  " + m.line +
                      (m.difference ? " [95% interval " + FormatNumber(m.difference->low, 1) +
                                          " to " + FormatNumber(m.difference->high, 1) + "]"
                                    : ""));
  }
  return lines;
}

}  // namespace stagegate::report
