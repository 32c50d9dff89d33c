#include "quality/task_rules.h"

#include <algorithm>
#include <tuple>

namespace stagegate::quality {
namespace {

// Whether `answer` fails, and if so why.
std::optional<std::string> FailureOf(const JudgedTaskAnswer& answer) {
  const std::string which =
      "answer " + std::to_string(answer.request_id) + " (" + answer.where + "): ";
  if (!answer.failed_checks.empty()) return which + answer.failed_checks.front();
  if (answer.reviewers_passed == false)
    return which + "its reviewers' scores miss the rubric's pass rule";
  return std::nullopt;
}

// The latest quality decision on a run, if any (sign-offs are oldest first).
const store::Signoff* LatestQualityDecision(const std::vector<store::Signoff>& signoffs) {
  const store::Signoff* latest = nullptr;
  for (const store::Signoff& s : signoffs)
    if (s.condition == "quality" && (!latest || s.id > latest->id)) latest = &s;
  return latest;
}

void AddRegressionFindings(const TaskRulesInput& in, TaskRules& rules) {
  if (!in.approved) {
    rules.pending.push_back(
        "no regression from the approved run: no earlier run of this fingerprint has its quality "
        "accepted by an owner (stagegate signoff RUN --condition quality --decision accept)");
    return;
  }
  std::vector<TaskFinding> missing;
  for (const std::string& id : in.corpus_tasks) {
    const auto now = in.outcomes.find(id);
    const auto then = in.approved_outcomes.find(id);
    const TaskResult result =
        now == in.outcomes.end() ? TaskResult::kNotCovered : now->second.result;
    const bool passed_then =
        then != in.approved_outcomes.end() && then->second.result == TaskResult::kPassed;
    if (passed_then) ++rules.compared;
    if (result == TaskResult::kNotCovered) {
      missing.push_back({.kind = TaskFindingKind::kMissing,
                         .task_id = id,
                         .evidence = "the run has no answer of it"});
    } else if (passed_then && result == TaskResult::kFailed) {
      rules.findings.push_back(
          {.kind = TaskFindingKind::kRegressed,
           .task_id = id,
           .evidence = "passed in " + in.approved->run_id + "; now " + now->second.evidence,
           .trace_id = now->second.trace_id});
    } else if (passed_then && result == TaskResult::kUndecided) {
      rules.pending.push_back("task " + id + ": passed in " + in.approved->run_id +
                              ", not yet judged in this run");
    }
  }
  rules.findings.insert(rules.findings.end(), missing.begin(), missing.end());
}

void AddRequiredFindings(const TaskRulesInput& in, TaskRules& rules) {
  for (const std::string& id : in.corpus_tasks) {
    if (!in.required.contains(id)) continue;
    const auto found = in.outcomes.find(id);
    const TaskOutcome outcome =
        found == in.outcomes.end() ? TaskOutcome{.task_id = id} : found->second;
    switch (outcome.result) {
      case TaskResult::kPassed:
        ++rules.required_passed;
        break;
      case TaskResult::kFailed:
        rules.findings.push_back({.kind = TaskFindingKind::kRequiredFailed,
                                  .task_id = id,
                                  .evidence = outcome.evidence,
                                  .trace_id = outcome.trace_id});
        break;
      case TaskResult::kUndecided:
        rules.pending.push_back("required task " + id +
                                ": answered, but no automated check or complete score has judged "
                                "it yet");
        break;
      case TaskResult::kNotCovered:
        rules.findings.push_back(
            {.kind = TaskFindingKind::kRequiredNotCovered,
             .task_id = id,
             .evidence = "the run has no answer of it (it was not sent, or never answered, in the "
                         "phases answers are sampled from)"});
        break;
    }
  }
}

}  // namespace

std::string_view Name(TaskResult result) {
  switch (result) {
    case TaskResult::kPassed:
      return "passed";
    case TaskResult::kFailed:
      return "failed";
    case TaskResult::kUndecided:
      return "undecided";
    case TaskResult::kNotCovered:
      return "not covered";
  }
  return "?";
}

std::string_view Name(TaskFindingKind kind) {
  switch (kind) {
    case TaskFindingKind::kRegressed:
      return "regressed";
    case TaskFindingKind::kMissing:
      return "missing";
    case TaskFindingKind::kRequiredFailed:
      return "required failed";
    case TaskFindingKind::kRequiredNotCovered:
      return "required not covered";
  }
  return "?";
}

std::map<std::string, TaskOutcome> TaskOutcomes(const std::vector<std::string>& corpus_tasks,
                                                const std::vector<JudgedTaskAnswer>& answers) {
  std::map<std::string, TaskOutcome> outcomes;
  for (const std::string& id : corpus_tasks)
    outcomes[id] = {.task_id = id};
  for (const JudgedTaskAnswer& answer : answers) {
    auto found = outcomes.find(answer.task_id);
    if (found == outcomes.end()) continue;  // a task the corpus no longer has
    TaskOutcome& o = found->second;
    if (o.answers++ == 0) {
      o.result = TaskResult::kUndecided;
      o.trace_id = answer.trace_id;
    }
    if (o.result == TaskResult::kFailed) continue;  // the first failure is the evidence
    if (std::optional<std::string> failure = FailureOf(answer)) {
      o.result = TaskResult::kFailed;
      o.evidence = *failure;
      o.trace_id = answer.trace_id;
    } else if (answer.checks > 0 || answer.reviewers_passed) {
      o.result = TaskResult::kPassed;
    }
  }
  return outcomes;
}

std::optional<ApprovedRun> FindApprovedRun(const std::vector<RunCandidate>& candidates,
                                           const RunCandidate& run) {
  const RunCandidate* best = nullptr;
  const store::Signoff* best_decision = nullptr;
  const auto order = [](const RunCandidate& c) { return std::tie(c.started_unix_ms, c.run_id); };
  for (const RunCandidate& c : candidates) {
    if (c.fingerprint != run.fingerprint || c.run_id == run.run_id) continue;
    if (order(c) >= order(run)) continue;  // a later run never judges an earlier one
    const store::Signoff* decision = LatestQualityDecision(c.signoffs);
    if (!decision || decision->decision != "accept") continue;
    if (!best || order(c) > order(*best)) {
      best = &c;
      best_decision = decision;
    }
  }
  if (!best) return std::nullopt;
  return ApprovedRun{.run_id = best->run_id,
                     .accepted_by = best_decision->signed_by,
                     .accepted_unix_ms = best_decision->signed_unix_ms};
}

TaskRules ApplyTaskRules(const TaskRulesInput& in) {
  TaskRules rules{.required_rule = !in.required.empty(),
                  .regression_rule = in.no_regression_from_approved,
                  .approved = in.no_regression_from_approved ? in.approved : std::nullopt};
  if (rules.regression_rule) AddRegressionFindings(in, rules);
  if (rules.required_rule) AddRequiredFindings(in, rules);
  return rules;
}

}  // namespace stagegate::quality
