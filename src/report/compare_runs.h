#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/model.h"
#include "stats/compare.h"

namespace stagegate::report {

/// Whether a difference is shown to be real. The p-value (a permutation test of the statistic's
/// difference) and the interval (a bootstrap of the same difference) come from resampling the
/// same samples; when they disagree (p < 0.05 but the interval includes 0, or the reverse) the
/// difference is undecided, never called significant or not.
enum class Significance { kSignificant, kNotSignificant, kUndecided };
std::string_view Name(Significance significance);  // "significant", "not significant", ...

/// One figure of the current run against the baseline's: a p95 at a load step, or the
/// reviewers' mean score.
struct MetricComparison {
  std::string metric;  // "TTFT p95 (full steady)", "mean score"
  std::string unit;    // "ms" or ""
  double baseline = 0, current = 0;
  int64_t baseline_n = 0, current_n = 0;          // the samples compared
  std::optional<stats::DiffInterval> difference;  // current - baseline, 95% bootstrap interval
  std::optional<stats::PermutationResult> test;   // permutation test of the same difference
  std::optional<double> shift_p;  // Mann-Whitney U of the whole distributions (latency)
  Significance significance = Significance::kUndecided;
  bool worse = false;  // significantly worse
  std::string line;    // "TTFT p95 (full steady) is 180 ms worse, significant (p = 0.003, ...)"
};

enum class ComparisonVerdict { kRegression, kNoRegression, kNothingCompared, kRefused };
std::string_view Name(ComparisonVerdict verdict);

struct RunComparison {
  std::string baseline_id;
  bool comparable = true;
  bool allowed_incomparable = false;
  std::vector<std::string> differences;  // every part of the configuration that differs
  std::vector<MetricComparison> metrics;
  ComparisonVerdict verdict = ComparisonVerdict::kNothingCompared;
};

/// Compares `current` with `baseline` (both built with chart data). They are comparable when no
/// part of their configuration differs (report/comparability.h); otherwise nothing is compared
/// unless `allow_incomparable`. Compared: TTFT and e2e p95 at steady load on the final stage (a
/// profile run: at every level both ran), each by a permutation test and a bootstrap interval of
/// the p95 difference with a Mann-Whitney U test of the whole distributions beside it, and the
/// reviewers' mean score (permutation test). "No regression" needs at least one figure compared.
RunComparison CompareRuns(const ReportModel& current, const ReportModel& baseline,
                          bool allow_incomparable);

nlohmann::json ComparisonJson(const RunComparison& comparison);
std::vector<std::string> ComparisonLines(const RunComparison& comparison);

/// The parts of a run's configuration that decide comparability, as label -> summary.
std::vector<std::pair<std::string, std::string>> ComparableFacts(const ReportModel& model);

}  // namespace stagegate::report
