// The answers a run keeps for review: one a task from the final stage's steady phase under load,
// and one at a time at rest, so that the two can be compared.

#include <algorithm>
#include <map>
#include <set>

#include "scenario/runner.h"

namespace stagegate::scenario {

using manifest::PhaseKind;

Status Runner::SampleAnswers(const StageRequests& requests, const StageResult& stage,
                             RunReport& report) {
  // From the steady phase under load: one answer a task. Which is which stays in the store,
  // away from reviewers.
  const manifest::Scenario& scenario = bundle_.scenario;
  std::vector<std::pair<int64_t, int64_t>> under_load;
  std::optional<int64_t> steady_phase_id;
  if (const StepResult* steady = stage.Find(PhaseKind::kSteady)) {
    steady_phase_id = steady->phase_id;
    std::set<std::string> tasks;
    for (const load::RequestRecord& r : records_) {
      if (static_cast<int64_t>(under_load.size()) >= scenario.quality.samples_under_load) break;
      if (r.phase_id != steady->phase_id || r.outcome != load::Outcome::kOk) continue;
      // A session's later turns answer follow-ups, not the task reviewers are shown.
      if (r.turn.value_or(0) != 0 || !tasks.insert(r.task_id).second) continue;
      under_load.push_back({r.phase_id, r.sequence});
    }
  }
  SG_RETURN_IF_ERROR(store_.AddAnswers(run_id_, "under_load", under_load));
  report.samples_under_load = static_cast<int64_t>(under_load.size());
  if (scenario.quality.samples_at_rest <= 0) return Status::Ok();
  return SampleAtRest(requests, stage.name, steady_phase_id, report);
}

Status Runner::SampleAtRest(const StageRequests& requests, const std::string& stage,
                            std::optional<int64_t> steady_phase_id, RunReport& report) {
  const manifest::Scenario& scenario = bundle_.scenario;
  PhaseStep at_rest{.kind = PhaseKind::kSteady, .level = 1, .closed_loop = true, .at_rest = true};
  at_rest.options = {.concurrency = 1,
                     .requests = scenario.quality.samples_at_rest,
                     .grace_s = 5,
                     .workers = 1,
                     .timeouts = {.connect_ms = scenario.target.timeouts.connect_ms,
                                  .first_token_ms = scenario.target.timeouts.first_token_ms,
                                  .total_ms = scenario.target.timeouts.total_ms}};
  // Task by task in the stage's order (in turns across categories): those answered under load
  // first, so that the samples pair up; then those not sent under load; last those refused or
  // failed under load (a restricted task is refused at rest too, and leaves no answer to review).
  std::map<std::string, int> rank;  // 0 answered, 2 refused or failed; absent: not sent
  for (const load::RequestRecord& r : records_) {
    if (!steady_phase_id || r.phase_id != *steady_phase_id) continue;
    const int here = r.outcome == load::Outcome::kOk ? 0 : 2;
    const auto [at, added] = rank.try_emplace(r.task_id, here);
    if (!added) at->second = std::min(at->second, here);
  }
  std::vector<size_t> order;
  for (const int wanted : {0, 1, 2})
    for (size_t t = 0; t < requests.task_count(); ++t) {
      const auto found = rank.find(requests.ForTask(t).task_id);
      if ((found == rank.end() ? 1 : found->second) == wanted) order.push_back(t);
    }
  const load::RequestSource one_each = [&requests, order](int64_t n) {
    return requests.ForTask(order[static_cast<size_t>(n) % order.size()]);
  };
  Result<StepResult> rest = RunStep(stage, std::move(at_rest), one_each);
  if (!rest.ok()) return rest.status();
  std::vector<std::pair<int64_t, int64_t>> answers;
  for (const load::RequestRecord& r : RecordsOf(*rest))
    if (r.outcome == load::Outcome::kOk) answers.push_back({r.phase_id, r.sequence});
  SG_RETURN_IF_ERROR(store_.AddAnswers(run_id_, "at_rest", answers));
  report.samples_at_rest = static_cast<int64_t>(answers.size());
  return Status::Ok();
}

}  // namespace stagegate::scenario
