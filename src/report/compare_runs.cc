#include "report/compare_runs.h"

#include <algorithm>

#include "base/strings.h"
#include "report/comparability.h"
#include "stats/summary.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

constexpr int kResamples = 2000;
constexpr uint64_t kSeed = 0x5eed;  // comparisons are reproducible
constexpr double kAlpha = 0.05;

// The samples compared at each step: a scenario run's final stage at steady load, or every level
// of a profile run, keyed as ChartData keys them.
std::vector<std::string> ComparedSteps(const ReportModel& current, const ReportModel& baseline) {
  std::vector<std::string> steps;
  if (current.run.is_profile()) {
    for (const auto& [key, values] : current.charts.steady_ttft_ms)
      if (baseline.charts.steady_ttft_ms.contains(key)) steps.push_back(key);
    return steps;
  }
  const store::StageFindings* now = current.findings.FinalStage();
  const store::StageFindings* then = baseline.findings.FinalStage();
  if (now && then && now->name == then->name) steps.push_back(now->name);
  return steps;
}

Significance Decide(double p, const stats::DiffInterval& interval) {
  const bool p_says = p < kAlpha;
  const bool interval_says = interval.low > 0 || interval.high < 0;
  if (p_says && interval_says) return Significance::kSignificant;
  if (!p_says && !interval_says) return Significance::kNotSignificant;
  return Significance::kUndecided;
}

// "TTFT p95 (full) is 1 ms better, significant (p = 0.035, permutation test of the p95
// difference, 2000 resamples) [95% bootstrap interval -1.7 to -0.4]"
std::string LatencyLine(const MetricComparison& m) {
  std::string line =
      stats::DescribeDifference(m.metric, m.current - m.baseline, m.unit, true, std::nullopt);
  if (!m.test || !m.difference) return line;
  const std::string test =
      stats::DescribePValue(m.test->p_two_sided) + ", permutation test of the p95 difference, " +
      (m.test->exact ? "all " + std::to_string(m.test->permutations) + " reassignments"
                     : std::to_string(m.test->permutations) + " resamples");
  line += ", " + std::string(Name(m.significance)) + " (" + test + ")";
  if (m.significance == Significance::kUndecided)
    line += m.test->p_two_sided < kAlpha ? ": the interval includes 0"
                                         : ": the interval excludes 0 but the test does not";
  return line + " [95% bootstrap interval " + FormatNumber(m.difference->low, 1) + " to " +
         FormatNumber(m.difference->high, 1) + " " + m.unit + ", " + std::to_string(kResamples) +
         " resamples]";
}

std::optional<MetricComparison> CompareLatency(const std::string& metric,
                                               const std::vector<double>& now,
                                               const std::vector<double>& then) {
  if (now.empty() || then.empty()) return std::nullopt;
  MetricComparison m{.metric = metric,
                     .unit = "ms",
                     .baseline_n = static_cast<int64_t>(then.size()),
                     .current_n = static_cast<int64_t>(now.size())};
  m.difference = stats::BootstrapPercentileDiff(now, then, 95, kResamples, kSeed);
  m.test = stats::PermutationTestPercentile(now, then, 95, kResamples, kSeed);
  if (!m.difference || !m.test) return std::nullopt;
  std::vector<double> sorted_now = now, sorted_then = then;
  std::sort(sorted_now.begin(), sorted_now.end());
  std::sort(sorted_then.begin(), sorted_then.end());
  m.current = stats::PercentileOfSorted(sorted_now, 95);
  m.baseline = stats::PercentileOfSorted(sorted_then, 95);
  if (auto shift = stats::MannWhitneyU(now, then)) m.shift_p = shift->p_two_sided;
  m.significance = Decide(m.test->p_two_sided, *m.difference);
  m.worse = m.significance == Significance::kSignificant && m.current > m.baseline;
  m.line = LatencyLine(m);
  return m;
}

std::optional<MetricComparison> CompareScores(const std::vector<double>& a,
                                              const std::vector<double>& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  MetricComparison m{.metric = "mean score",
                     .baseline_n = static_cast<int64_t>(b.size()),
                     .current_n = static_cast<int64_t>(a.size())};
  double sum_a = 0, sum_b = 0;
  for (double v : a)
    sum_a += v;
  for (double v : b)
    sum_b += v;
  m.current = sum_a / static_cast<double>(a.size());
  m.baseline = sum_b / static_cast<double>(b.size());
  m.test = stats::PermutationTestMeans(a, b, kResamples, kSeed);
  const std::optional<double> p =
      m.test ? std::optional<double>(m.test->p_two_sided) : std::nullopt;
  m.significance = !p            ? Significance::kUndecided
                   : *p < kAlpha ? Significance::kSignificant
                                 : Significance::kNotSignificant;
  m.worse = m.significance == Significance::kSignificant && m.current < m.baseline;
  m.line = stats::DescribeDifference("mean score", m.current - m.baseline, "", false, p) +
           (m.test ? " [permutation test of the mean difference, " +
                         std::to_string(m.test->permutations) + " resamples]"
                   : "");
  return m;
}

}  // namespace

