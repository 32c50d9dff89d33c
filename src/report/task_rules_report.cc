#include "report/task_rules_report.h"

#include <set>

#include "quality/checks.h"
#include "quality/task_rules.h"

namespace stagegate::report {
namespace {

// "1 required task passed", "2 required tasks passed".
std::string Tasks(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

using json = nlohmann::json;

// What each answer of `run_id`'s tasks shows, judged by the corpus's checks and the reviewers'
// pass of the answers they scored (`answer_passed`).
Result<std::map<std::string, quality::TaskOutcome>> OutcomesOf(
    store::Store& store, const std::string& run_id, const manifest::Bundle& bundle,
    const std::map<int64_t, bool>& answer_passed) {
  Result<std::vector<store::TaskAnswer>> stored = store.ListTaskAnswers(run_id);
  if (!stored.ok()) return stored.status();
  std::vector<quality::JudgedTaskAnswer> judged;
  for (const store::TaskAnswer& a : *stored) {
    const manifest::Task* task = bundle.corpus->FindTask(a.task_id);
    if (!task) continue;
    load::RequestRecord record;
    record.answer_text = a.answer_text;
    record.tool_calls_json = a.tool_calls_json;
    record.http_status = a.http_status;
    quality::JudgedTaskAnswer j{
        .request_id = a.request_id,
        .task_id = a.task_id,
        .trace_id = a.trace_id,
        .where = std::string(a.condition == "at_rest" ? "at rest" : "under load") + ", stage " +
                 a.stage};
    for (const quality::CheckResult& r :
         quality::RunChecks(*task, record, bundle.scenario.triage.refusal_patterns)) {
      ++j.checks;
      if (!r.passed) j.failed_checks.push_back(r.detail);
    }
    if (auto found = answer_passed.find(a.request_id); found != answer_passed.end())
      j.reviewers_passed = found->second;
    judged.push_back(std::move(j));
  }
  return quality::TaskOutcomes(bundle.corpus->TaskIds(), judged);
}

// The approved run of the same fingerprint, if any, with its outcomes in `outcomes`.
Result<std::optional<quality::ApprovedRun>> ApprovedBaseline(
    store::Store& store, const manifest::Bundle& bundle, const store::RunInfo& run,
    std::map<std::string, quality::TaskOutcome>& outcomes) {
  Result<std::vector<store::RunInfo>> runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  std::vector<quality::RunCandidate> candidates;
  for (const store::RunInfo& r : *runs) {
    if (r.fingerprint != run.fingerprint || r.id == run.id) continue;
    Result<std::vector<store::Signoff>> signoffs = store.ListSignoffs(r.id);
    if (!signoffs.ok()) return signoffs.status();
    candidates.push_back({.run_id = r.id,
                          .fingerprint = r.fingerprint,
                          .started_unix_ms = r.started_unix_ms,
                          .signoffs = std::move(*signoffs)});
  }
  std::optional<quality::ApprovedRun> approved = quality::FindApprovedRun(
      candidates,
      {.run_id = run.id, .fingerprint = run.fingerprint, .started_unix_ms = run.started_unix_ms});
  if (!approved) return approved;
  for (const store::RunInfo& r : *runs)
    if (r.id == approved->run_id) {
      Result<quality::QualitySummary> summary = quality::SummarizeQuality(store, r, &bundle);
      if (!summary.ok()) return summary.status();
      Result<std::map<std::string, quality::TaskOutcome>> then =
          OutcomesOf(store, r.id, bundle, summary->answer_passed);
      if (!then.ok()) return then.status();
      outcomes = std::move(*then);
    }
  return approved;
}

std::string TraceText(const std::string& trace_id) {
  return trace_id.empty() ? "" : " (trace " + trace_id + ")";
}

// One check a finding, but one for every missing task together: a run may miss many.
void AddChecks(const quality::TaskRules& rules, std::vector<Check>& checks) {
  std::vector<std::string> missing;
  for (const quality::TaskFinding& f : rules.findings) {
    if (f.kind == quality::TaskFindingKind::kMissing) {
      missing.push_back(f.task_id);
      continue;
    }
    const std::string name = f.kind == quality::TaskFindingKind::kRegressed
                                 ? "task " + f.task_id + " does not regress from the approved run"
                             : f.kind == quality::TaskFindingKind::kRequiredFailed
                                 ? "required task " + f.task_id + " passes"
                                 : "required task " + f.task_id + " is covered";
    checks.push_back({.condition = Condition::kQuality,
                      .name = name,
                      .status = CheckStatus::kFail,
                      .detail = f.evidence + TraceText(f.trace_id)});
  }
  if (!missing.empty()) {
    std::string named;
    for (size_t i = 0; i < missing.size() && i < 10; ++i)
      named += (i ? ", " : "") + missing[i];
    if (missing.size() > 10) named += " and " + std::to_string(missing.size() - 10) + " more";
    checks.push_back({.condition = Condition::kQuality,
                      .name = "every task of the corpus is covered, as in the approved run",
                      .status = CheckStatus::kFail,
                      .detail = std::to_string(missing.size()) + " missing: " + named});
  }
  for (const std::string& reason : rules.pending)
    checks.push_back(
        {.condition = Condition::kQuality, .name = reason, .status = CheckStatus::kPending});
  if (rules.findings.empty() && rules.pending.empty())
    checks.push_back(
        {.condition = Condition::kQuality,
         .name = "per-task rules hold",
         .status = CheckStatus::kPass,
         .detail =
             Tasks(rules.required_passed, "required task passed", "required tasks passed") +
             (rules.approved
                  ? "; " + Tasks(rules.compared, "task that passed in ", "tasks that passed in ") +
                        rules.approved->run_id + (rules.compared == 1 ? " passes" : " pass")
                  : "")});
}

}  // namespace

Status AddTaskRules(store::Store& store, const manifest::Bundle* bundle, ReportModel& m) {
  const store::StoredScenario scenario = store::ParseScenario(m.run.scenario_json);
  const bool regression = scenario.quality.no_regression_from == "approved";
  if (!bundle || !bundle->corpus) {
    if (regression)
      m.checks.push_back({.condition = Condition::kQuality,
                          .name = "no regression from the approved run",
                          .status = CheckStatus::kPending,
                          .detail = "the run's scenario and corpus could not be read again"});
    return Status::Ok();
  }
  quality::TaskRulesInput in{.corpus_tasks = bundle->corpus->TaskIds(),
                             .no_regression_from_approved = regression};
  for (const manifest::Task& task : bundle->corpus->tasks)
    if (task.required) in.required.insert(task.id);
  if (in.required.empty() && !regression) return Status::Ok();
  Result<std::map<std::string, quality::TaskOutcome>> now =
      OutcomesOf(store, m.run.id, *bundle, m.quality.answer_passed);
  if (!now.ok()) return now.status();
  in.outcomes = std::move(*now);
  if (regression) {
    Result<std::optional<quality::ApprovedRun>> approved =
        ApprovedBaseline(store, *bundle, m.run, in.approved_outcomes);
    if (!approved.ok()) return approved.status();
    in.approved = *approved;
  }
  m.task_rules = quality::ApplyTaskRules(in);
  AddChecks(m.task_rules, m.checks);
  return Status::Ok();
}

std::vector<std::vector<std::string>> TaskRulesTable(const ReportModel& m) {
  std::vector<std::vector<std::string>> table = {{"task", "rule", "evidence", "trace id"}};
  for (const quality::TaskFinding& f : m.task_rules.findings)
    table.push_back({f.task_id, std::string(Name(f.kind)), f.evidence, f.trace_id});
  return table;
}

json TaskRulesJson(const ReportModel& m) {
  const quality::TaskRules& r = m.task_rules;
  json findings = json::array();
  for (const quality::TaskFinding& f : r.findings)
    findings.push_back({{"task", f.task_id},
                        {"rule", Name(f.kind)},
                        {"evidence", f.evidence},
                        {"trace_id", f.trace_id.empty() ? json(nullptr) : json(f.trace_id)}});
  json approved = nullptr;
  if (r.approved)
    approved = {{"run_id", r.approved->run_id},
                {"accepted_by", r.approved->accepted_by},
                {"accepted_unix_ms", r.approved->accepted_unix_ms}};
  return {{"required_rule", r.required_rule},
          {"regression_rule", r.regression_rule},
          {"approved_run", approved},
          {"findings", findings},
          {"pending", r.pending},
          {"required_passed", r.required_passed},
          {"compared", r.compared}};
}

std::vector<std::string> TaskRulesLines(const ReportModel& m) {
  const quality::TaskRules& r = m.task_rules;
  if (!r.required_rule && !r.regression_rule) return {};
  std::vector<std::string> lines = {
      std::string("per-task rules: ") +
      (r.required_rule ? "required tasks must pass" : "no required tasks") +
      (r.regression_rule ? (r.approved ? "; compared with the approved run " + r.approved->run_id
                                       : std::string("; no approved run to compare with yet"))
                         : "")};
  for (const quality::TaskFinding& f : r.findings)
    lines.push_back("  " + std::string(Name(f.kind)) + ": " + f.task_id + ": " + f.evidence +
                    TraceText(f.trace_id));
  for (const std::string& p : r.pending)
    lines.push_back("  pending: " + p);
  return lines;
}

}  // namespace stagegate::report
