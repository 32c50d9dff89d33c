#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/model.h"
#include "stats/compare.h"

namespace stagegate::report {

/// One metric of the current run against the baseline's, at steady load on the final stage.
struct MetricComparison {
  std::string metric;  // "TTFT p95", "e2e p95", "mean score"
  double baseline = 0, current = 0;
  std::optional<stats::DiffInterval> difference;  // current - baseline, 95% bootstrap interval
  std::optional<double> p_value;  // Mann-Whitney U (latency) or a permutation test (scores)
  bool worse = false;             // significantly worse: p < 0.05 and the interval excludes 0
  std::string line;               // "TTFT p95 is 180 ms worse, significant (p = 0.003)"
};

struct RunComparison {
  std::string baseline_id;
  bool comparable = true;
  bool allowed_incomparable = false;
  std::vector<std::string> differences;  // "model: sim-assistant 2026.11 / sim-assistant 2026.12"
  std::vector<MetricComparison> metrics;
  std::string verdict;  // "regression", "no regression" or "refused: the runs are not comparable"
};

/// Compares `current` with `baseline`: the facts that make runs comparable (model and version,
/// hardware, serving stack, sampling, corpus version, load profile, stages) and, when they
/// match or `allow_incomparable`, TTFT and e2e at steady load on the final stage (Mann-Whitney U,
/// bootstrap interval of the p95 difference) and the reviewers' mean score (permutation test).
RunComparison CompareRuns(const ReportModel& current, const ReportModel& baseline,
                          bool allow_incomparable);

nlohmann::json ComparisonJson(const RunComparison& comparison);
std::vector<std::string> ComparisonLines(const RunComparison& comparison);

/// The facts of a run that decide comparability, as label -> value.
std::vector<std::pair<std::string, std::string>> ComparableFacts(const ReportModel& model);

}  // namespace stagegate::report
