#include "report/triaged_run.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/strings.h"
#include "quality/checks.h"
#include "store/review_data.h"

namespace stagegate::report {
namespace {

// The independent reviewers' verdict on each answer they have fully scored, by request id,
// against the rubric of the run's latest export to reviewers. An LLM judge's scores are not
// independent reviews and are left out.
Result<std::map<int64_t, ReviewVerdict>> ReviewVerdicts(store::Store& store,
                                                        const std::string& run_id) {
  std::map<int64_t, ReviewVerdict> verdicts;
  Result<std::vector<store::ExportInfo>> exports = store.ListExports(run_id);  // newest first
  if (!exports.ok()) return exports.status();
  auto latest = std::find_if(exports->begin(), exports->end(), [](const store::ExportInfo& x) {
    return x.scorer == store::kReviewersScorer;
  });
  if (latest == exports->end()) return verdicts;
  const RubricRule rule = RubricRuleFromJson(latest->rubric_json);
  if (rule.criteria.empty()) return verdicts;

  std::map<int64_t, ReviewScores> scores;
  std::map<std::string, int64_t> request_of;  // item -> request
  Result<std::vector<store::ReviewItem>> items = store.ListReviewItems(run_id);
  if (!items.ok()) return items.status();
  for (const store::ReviewItem& item : *items) {
    if (item.scorer != store::kReviewersScorer) continue;
    request_of[item.item_id] = item.request_id;
    scores[item.request_id].assigned.insert(item.reviewer);
  }
  Result<std::vector<store::StoredScore>> stored = store.ListScores(run_id);
  if (!stored.ok()) return stored.status();
  for (const store::StoredScore& score : *stored) {
    auto request = request_of.find(score.item_id);
    if (request == request_of.end()) continue;  // a judge's item
    scores[request->second].levels[score.criterion][score.reviewer] = score.value;
  }
  for (const auto& [request, of_request] : scores)
    if (std::optional<ReviewVerdict> v = JudgeReview(rule, of_request))
      verdicts[request] = std::move(*v);
  return verdicts;
}

}  // namespace

Result<TriagedRun> TriageStoredRun(store::Store& store, const store::RunInfo& run,
                                   const manifest::Bundle* bundle, const std::string& problem) {
  TriagedRun out;
  TriageCriteria criteria = CriteriaFromScenario(run.scenario_json, out.notes);
  const std::vector<std::string> refusal_patterns = criteria.refusal_patterns;
  const Triager triager(std::move(criteria));
  out.notes.insert(out.notes.end(), triager.notes().begin(), triager.notes().end());

  const manifest::Corpus* corpus = bundle && bundle->corpus ? &*bundle->corpus : nullptr;
  if (!corpus)
    out.notes.push_back(
        "automated checks not run, and denials of corpus tasks not judged expected or not: " +
        (bundle ? std::string("the scenario has no corpus") : Split(problem, '\n').front()));
  const std::set<std::string> refusal_tasks =
      corpus ? manifest::RefusalTasks(*corpus) : std::set<std::string>();

  Result<std::vector<store::PhaseInfo>> phases = store.ListPhases(run.id);
  if (!phases.ok()) return phases.status();
  out.phases = std::move(*phases);
  std::map<int64_t, const store::PhaseInfo*> phase_of;
  for (const store::PhaseInfo& phase : out.phases)
    if (phase.status != store::PhaseStatus::kSuperseded) phase_of[phase.id] = &phase;
  Result<std::vector<load::RequestRecord>> records = store.ListRequests(run.id);
  if (!records.ok()) return records.status();
  out.records = std::move(*records);
  Result<std::map<int64_t, ReviewVerdict>> reviews = ReviewVerdicts(store, run.id);
  if (!reviews.ok()) return reviews.status();

  for (const load::RequestRecord& r : out.records) {
    auto phase = phase_of.find(r.phase_id);
    if (r.warmup || phase == phase_of.end()) continue;
    RequestFacts facts{.stage = phase->second->StageLabel(),
                       .phase = phase->second->phase,
                       .refusal_task = refusal_tasks.contains(r.task_id),
                       .corpus_known = corpus != nullptr};
    // A task's checks are written for its own persona: a probe asking as someone else (a
    // positive control) is not held to them.
    if (corpus && r.outcome == load::Outcome::kOk)
      if (const manifest::Task* task = corpus->FindTask(r.task_id);
          task && !task->checks.empty() && r.persona == task->persona.name)
        facts.checks = quality::RunChecks(*task, r, refusal_patterns);
    if (auto review = reviews->find(r.id); review != reviews->end()) facts.review = review->second;
    out.triaged.push_back({&r, phase->second, triager.Classify(r, facts)});
  }
  return out;
}

}  // namespace stagegate::report
