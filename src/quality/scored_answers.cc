#include "quality/scored_answers.h"

#include <algorithm>
#include <numeric>

#include "base/strings.h"

namespace stagegate::quality {

Result<AnswersBySource> ReadAnswersBySource(store::Store& store, const std::string& run_id) {
  Result<std::vector<store::SampledAnswer>> stored = store.ListSampledAnswers(run_id);
  if (!stored.ok()) return stored.status();
  AnswersBySource out;
  for (const store::SampledAnswer& row : *stored) {
    SampledAnswer a{.request_id = row.request_id,
                    .source = row.source,
                    .condition = row.condition,
                    .task_id = row.task_id,
                    .stage = row.stage};
    a.record.answer_text = row.answer_text;
    a.record.tool_calls_json = row.tool_calls_json;
    a.record.http_status = row.http_status;
    if (row.e2e_ns) a.e2e_s = static_cast<double>(*row.e2e_ns) / 1e9;
    std::vector<SampledAnswer>* into = &out.assistant;
    if (row.source != store::kAssistantSource) {
      auto found = std::find_if(out.baselines.begin(), out.baselines.end(),
                                [&](const auto& b) { return b.first == row.source; });
      into = found != out.baselines.end()
                 ? &found->second
                 : &out.baselines.emplace_back(row.source, std::vector<SampledAnswer>()).second;
    }
    into->push_back(std::move(a));
  }
  return out;
}

Result<Rubric> ReadRubric(store::Store& store, const std::string& run_id) {
  Result<std::vector<store::ExportInfo>> exports = store.ListExports(run_id);  // newest first
  if (!exports.ok()) return exports.status();
  auto latest = std::find_if(exports->begin(), exports->end(), [](const store::ExportInfo& x) {
    return x.scorer == store::kReviewersScorer;
  });
  if (latest == exports->end()) latest = exports->begin();
  Rubric out;
  if (latest == exports->end()) return out;
  return store::ParseRubric(latest->rubric_json);
}

Result<Scores> ReadScores(store::Store& store, const std::string& run_id,
                          const std::vector<Criterion>& criteria) {
  Scores out;
  std::map<std::string, std::pair<std::string, int64_t>> item_of;  // item -> (scorer, request)
  Result<std::vector<store::ReviewItem>> items = store.ListReviewItems(run_id);
  if (!items.ok()) return items.status();
  for (const store::ReviewItem& item : *items) {
    if (!item.scorer) continue;  // no export row: not an item of any scorer
    item_of[item.item_id] = {*item.scorer, item.request_id};
    out.by_scorer[*item.scorer][item.request_id].assigned.insert(item.reviewer);
    if (*item.scorer == store::kReviewersScorer) out.reviewers.insert(item.reviewer);
  }
  Result<std::vector<store::StoredScore>> stored = store.ListScores(run_id);
  if (!stored.ok()) return stored.status();
  std::string last;
  for (const store::StoredScore& score : *stored) {
    const auto& [scorer, request] = item_of[score.item_id];
    out.by_scorer[scorer][request].by_criterion[score.criterion][score.reviewer] = score.value;
    // Each of an item's criteria carries the item's time: count it once.
    if (scorer == store::kReviewersScorer && score.item_id + score.reviewer != last &&
        score.item_seconds)
      out.seconds_by_reviewer[score.reviewer].push_back(*score.item_seconds);
    last = score.item_id + score.reviewer;
  }
  for (auto& [scorer, of_scorer] : out.by_scorer)
    for (auto& [request, a] : of_scorer)
      for (const std::string& reviewer : a.assigned)
        if (std::all_of(criteria.begin(), criteria.end(), [&a = a, &reviewer](const Criterion& c) {
              return a.by_criterion[c.id].contains(reviewer);
            }))
          a.complete.insert(reviewer);
  return out;
}

std::vector<Judged> JudgeScoredAnswers(const std::vector<SampledAnswer>& answers,
                                       const std::map<int64_t, AnswerScores>& of_scorer,
                                       const Rubric& rubric) {
  const std::optional<double> min_weighted = rubric.min_weighted_mean, min_each = rubric.min_each;
  std::vector<Judged> judged;
  for (const SampledAnswer& answer : answers) {
    auto found = of_scorer.find(answer.request_id);
    if (found == of_scorer.end() || found->second.assigned.empty() ||
        found->second.complete.size() < found->second.assigned.size())
      continue;
    const AnswerScores& scores = found->second;
    Judged j{.answer = &answer};
    double weights = 0;
    for (const Criterion& c : rubric.criteria) {
      std::vector<double> values;
      for (const std::string& reviewer : scores.complete)
        values.push_back(static_cast<double>(scores.by_criterion.at(c.id).at(reviewer)));
      // Never empty: the answer is fully scored by at least one reviewer.
      const double mean =
          std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
      j.mean[c.id] = mean;
      j.weighted += c.weight * mean;
      weights += c.weight;
      if (min_each && c.weight > 0 && mean < *min_each) j.passed = false;  // weighted ones
      if (c.hard && mean < c.floor) {
        j.passed = false;
        j.hard_failure = true;
        j.below_floor.push_back(c.id + " (" + FormatNumber(mean, 2) + " < " +
                                FormatNumber(c.floor, 2) + ")");
      }
    }
    j.weighted = weights > 0 ? j.weighted / weights : 0;
    if (min_weighted && j.weighted < *min_weighted) j.passed = false;
    judged.push_back(std::move(j));
  }
  return judged;
}

}  // namespace stagegate::quality
