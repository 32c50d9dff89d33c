#pragma once

// The assistant against each baseline of the scenario (`baselines:`): the same reviewers scored
// both, blind, against the same rubric. Pure: the figures come from the scored answers given.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/compare.h"

namespace stagegate::quality {

/// One fully scored answer as the comparison reads it.
struct ComparedAnswer {
  std::string category;                // its task's, "" when the corpus cannot be read
  std::map<std::string, double> mean;  // criterion -> the reviewers' mean level
  double weighted = 0;                 // the weighted mean over the rubric's criteria
  bool passed = false;                 // against the rubric's pass rule and hard floors
  std::optional<double> seconds;       // e2e (assistant) or recorded time to resolution
};

/// assistant - baseline in one figure, with a 95% percentile-bootstrap interval (2,000 rounds,
/// a fixed seed, each side resampled on its own). No interval when a side has no answer.
struct Difference {
  std::string what;  // a criterion id, "weighted mean", "pass rate" or "category C"
  int64_t assistant_answers = 0, baseline_answers = 0;
  std::optional<double> assistant, baseline;  // each side's mean (or share passed)
  std::optional<stats::DiffInterval> difference;
};

/// The assistant against one baseline.
struct BaselineComparison {
  std::string baseline;
  std::vector<Difference> criteria;    // each rubric criterion, then "weighted mean"
  Difference pass_rate;                // the share of answers that pass
  std::vector<Difference> categories;  // the weighted mean, per task category
  /// Time to an answer, as information: the assistant's median e2e and the baseline's median
  /// time to an answer (recorded, or measured), in seconds (absent without any).
  std::optional<double> assistant_median_s, baseline_median_s;
  /// How the baseline's times came: "recorded" (its file's time to resolution), "measured at
  /// rest" (an endpoint the run asked), or "" when not known (the scenario not at hand).
  std::string baseline_times;
};

inline constexpr int kComparisonResamples = 2000;
inline constexpr uint64_t kComparisonSeed = 20261207;

/// Compares `assistant` with `baseline` on `criteria` (the rubric's, in order).
BaselineComparison CompareWithBaseline(const std::string& baseline,
                                       const std::vector<ComparedAnswer>& assistant,
                                       const std::vector<ComparedAnswer>& of_baseline,
                                       const std::vector<std::string>& criteria);

nlohmann::json ComparisonToJson(const BaselineComparison& c);
/// The lines `quality` and the report print, e.g. "  against baseline service-desk (14 answers;
/// the assistant 24): weighted mean +0.42 (95% bootstrap interval +0.05 to +0.8)".
std::vector<std::string> ComparisonLines(const BaselineComparison& c);

}  // namespace stagegate::quality