std::string_view Name(Significance significance) {
  switch (significance) {
    case Significance::kSignificant:
      return "significant";
    case Significance::kNotSignificant:
      return "not significant";
    case Significance::kUndecided:
      break;
  }
  return "undecided";
}

std::string_view Name(ComparisonVerdict verdict) {
  switch (verdict) {
    case ComparisonVerdict::kRegression:
      return "regression";
    case ComparisonVerdict::kNoRegression:
      return "no regression";
    case ComparisonVerdict::kRefused:
      return "refused: the runs are not comparable";
    case ComparisonVerdict::kNothingCompared:
      break;
  }
  return "nothing compared";
}

std::vector<std::pair<std::string, std::string>> ComparableFacts(const ReportModel& m) {
  std::vector<std::pair<std::string, std::string>> facts;
  for (const ComparablePart& part : ComparableParts(m.run))
    facts.push_back({part.label, part.summary});
  return facts;
}

RunComparison CompareRuns(const ReportModel& current, const ReportModel& baseline,
                          bool allow_incomparable) {
  RunComparison c{.baseline_id = baseline.run.id, .allowed_incomparable = allow_incomparable};
  c.differences = Differences(current.run, baseline.run);
  c.comparable = c.differences.empty();
  if (!c.comparable && !allow_incomparable) {
    c.verdict = ComparisonVerdict::kRefused;
    return c;
  }
  for (const std::string& step : ComparedSteps(current, baseline)) {
    for (const auto& [metric, pick] :
         {std::pair<const char*, const std::map<std::string, std::vector<double>> ChartData::*>{
              "TTFT p95", &ChartData::steady_ttft_ms},
          {"e2e p95", &ChartData::steady_e2e_ms}}) {
      const auto a = (current.charts.*pick).find(step);
      const auto b = (baseline.charts.*pick).find(step);
      if (a == (current.charts.*pick).end() || b == (baseline.charts.*pick).end()) continue;
      const std::string where = current.run.is_profile() ? step : step + " steady";
      if (auto m = CompareLatency(std::string(metric) + " (" + where + ")", a->second, b->second))
        c.metrics.push_back(std::move(*m));
    }
  }
  if (auto m = CompareScores(current.quality.answer_scores, baseline.quality.answer_scores))
    c.metrics.push_back(std::move(*m));
  const bool regression =
      std::any_of(c.metrics.begin(), c.metrics.end(), [](const auto& m) { return m.worse; });
  c.verdict = regression          ? ComparisonVerdict::kRegression
              : c.metrics.empty() ? ComparisonVerdict::kNothingCompared
                                  : ComparisonVerdict::kNoRegression;
  return c;
}

json ComparisonJson(const RunComparison& c) {
  json metrics = json::array();
  for (const MetricComparison& m : c.metrics)
    metrics.push_back(
        {{"metric", m.metric},
         {"baseline", m.baseline},
         {"current", m.current},
         {"baseline_n", m.baseline_n},
         {"current_n", m.current_n},
         {"difference", m.difference ? json({{"estimate", m.difference->estimate},
                                             {"ci95", {m.difference->low, m.difference->high}},
                                             {"resamples", kResamples}})
                                     : json(nullptr)},
         {"p_value", m.test ? json(m.test->p_two_sided) : json(nullptr)},
         {"test", m.test ? json({{"kind", m.unit.empty() ? "permutation test of the mean"
                                                         : "permutation test of the p95"},
                                 {"permutations", m.test->permutations},
                                 {"exact", m.test->exact}})
                         : json(nullptr)},
         {"mann_whitney_p", m.shift_p ? json(*m.shift_p) : json(nullptr)},
         {"significance", Name(m.significance)},
         {"significantly_worse", m.worse},
         {"line", m.line}});
  return {{"baseline", c.baseline_id},
          {"comparable", c.comparable},
          {"allowed_incomparable", c.allowed_incomparable},
          {"differences", c.differences},
          {"metrics", metrics},
          {"verdict", Name(c.verdict)}};
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
  if (!c.comparable && !c.allowed_incomparable) return lines;
  if (c.metrics.empty()) {
    lines.push_back("against " + c.baseline_id +
                    ": nothing compared: the runs share no steady-load step with successful "
                    "requests and no reviewers' scores");
    return lines;
  }
  std::vector<std::string> what;
  for (const MetricComparison& m : c.metrics)
    what.push_back(m.metric + " (" + std::to_string(m.current_n) + " against " +
                   std::to_string(m.baseline_n) + ")");
  lines.push_back("against " + c.baseline_id + ": " + std::string(Name(c.verdict)) + "; compared " +
                  Join(what, ", "));
  for (const MetricComparison& m : c.metrics) {
    lines.push_back("  " + m.line);
    if (m.shift_p)
      lines.push_back("    distribution shift (Mann-Whitney U of every value): " +
                      stats::DescribePValue(*m.shift_p));
  }
  return lines;
}

}  // namespace stagegate::report
