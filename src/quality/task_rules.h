#pragma once

// Per-task gate rules of condition 2 (quality): a task the corpus marks `required: true` must
// pass in every run, and with `quality.no_regression_from: approved` each task is compared with
// the same task in the run an owner last accepted. Pure functions over plain values: the store
// and report wiring is in report/task_rules_report.h.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace stagegate::quality {

/// One answer a task got in a run (store::TaskAnswer), judged.
struct JudgedTaskAnswer {
  int64_t request_id = 0;
  std::string task_id;
  std::string trace_id;
  std::string where;                       // "at rest, stage tools" or "under load, stage tools"
  std::vector<std::string> failed_checks;  // each failed automated check, in plain words
  int64_t checks = 0;                      // automated checks run on it
  std::optional<bool> reviewers_passed;    // set once its independent reviewers have all scored
};

/// passed: every answer of the task passed every automated check, and every scored one its
/// reviewers' pass rule; failed: one did not; undecided: it was answered, but nothing has judged
/// an answer yet (no automated checks, no complete scores); not_covered: no answer in the run.
enum class TaskResult { kPassed, kFailed, kUndecided, kNotCovered };
std::string_view Name(TaskResult result);  // "passed", "failed", "undecided", "not covered"

/// What a run shows of one task.
struct TaskOutcome {
  std::string task_id;
  TaskResult result = TaskResult::kNotCovered;
  int64_t answers = 0;
  /// failed: the first failure ("answer 12 (under load, stage tools): the answer does not
  /// contain '47,000'"); else "".
  std::string evidence;
  std::string trace_id;  // of the failing answer when failed, else of the first answer; or ""
};

/// Each task of `corpus_tasks` with what `answers` show of it.
std::map<std::string, TaskOutcome> TaskOutcomes(const std::vector<std::string>& corpus_tasks,
                                                const std::vector<JudgedTaskAnswer>& answers);

/// A run an owner accepted the quality of: the baseline of `no_regression_from: approved`.
struct ApprovedRun {
  std::string run_id;
  std::string accepted_by;
  int64_t accepted_unix_ms = 0;
};

/// A stored run, with its sign-offs, as a candidate baseline.
struct RunCandidate {
  std::string run_id;
  std::string fingerprint;
  int64_t started_unix_ms = 0;
  std::vector<store::Signoff> signoffs;  // oldest first
};

/// The most recent run before `run` with the same fingerprint whose latest quality decision is
/// an acceptance (a later rejection withdraws it); none when no such run exists. A run merely
/// being the latest never makes it the baseline.
std::optional<ApprovedRun> FindApprovedRun(const std::vector<RunCandidate>& candidates,
                                           const RunCandidate& run);

enum class TaskFindingKind { kRegressed, kMissing, kRequiredFailed, kRequiredNotCovered };
/// "regressed", "missing", "required failed", "required not covered"
std::string_view Name(TaskFindingKind kind);

/// A task that makes condition 2 fail.
struct TaskFinding {
  TaskFindingKind kind = TaskFindingKind::kRegressed;
  std::string task_id;
  std::string evidence;  // why, in plain words
  std::string trace_id;  // of the failing answer, when there is one
};

struct TaskRulesInput {
  std::vector<std::string> corpus_tasks;  // in the corpus's order
  std::set<std::string> required;
  bool no_regression_from_approved = false;
  std::map<std::string, TaskOutcome> outcomes;  // this run's (TaskOutcomes)
  std::optional<ApprovedRun> approved;          // FindApprovedRun's
  std::map<std::string, TaskOutcome> approved_outcomes;
};

/// What the rules decide for a run.
struct TaskRules {
  bool required_rule = false;    // the corpus has a required task
  bool regression_rule = false;  // no_regression_from: approved
  std::optional<ApprovedRun> approved;
  /// Regressed first, then missing, then required tasks that failed or were not covered; each
  /// kind in the corpus's task order.
  std::vector<TaskFinding> findings;
  /// What cannot be decided yet: the regression rule without an approved run; a required task
  /// answered but not yet judged.
  std::vector<std::string> pending;
  int64_t required_passed = 0, compared = 0;  // for the report's summary line
};

/// Applies both rules: a required task fails unless it passed in this run (not covered is a
/// failure of its own kind; undecided is pending). Against an approved run, a task that passed
/// there and failed here regressed, and a task of the corpus this run did not cover is missing;
/// without an approved run the rule is pending, never skipped.
TaskRules ApplyTaskRules(const TaskRulesInput& in);

}  // namespace stagegate::quality
