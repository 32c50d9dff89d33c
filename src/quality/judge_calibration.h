#pragma once

// How far an LLM judge agrees with the independent reviewers, on the answers both scored, and
// whether that lets it score the answers the reviewers did not (`quality.judge`). Pure functions
// of levels: no store, no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/intervals.h"

namespace stagegate::quality {

/// The bootstrap of a judge's kappa: rounds drawn, and the seed that makes them reproducible.
inline constexpr int kJudgeKappaResamples = 2000;
inline constexpr uint64_t kJudgeKappaSeed = 0x5eed;

/// The reviewers' consensus on one answer and criterion: the median of their levels; with an
/// even number of levels, the lower of the two middle ones, so that it is always a level of the
/// scale and a split between reviewers never credits the answer with the better level. nullopt
/// for no levels.
std::optional<int64_t> ConsensusLevel(std::vector<int64_t> levels);

/// One criterion's levels of one answer: every reviewer's, and the judge's (its own consensus
/// when it scored the answer more than once).
struct ScoredTwice {
  std::vector<int64_t> reviewers;
  int64_t judge = 0;
};

/// The judge against the reviewers' consensus on one criterion.
struct CriterionCalibration {
  std::string criterion;
  std::vector<int64_t> levels;              // the criterion's scale, ascending
  int64_t overlap = 0;                      // answers both scored
  std::optional<double> kappa;              // quadratic-weighted, over the whole scale
  std::optional<stats::Interval> kappa_ci;  // 95% percentile bootstrap over the answers
  /// confusion[i][j]: answers whose consensus is levels[i] and whose judge level is levels[j].
  std::vector<std::vector<int64_t>> confusion;
  std::optional<double> mean_consensus, mean_judge;
  std::optional<double> bias;  // mean_judge - mean_consensus: > 0, the judge is more generous
};

/// `quality.judge` as the run's stored scenario holds it.
struct JudgeGateRule {
  std::string model;
  double min_kappa = 0.7;
  int64_t min_overlap = 50;
};

/// One judge model against the reviewers, per criterion, and the gate when the scenario names it.
struct JudgeCalibration {
  std::string scorer;  // "judge:<model>"
  std::string model;
  int64_t overlap = 0;  // answers both scored (fully, by every reviewer they were given to)
  std::vector<CriterionCalibration> criteria;
  std::optional<JudgeGateRule> gate;  // set when quality.judge names this model
  /// Whether the judge may score what reviewers did not: the gate is set and holds.
  bool calibrated = false;
  /// Why it does not hold: "overlap 12 < 50", "kappa lower bound 0.52 < 0.7 on correctness".
  std::vector<std::string> not_calibrated;
};

/// A criterion's id and scale (ascending levels).
struct CriterionScale {
  std::string id;
  std::vector<int64_t> levels;
};

/// The judge `scorer` against the reviewers: `by_criterion` holds, per criterion id, the levels
/// of each answer both scored. A criterion missing from it has no overlap. When `gate` names
/// this judge's model it is checked: every criterion needs at least min_overlap answers and a
/// kappa interval whose lower bound is at least min_kappa.
JudgeCalibration CalibrateJudge(const std::string& scorer, const std::vector<CriterionScale>& scale,
                                const std::map<std::string, std::vector<ScoredTwice>>& by_criterion,
                                const std::optional<JudgeGateRule>& gate);

/// The gate of `quality.judge` when no judge of that model scored this run.
JudgeCalibration UnscoredJudge(const JudgeGateRule& gate);

/// The gate in one line: "judge m calibrated: ..." or "judge m not calibrated: overlap 12 < 50;
/// ..."; "" when the scenario does not name this judge.
std::string GateLine(const JudgeCalibration& judge);

/// The calibration for a terminal and the report: per criterion the overlap, kappa with its
/// interval, bias and confusion matrix, then the gate's line.
std::vector<std::string> CalibrationLines(const JudgeCalibration& judge);
nlohmann::json CalibrationJson(const JudgeCalibration& judge);

}  // namespace stagegate::quality
