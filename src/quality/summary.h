#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "manifest/bundle.h"
#include "quality/baseline_compare.h"
#include "quality/checks.h"
#include "quality/correction.h"
#include "quality/judge_calibration.h"
#include "stats/intervals.h"
#include "store/store.h"

namespace stagegate::quality {

/// Scores of one group of answers (all, at rest, under load, a stage, a category).
struct GroupScores {
  std::string name;
  int64_t answers = 0;                             // scored answers in the group
  std::map<std::string, double> mean;              // criterion -> mean of the answers' means
  std::map<std::string, stats::Interval> mean_ci;  // 95%, with 2 answers or more
  std::optional<double> weighted_mean;             // mean of the answers' weighted means
  std::optional<stats::Interval> weighted_mean_ci;
  int64_t passed = 0;  // answers passing the rubric's pass rule and hard floors
  std::optional<stats::Interval> pass_rate_ci;  // Wilson, 95%
  int64_t hard_floor_failures = 0;              // answers below the floor of a hard criterion
  int64_t by_judge = 0;  // of `answers`, those a calibrated judge scored instead of reviewers

  std::optional<double> pass_rate() const {
    return answers ? std::optional<double>(static_cast<double>(passed) / answers) : std::nullopt;
  }
};

struct CriterionAgreement {
  std::string criterion;
  int64_t units = 0;            // answers with two ratings or more
  std::optional<double> kappa;  // quadratic-weighted Cohen's kappa: exactly two reviewers
  std::optional<double> alpha_ordinal, alpha_interval;  // Krippendorff's alpha
  /// Every score given was the same level: the figures are undefined (no variation to agree
  /// on), but the reviewers never disagreed.
  bool all_same = false;
  /// The figure held against quality.min_agreement: kappa with two reviewers, else ordinal alpha.
  std::optional<double> figure() const { return kappa ? kappa : alpha_ordinal; }
};

/// An answer whose reviewers are more than one level apart on a criterion.
struct Adjudication {
  int64_t request_id = 0;
  std::string task_id;
  std::string criterion;
  std::map<std::string, int64_t> ratings;  // reviewer -> level
};

struct ReviewerEffort {
  std::string reviewer;  // "all" for everyone together
  int64_t items = 0;     // items with a recorded time
  double total_s = 0;
  std::optional<double> median_s;
};

/// The tool_call and no_tool_call checks of one condition (at rest or under load) of a stage.
struct ToolCallShare {
  int64_t passed = 0, run = 0;
  std::optional<stats::Interval> ci;        // Wilson, 95%, of passed / run; none when run is 0
  std::map<std::string, int64_t> failures;  // failure class -> checks failed
};

/// Tool-call correctness of one stage, at rest and under load.
struct ToolCallCorrectness {
  std::string stage;
  ToolCallShare at_rest, under_load;
};

struct AutomatedChecks {
  int64_t answers = 0, checks = 0, passed = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> by_kind;  // kind -> (passed, run)
  std::vector<std::string> failures;  // "answer 12 (hr-leave-carry-over): the answer does not ..."
  /// Each stage with a tool_call or no_tool_call check run, in the scenario's stage order.
  std::vector<ToolCallCorrectness> tool_calls;
};

/// pass: the scores meet every threshold; fail: one is missed on enough scored answers, or a
/// result no further score can change (an answer below a hard floor) whatever their number;
/// pending: it cannot be told yet (too few scores, an agreement that cannot be computed, nothing
/// exported).
enum class QualityVerdict { kPass, kFail, kPending };
std::string_view Name(QualityVerdict verdict);  // "pass", "fail", "pending"

/// Condition 2 of the release report: independent reviewers' scores, their agreement and effort,
/// and apart from them the corpus's automated checks.
struct QualitySummary {
  QualityVerdict verdict = QualityVerdict::kPending;
  /// Why not pass: first what is still missing (`pending_reasons` of them), then what failed.
  std::vector<std::string> reasons;
  int64_t pending_reasons = 0;
  int64_t sampled = 0, assigned = 0, scored = 0;  // answers
  int64_t needed = 0;  // answers to be scored before the scores decide (min_scored_answers)
  int64_t reviewers = 0;
  /// What the scores so far miss while fewer than `needed` answers are scored: not failures,
  /// since more scores can change them ("under load: mean score 2.83 < 3").
  std::vector<std::string> provisional_misses;
  std::vector<GroupScores> groups;  // "all", "at_rest", "under_load", "stage <s>", "category <c>"
  std::vector<CriterionAgreement> agreement;
  std::vector<Adjudication> adjudication;
  std::vector<ReviewerEffort> effort;
  /// Usability and correction effort by source, and the reviewers' hours with their projection.
  CorrectionSummary correction;
  /// The assistant against each baseline the reviewers scored (the scenario's `baselines:`).
  std::vector<BaselineComparison> baselines;
  AutomatedChecks automated;
  std::vector<GroupScores> judges;  // each LLM judge ("judge:<model>"), apart from the above
  /// Each LLM judge against the reviewers on the answers both scored, and quality.judge's gate.
  std::vector<JudgeCalibration> calibration;
  /// Of `scored`, the answers a calibrated judge (`judge_model`) scored instead of reviewers.
  int64_t scored_by_judge = 0;
  std::string judge_model;
  std::vector<double> answer_scores;  // each scored answer's weighted mean (for comparisons)
  /// Each answer its independent reviewers have all scored: request id -> whether it meets the
  /// rubric's pass rule and hard floors (the per-task gate rules read it).
  std::map<int64_t, bool> answer_passed;
  std::vector<std::string> notes;

  /// Whether the figures rest on fewer answers than are needed.
  bool Provisional() const { return scored < needed; }
  /// "provisional: from 7 of the 40 answers needed" when Provisional(), else "".
  std::string ProvisionalLabel() const;
};

/// Builds the summary of a run from the store: its sampled answers, exports and imported scores,
/// against the run's quality thresholds (from its stored scenario). `bundle` (the run's scenario
/// loaded again; may be null) gives task categories and the automated checks.
Result<QualitySummary> SummarizeQuality(store::Store& store, const store::RunInfo& run,
                                        const manifest::Bundle* bundle);

nlohmann::json QualityToJson(const QualitySummary& summary);
/// The summary for a terminal: verdict, groups, agreement, effort, automated checks.
std::vector<std::string> QualityLines(const QualitySummary& summary);

}  // namespace stagegate::quality
