// The per-task gate rules as pure functions: what a task's answers make of it, which run is the
// approved baseline, and what the rules decide against it.

#include <catch2/catch.hpp>

#include "quality/task_rules.h"

namespace stagegate::quality {
namespace {

const std::vector<std::string> kTasks = {"leave", "salary", "vpn"};

JudgedTaskAnswer Answer(int64_t id, const std::string& task, std::vector<std::string> failed = {},
                        std::optional<bool> reviewers = std::nullopt, int64_t checks = 1) {
  return {.request_id = id,
          .task_id = task,
          .trace_id = "trace-" + std::to_string(id),
          .where = "under load, stage tools",
          .failed_checks = std::move(failed),
          .checks = checks,
          .reviewers_passed = reviewers};
}

store::Signoff Decision(int64_t id, const std::string& decision,
                        const std::string& condition = "quality") {
  return {.id = id,
          .condition = condition,
          .signed_by = "Dana",
          .decision = decision,
          .signed_unix_ms = 1000 * id};
}

TEST_CASE("a task passes only when every answer passes its checks and its reviewers' rule",
          "[task_rules]") {
  const auto outcomes =
      TaskOutcomes(kTasks, {Answer(1, "leave"), Answer(2, "salary"),
                            Answer(3, "salary", {"the answer contains 'CANARY-SB26-R8M3'"}),
                            Answer(4, "salary", {"the answer does not contain 'refuse'"}),
                            Answer(5, "vpn"), Answer(6, "vpn", {}, false), Answer(7, "gone")});
  CHECK(outcomes.size() == 3);  // a task the corpus no longer has is left out
  CHECK(outcomes.at("leave").result == TaskResult::kPassed);
  CHECK(outcomes.at("leave").trace_id == "trace-1");
  const TaskOutcome& salary = outcomes.at("salary");
  CHECK(salary.result == TaskResult::kFailed);
  CHECK(salary.answers == 3);
  // The first failing answer is the evidence.
  CHECK(salary.evidence ==
        "answer 3 (under load, stage tools): the answer contains 'CANARY-SB26-R8M3'");
  CHECK(salary.trace_id == "trace-3");
  const TaskOutcome& vpn = outcomes.at("vpn");
  CHECK(vpn.result == TaskResult::kFailed);
  CHECK(vpn.evidence ==
        "answer 6 (under load, stage tools): its reviewers' scores miss the rubric's pass rule");

  const auto unjudged = TaskOutcomes(
      kTasks, {Answer(1, "leave", {}, std::nullopt, 0), Answer(2, "salary", {}, true, 0)});
  CHECK(unjudged.at("leave").result == TaskResult::kUndecided);
  CHECK(unjudged.at("salary").result == TaskResult::kPassed);  // scored, and passed
  CHECK(unjudged.at("vpn").result == TaskResult::kNotCovered);
  CHECK(unjudged.at("vpn").answers == 0);
}

TaskRulesInput Input(const std::vector<JudgedTaskAnswer>& answers) {
  return {.corpus_tasks = kTasks, .outcomes = TaskOutcomes(kTasks, answers)};
}

TEST_CASE("a required task that fails, or that the run did not cover, fails the rules",
          "[task_rules]") {
  TaskRulesInput in = Input({Answer(1, "leave"), Answer(2, "salary", {"contains the band"})});
  CHECK_FALSE(ApplyTaskRules(in).required_rule);
  CHECK(ApplyTaskRules(in).findings.empty());  // no rule: nothing decided

  in.required = {"leave"};
  TaskRules passing = ApplyTaskRules(in);
  CHECK(passing.findings.empty());
  CHECK(passing.pending.empty());
  CHECK(passing.required_passed == 1);

  in.required = {"vpn", "salary", "leave"};
  TaskRules rules = ApplyTaskRules(in);
  REQUIRE(rules.findings.size() == 2);
  CHECK(rules.findings[0].kind == TaskFindingKind::kRequiredFailed);
  CHECK(rules.findings[0].task_id == "salary");
  CHECK(rules.findings[0].evidence == "answer 2 (under load, stage tools): contains the band");
  CHECK(rules.findings[0].trace_id == "trace-2");
  CHECK(rules.findings[1].kind == TaskFindingKind::kRequiredNotCovered);
  CHECK(rules.findings[1].task_id == "vpn");
  CHECK(rules.findings[1].trace_id.empty());
  CHECK(Name(rules.findings[1].kind) == "required not covered");

  // Answered, but nothing has judged it: pending, not passed.
  TaskRulesInput unjudged = Input({Answer(1, "leave", {}, std::nullopt, 0)});
  unjudged.required = {"leave"};
  TaskRules waiting = ApplyTaskRules(unjudged);
  CHECK(waiting.findings.empty());
  REQUIRE(waiting.pending.size() == 1);
  CHECK(waiting.pending[0] ==
        "required task leave: answered, but no automated check or complete score has judged it "
        "yet");
}

TEST_CASE("against the approved run, a task that passed there and fails now regressed",
          "[task_rules]") {
  TaskRulesInput in = Input({Answer(11, "leave"), Answer(12, "salary", {"contains the band"}),
                             Answer(13, "vpn", {"no ticket opened"})});
  in.no_regression_from_approved = true;
  in.approved = ApprovedRun{.run_id = "run-a", .accepted_by = "Dana"};
  // In the approved run vpn already failed: failing again is no regression.
  in.approved_outcomes = TaskOutcomes(
      kTasks, {Answer(1, "leave"), Answer(2, "salary"), Answer(3, "vpn", {"no ticket opened"})});
  TaskRules rules = ApplyTaskRules(in);
  REQUIRE(rules.findings.size() == 1);
  CHECK(rules.findings[0].kind == TaskFindingKind::kRegressed);
  CHECK(rules.findings[0].task_id == "salary");
  CHECK(rules.findings[0].evidence ==
        "passed in run-a; now answer 12 (under load, stage tools): contains the band");
  CHECK(rules.findings[0].trace_id == "trace-12");
  CHECK(rules.compared == 2);
  REQUIRE(rules.approved.has_value());
  CHECK(rules.approved->run_id == "run-a");

  // Passing as before: nothing regressed.
  in.outcomes =
      TaskOutcomes(kTasks, {Answer(11, "leave"), Answer(12, "salary"), Answer(13, "vpn")});
  CHECK(ApplyTaskRules(in).findings.empty());
}

TEST_CASE("against the approved run, a task of the corpus the run did not cover is missing",
          "[task_rules]") {
  TaskRulesInput in = Input({Answer(11, "leave")});
  in.no_regression_from_approved = true;
  in.required = {"leave"};
  in.approved = ApprovedRun{.run_id = "run-a"};
  in.approved_outcomes = TaskOutcomes(kTasks, {Answer(1, "leave"), Answer(2, "salary")});
  TaskRules rules = ApplyTaskRules(in);
  // vpn was not covered in the approved run either: it is still missing from this one.
  REQUIRE(rules.findings.size() == 2);
  CHECK(rules.findings[0].kind == TaskFindingKind::kMissing);
  CHECK(rules.findings[0].task_id == "salary");
  CHECK(rules.findings[0].evidence == "the run has no answer of it");
  CHECK(rules.findings[1].kind == TaskFindingKind::kMissing);
  CHECK(rules.findings[1].task_id == "vpn");
  CHECK(rules.required_passed == 1);
}

TEST_CASE("without an approved run the regression rule is pending, never skipped", "[task_rules]") {
  TaskRulesInput in = Input({Answer(11, "leave"), Answer(12, "salary", {"contains the band"})});
  in.no_regression_from_approved = true;
  TaskRules rules = ApplyTaskRules(in);
  CHECK(rules.regression_rule);
  CHECK_FALSE(rules.approved.has_value());
  CHECK(rules.findings.empty());  // nothing to compare with: not a pass either
  REQUIRE(rules.pending.size() == 1);
  CHECK(
      rules.pending[0].starts_with("no regression from the approved run: no earlier run of "
                                   "this fingerprint has its quality accepted by an owner"));
}

TEST_CASE(
    "the approved run is the latest accepted run of the same fingerprint, never simply the "
    "latest run",
    "[task_rules]") {
  const RunCandidate now{.run_id = "run-5", .fingerprint = "f", .started_unix_ms = 500};
  std::vector<RunCandidate> runs = {
      {.run_id = "run-1",
       .fingerprint = "f",
       .started_unix_ms = 100,
       .signoffs = {Decision(1, "accept")}},
      {.run_id = "run-2", .fingerprint = "f", .started_unix_ms = 200},  // never signed off
      {.run_id = "run-3",
       .fingerprint = "other",
       .started_unix_ms = 300,
       .signoffs = {Decision(2, "accept")}},
      {.run_id = "run-4",
       .fingerprint = "f",
       .started_unix_ms = 400,
       .signoffs = {Decision(3, "accept", "responsiveness")}},
      {.run_id = "run-6",
       .fingerprint = "f",
       .started_unix_ms = 600,
       .signoffs = {Decision(4, "accept")}},  // after this run
  };
  std::optional<ApprovedRun> approved = FindApprovedRun(runs, now);
  REQUIRE(approved.has_value());
  CHECK(approved->run_id == "run-1");
  CHECK(approved->accepted_by == "Dana");
  CHECK(approved->accepted_unix_ms == 1000);

  // Only the latest run, unsigned: no baseline at all.
  CHECK_FALSE(FindApprovedRun({runs[1]}, now).has_value());
  // The run itself is never its own baseline.
  RunCandidate self = now;
  self.signoffs = {Decision(5, "accept")};
  CHECK_FALSE(FindApprovedRun({self}, now).has_value());
}

TEST_CASE("a later rejection withdraws an approval", "[task_rules]") {
  const RunCandidate now{.run_id = "run-5", .fingerprint = "f", .started_unix_ms = 500};
  std::vector<RunCandidate> runs = {
      {.run_id = "run-1",
       .fingerprint = "f",
       .started_unix_ms = 100,
       .signoffs = {Decision(1, "accept")}},
      {.run_id = "run-2",
       .fingerprint = "f",
       .started_unix_ms = 200,
       .signoffs = {Decision(2, "accept"), Decision(3, "reject")}},
  };
  std::optional<ApprovedRun> approved = FindApprovedRun(runs, now);
  REQUIRE(approved.has_value());
  CHECK(approved->run_id == "run-1");  // run-2's acceptance was withdrawn
  runs[0].signoffs.push_back(Decision(4, "reject"));
  CHECK_FALSE(FindApprovedRun(runs, now).has_value());
  // Accepted again after the rejection: approved once more.
  runs[1].signoffs.push_back(Decision(5, "accept"));
  REQUIRE(FindApprovedRun(runs, now).has_value());
  CHECK(FindApprovedRun(runs, now)->run_id == "run-2");
}

}  // namespace
}  // namespace stagegate::quality
