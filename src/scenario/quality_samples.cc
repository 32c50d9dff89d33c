// The answers a run keeps for review: one a task from the final stage's steady phase under load,
// one at a time at rest, so that the two can be compared, and each baseline's to the same tasks.

#include <algorithm>
#include <map>
#include <set>

#include "base/http_header.h"
#include "base/strings.h"
#include "scenario/runner.h"

namespace stagegate::scenario {

using manifest::PhaseKind;

Status Runner::SampleAnswers(const StageRequests& requests, const StageResult& stage,
                             const manifest::EffectiveStage& effective, const Endpoint& endpoint,
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
  if (scenario.quality.samples_at_rest > 0)
    SG_RETURN_IF_ERROR(SampleAtRest(requests, stage.name, steady_phase_id, report));
  return StoreBaselines(effective, endpoint, report);
}

// Each baseline's answers to the tasks the assistant's sampled answers cover, as the answers of a
// phase of its own (store::kBaselinePhase, the baseline's name as its stage), so that export mixes
// them into the same packets and the same reviewers score both. A baseline already stored (a
// resumed run) is kept as it is.
Status Runner::StoreBaselines(const manifest::EffectiveStage& effective, const Endpoint& endpoint,
                              RunReport& report) {
  const std::vector<manifest::Baseline>& baselines = bundle_.scenario.baselines;
  if (baselines.empty()) return Status::Ok();
  Result<std::vector<store::SampledAnswer>> sampled = store_.ListSampledAnswers(run_id_);
  if (!sampled.ok()) return sampled.status();
  std::set<std::string> tasks;   // the tasks of the assistant's sampled answers
  std::set<std::string> stored;  // the baselines already stored
  for (const store::SampledAnswer& a : *sampled) {
    if (a.source == store::kAssistantSource)
      tasks.insert(a.task_id);
    else
      stored.insert(a.source);
  }
  // Far above any phase a run measures, so that no resumed run's ordinals meet them.
  constexpr int64_t kFirstOrdinal = 1'000'000;
  for (size_t b = 0; b < baselines.size() && !stop_.load(); ++b) {
    const manifest::Baseline& baseline = baselines[b];
    if (stored.contains(baseline.name)) continue;
    if (baseline.endpoint) {
      SG_RETURN_IF_ERROR(AskBaseline(baseline, effective, endpoint, tasks, report));
      continue;
    }
    for (const auto& [name, answers] : bundle_.baseline_answers)
      if (name == baseline.name)
        SG_RETURN_IF_ERROR(StoreRecordedBaseline(
            name, answers, kFirstOrdinal + static_cast<int64_t>(b), tasks, report));
  }
  return Status::Ok();
}

// The time to resolution, when recorded, is the request's end.
Status Runner::StoreRecordedBaseline(const std::string& name,
                                     const std::vector<manifest::RecordedAnswer>& answers,
                                     int64_t ordinal, const std::set<std::string>& tasks,
                                     RunReport& report) {
  // Merged from shards: the first shard's phase came along, holding its own samples' tasks. The
  // merged run's are stored anew from the scenario's answers, and that phase set aside.
  const PhaseStep recorded{.label = store::kBaselinePhase, .at_rest = true};
  if (const store::PhaseInfo* carried = Stored(name, recorded))
    SG_RETURN_IF_ERROR(store_.SetPhaseStatus(carried->id, store::PhaseStatus::kSuperseded));
  Result<int64_t> phase_id = store_.AddPhase({.run_id = run_id_,
                                              .ordinal = ordinal,
                                              .stage = name,
                                              .phase = store::kBaselinePhase,
                                              .at_rest = true,
                                              .status = store::PhaseStatus::kComplete});
  if (!phase_id.ok()) return phase_id.status();
  std::vector<load::RequestRecord> records;
  std::vector<std::pair<int64_t, int64_t>> keys;
  for (const manifest::RecordedAnswer& recorded : answers) {
    if (!tasks.contains(recorded.task_id)) continue;
    load::RequestRecord& r = records.emplace_back();
    r.run_id = run_id_;
    r.phase_id = *phase_id;
    r.sequence = static_cast<int64_t>(records.size() - 1);
    r.task_id = recorded.task_id;
    r.sent_ns = 0;
    if (recorded.resolution_s) r.end_ns = static_cast<int64_t>(*recorded.resolution_s * 1e9);
    r.answer_text = recorded.answer;
    keys.push_back({*phase_id, r.sequence});
  }
  SG_RETURN_IF_ERROR(store_.AddRequests(records));
  SG_RETURN_IF_ERROR(store_.AddAnswers(run_id_, "at_rest", keys));
  report.baseline_samples.push_back({name, static_cast<int64_t>(records.size())});
  return Status::Ok();
}

// The baseline's overlay on the final stage, sent to its own URL (else the target's) with its own
// key: the target's key goes only to the target's server, and never beside an Authorization
// header of the baseline's.
Result<StageRequests> Runner::BaselineRequests(const manifest::Baseline& baseline,
                                               const manifest::EffectiveStage& effective,
                                               const Endpoint& endpoint) {
  const manifest::Stage& overlay = *baseline.endpoint;
  manifest::EffectiveStage stage = effective;
  manifest::ApplyOverlay(overlay, stage);
  stage.name = baseline.name;
  Endpoint to = endpoint;
  const bool own_authorization =
      std::any_of(overlay.headers.begin(), overlay.headers.end(),
                  [](const auto& h) { return SameHeaderName(h.first, "Authorization"); });
  if (!baseline.api_key_env.empty())
    to.api_key_env = baseline.api_key_env;
  else if (overlay.base_url || own_authorization)
    to.api_key_env = "";
  if (overlay.base_url) to.sim = false;
  Result<StageRequests> requests = StageRequests::Make(bundle_, stage, to, &input_files_);
  if (!requests.ok())
    return Status::InvalidInput("baseline '" + baseline.name + "': " + requests.status().message());
  if (!baseline.answer_at.empty()) requests->AskPlainApi(overlay.body, baseline.answer_at);
  return requests;
}

// Its answers, with their latency, are those it gave in full.
Status Runner::AskBaseline(const manifest::Baseline& baseline,
                           const manifest::EffectiveStage& effective, const Endpoint& endpoint,
                           const std::set<std::string>& tasks, RunReport& report) {
  Result<StageRequests> requests = BaselineRequests(baseline, effective, endpoint);
  if (!requests.ok()) return requests.status();
  std::vector<size_t> order;  // the tasks sampled, in the stage's order
  for (size_t t = 0; t < requests->task_count(); ++t)
    if (tasks.contains(requests->ForTask(t).task_id)) order.push_back(t);
  if (order.empty()) {
    report.notes.push_back("baseline '" + baseline.name +
                           "' was asked nothing: it covers none of the tasks sampled");
    return Status::Ok();
  }
  PhaseStep step = AtRestStep(static_cast<int64_t>(order.size()));
  step.label = store::kBaselinePhase;
  const StageRequests& asked = *requests;
  const load::RequestSource one_each = [&asked, order](int64_t n) {
    return asked.ForTask(order[static_cast<size_t>(n) % order.size()]);
  };
  Result<StepResult> rest = RunStep(baseline.name, std::move(step), one_each);
  if (!rest.ok()) return rest.status();
  // (A merged run replays the first shard's asking, which was of that shard's samples' tasks: only
  // those the merged run sampled too are its answers.)
  std::vector<std::pair<int64_t, int64_t>> answers;
  std::map<std::string, int> unanswered;  // outcome -> requests
  int64_t asked_now = 0;
  for (const load::RequestRecord& r : RecordsOf(*rest)) {
    if (!tasks.contains(r.task_id)) continue;
    ++asked_now;
    if (r.outcome == load::Outcome::kOk)
      answers.push_back({r.phase_id, r.sequence});
    else
      ++unanswered[std::string(load::OutcomeName(r.outcome))];
  }
  SG_RETURN_IF_ERROR(store_.AddAnswers(run_id_, "at_rest", answers));
  report.baseline_samples.push_back({baseline.name, static_cast<int64_t>(answers.size())});
  if (!unanswered.empty()) {
    std::vector<std::string> counts;
    for (const auto& [outcome, n] : unanswered)
      counts.push_back(outcome + " " + std::to_string(n));
    report.notes.push_back("baseline '" + baseline.name + "' answered " +
                           std::to_string(answers.size()) + " of the " + std::to_string(asked_now) +
                           " tasks it was asked (" + Join(counts, ", ") +
                           "); only its answers are reviewed");
  }
  return Status::Ok();
}

// One request at a time, `requests` of them, with the target's timeouts.
PhaseStep Runner::AtRestStep(int64_t requests) const {
  const manifest::Scenario& scenario = bundle_.scenario;
  PhaseStep at_rest{.kind = PhaseKind::kSteady, .level = 1, .closed_loop = true, .at_rest = true};
  at_rest.options = {.concurrency = 1,
                     .requests = requests,
                     .grace_s = 5,
                     .workers = 1,
                     .timeouts = {.connect_ms = scenario.target.timeouts.connect_ms,
                                  .first_token_ms = scenario.target.timeouts.first_token_ms,
                                  .total_ms = scenario.target.timeouts.total_ms}};
  return at_rest;
}

Status Runner::SampleAtRest(const StageRequests& requests, const std::string& stage,
                            std::optional<int64_t> steady_phase_id, RunReport& report) {
  PhaseStep at_rest = AtRestStep(bundle_.scenario.quality.samples_at_rest);
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
