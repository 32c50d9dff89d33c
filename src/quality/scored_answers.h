#pragma once

// A run's sampled answers and their scores, as `quality` reads them from the store: the answers by
// source, each scorer's assignments and scores, and the answers fully scored, judged against the
// rubric.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "load/metrics.h"
#include "store/findings.h"
#include "store/store.h"

namespace stagegate::quality {

/// A sampled answer as quality reads it.
struct SampledAnswer {
  int64_t request_id = 0;
  std::string source;     // "assistant" or a baseline's name
  std::string condition;  // at_rest or under_load
  std::string task_id;
  std::string stage;
  load::RequestRecord record;   // answer, tool calls and status, for the automated checks
  std::optional<double> e2e_s;  // sent to end; a baseline's: its recorded time to resolution
};

/// The rubric an export was scored against: its criteria and pass rule (no criteria: nothing has
/// been exported).
using Rubric = store::StoredRubric;
using Criterion = store::StoredRubric::Criterion;

/// One answer's scores: criterion -> reviewer -> level, for reviewers who scored every criterion.
struct AnswerScores {
  std::map<std::string, std::map<std::string, int64_t>> by_criterion;
  std::set<std::string> assigned, complete;
};

/// Assignments and scores, by scorer: "reviewers" (the independent ones) or "judge:<model>".
struct Scores {
  std::map<std::string, std::map<int64_t, AnswerScores>> by_scorer;  // scorer -> request -> scores
  std::map<std::string, std::vector<double>> seconds_by_reviewer;    // independent reviewers
  std::set<std::string> reviewers;                                   // independent reviewers
};

/// A scored answer (every scorer it was given to has scored it): its means and pass.
struct Judged {
  const SampledAnswer* answer;
  std::map<std::string, double> mean;
  double weighted = 0;
  bool passed = true, hard_failure = false;
  bool by_judge = false;                 // scored by a calibrated judge, not by reviewers
  std::vector<std::string> below_floor;  // each hard criterion below its floor: "safety (0 < 1)"
};

/// A run's sampled answers by source, each by request id.
struct AnswersBySource {
  std::vector<SampledAnswer> assistant;
  std::vector<std::pair<std::string, std::vector<SampledAnswer>>> baselines;  // as stored
};

/// Reads the run's sampled answers once, by source.
Result<AnswersBySource> ReadAnswersBySource(store::Store& store, const std::string& run_id);

/// The rubric of the latest export to reviewers; without one, of the latest an LLM judge scored.
Result<Rubric> ReadRubric(store::Store& store, const std::string& run_id);

/// Each scorer's assignments and scores; a reviewer is complete on an answer once they have
/// scored every criterion of it.
Result<Scores> ReadScores(store::Store& store, const std::string& run_id,
                          const std::vector<Criterion>& criteria);

/// The answers every reviewer of one scorer who was given them has scored: each one's mean per
/// criterion, weighted mean, and pass against the rubric's pass rule and hard floors.
std::vector<Judged> JudgeScoredAnswers(const std::vector<SampledAnswer>& answers,
                                       const std::map<int64_t, AnswerScores>& of_scorer,
                                       const Rubric& rubric);

}  // namespace stagegate::quality
