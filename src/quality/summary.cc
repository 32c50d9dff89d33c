#include "quality/summary.h"

#include <algorithm>
#include <functional>
#include <set>

#include "base/strings.h"
#include "quality/scored_answers.h"
#include "stats/agreement.h"
#include "stats/summary.h"
#include "store/findings.h"
#include "store/review_data.h"

namespace stagegate::quality {
namespace {

using json = nlohmann::json;

// The scenario's quality thresholds (its `quality` section).
struct Thresholds {
  int64_t min_scored = 30;
  double min_agreement = 0.6;
  std::optional<double> min_mean, min_pass_rate;
  std::map<std::string, double> criterion_floors;
  std::optional<JudgeGateRule> judge;
  std::vector<store::StoredQualityThresholds::NotWorseThan> not_worse_than;
};

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values)
    sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

std::string Number(double value, int decimals = 2) {
  return FormatNumber(value, decimals);
}

// The thresholds of the run's stored scenario. One the scenario left out (stored as null) is not
// set: it takes its default, or holds nothing back.
Thresholds ReadThresholds(const std::string& scenario_json) {
  const store::StoredQualityThresholds q = store::ParseScenario(scenario_json).quality;
  Thresholds t;
  if (q.min_scored_answers) t.min_scored = *q.min_scored_answers;
  if (q.min_agreement) t.min_agreement = *q.min_agreement;
  t.min_mean = q.min_mean;
  t.min_pass_rate = q.min_pass_rate;
  t.criterion_floors = q.criterion_floors;
  t.not_worse_than = q.not_worse_than;
  if (q.judge)
    t.judge = JudgeGateRule{.model = q.judge->model,
                            .min_kappa = q.judge->min_kappa,
                            .min_overlap = q.judge->min_overlap};
  return t;
}

// Counts a tool_call or no_tool_call result into its stage's share for the answer's condition.
void CountToolCall(const SampledAnswer& a, const CheckResult& r,
                   std::map<std::string, ToolCallCorrectness>& by_stage) {
  if (r.kind != "tool_call" && r.kind != "no_tool_call") return;
  ToolCallCorrectness& stage = by_stage[a.stage];
  stage.stage = a.stage;
  ToolCallShare& share = a.condition == "under_load" ? stage.under_load : stage.at_rest;
  ++share.run;
  if (r.passed)
    ++share.passed;
  else
    ++share.failures[r.failure_class];
}

// The stages' tool-call shares with their intervals, in the scenario's stage order (a stage the
// scenario no longer has comes after, by name).
std::vector<ToolCallCorrectness> OrderToolCalls(std::map<std::string, ToolCallCorrectness> by_stage,
                                                const manifest::Scenario& scenario) {
  std::vector<ToolCallCorrectness> ordered;
  for (const manifest::Stage& stage : scenario.stages)
    if (auto found = by_stage.find(stage.name); found != by_stage.end()) {
      ordered.push_back(std::move(found->second));
      by_stage.erase(found);
    }
  for (auto& [name, rest] : by_stage)
    ordered.push_back(std::move(rest));
  for (ToolCallCorrectness& t : ordered)
    for (ToolCallShare* share : {&t.at_rest, &t.under_load})
      share->ci = stats::WilsonInterval(share->passed, share->run);
  return ordered;
}

// The corpus's automated checks of the answers, apart from the scores.
AutomatedChecks RunAutomatedChecks(const std::vector<SampledAnswer>& answers,
                                   const manifest::Bundle& bundle) {
  AutomatedChecks automated;
  std::map<std::string, ToolCallCorrectness> tool_calls;
  for (const SampledAnswer& a : answers) {
    const manifest::Task* task = bundle.corpus->FindTask(a.task_id);
    if (!task || task->checks.empty()) continue;
    ++automated.answers;
    for (const CheckResult& r :
         RunChecks(*task, a.record, bundle.scenario.triage.refusal_patterns)) {
      CountToolCall(a, r, tool_calls);
      ++automated.checks;
      auto& [passed, ran] = automated.by_kind[r.kind];
      ++ran;
      if (r.passed) {
        ++passed;
        ++automated.passed;
      } else {
        automated.failures.push_back("answer " + std::to_string(a.request_id) + " (" + a.task_id +
                                     "): " + r.detail);
      }
    }
  }
  automated.tool_calls = OrderToolCalls(std::move(tool_calls), bundle.scenario);
  return automated;
}

// The scores of the judged answers `member` accepts: means with intervals, and pass rate.
GroupScores GroupOf(const std::vector<Judged>& judged, const std::string& name,
                    const std::function<bool(const SampledAnswer&)>& member) {
  GroupScores g{.name = name};
  std::vector<double> weighted;
  std::map<std::string, std::vector<double>> by_criterion;
  for (const Judged& j : judged) {
    if (!member(*j.answer)) continue;
    ++g.answers;
    weighted.push_back(j.weighted);
    for (const auto& [criterion, mean] : j.mean)
      by_criterion[criterion].push_back(mean);
    g.passed += j.passed;
    g.hard_floor_failures += j.hard_failure;
    g.by_judge += j.by_judge;
  }
  if (g.answers == 0) return g;
  for (const auto& [criterion, values] : by_criterion) {
    g.mean[criterion] = Mean(values);
    if (auto ci = stats::MeanConfidenceInterval(values)) g.mean_ci[criterion] = *ci;
  }
  g.weighted_mean = Mean(weighted);
  g.weighted_mean_ci = stats::MeanConfidenceInterval(weighted);
  g.pass_rate_ci = stats::WilsonInterval(g.passed, g.answers);
  return g;
}

// The groups of the reviewers' judged answers: all, each condition, each stage and each task
// category (when the corpus can be read).
std::vector<GroupScores> GroupsOf(const std::vector<Judged>& judged,
                                  const manifest::Bundle* bundle) {
  std::vector<GroupScores> groups;
  groups.push_back(GroupOf(judged, "all", [](const SampledAnswer&) { return true; }));
  for (const std::string condition : {"at_rest", "under_load"})
    groups.push_back(GroupOf(judged, condition,
                             [&](const SampledAnswer& a) { return a.condition == condition; }));
  std::set<std::string> stages, categories;
  for (const Judged& j : judged) {
    stages.insert(j.answer->stage);
    if (bundle && bundle->corpus)
      if (const manifest::Task* t = bundle->corpus->FindTask(j.answer->task_id))
        categories.insert(t->category);
  }
  for (const std::string& stage : stages)
    groups.push_back(GroupOf(judged, "stage " + stage,
                             [&](const SampledAnswer& a) { return a.stage == stage; }));
  for (const std::string& category : categories)
    groups.push_back(GroupOf(judged, "category " + category, [&](const SampledAnswer& a) {
      const manifest::Task* t = bundle->corpus->FindTask(a.task_id);
      return t && t->category == category;
    }));
  return groups;
}

// Agreement between the reviewers (`names`, in order) on one criterion, over every answer two of
// them or more scored; each answer whose ratings are more than one level apart goes to
// `adjudication` (without its task).
CriterionAgreement AgreementOn(const Criterion& c, const std::map<int64_t, AnswerScores>& scores,
                               const std::vector<std::string>& names,
                               std::vector<Adjudication>& adjudication) {
  CriterionAgreement agreement{.criterion = c.id};
  std::vector<std::vector<std::optional<int64_t>>> units;
  std::vector<int64_t> first, second;
  std::vector<int64_t> unit_requests;
  for (const auto& [request, a] : scores) {
    if (a.complete.size() < 2) continue;
    std::vector<std::optional<int64_t>> unit;
    for (const std::string& reviewer : names)
      unit.push_back(a.complete.contains(reviewer)
                         ? std::optional<int64_t>(a.by_criterion.at(c.id).at(reviewer))
                         : std::nullopt);
    if (names.size() == 2) {
      first.push_back(*unit[0]);
      second.push_back(*unit[1]);
    }
    units.push_back(std::move(unit));
    unit_requests.push_back(request);
  }
  agreement.units = static_cast<int64_t>(units.size());
  std::set<int64_t> given;
  for (const auto& unit : units)
    for (const std::optional<int64_t>& rating : unit)
      if (rating) given.insert(*rating);
  agreement.all_same = given.size() == 1;
  if (names.size() == 2) agreement.kappa = stats::WeightedKappaQuadratic(first, second, c.levels);
  agreement.alpha_ordinal = stats::KrippendorffAlpha(units, stats::AlphaMetric::kOrdinal);
  agreement.alpha_interval = stats::KrippendorffAlpha(units, stats::AlphaMetric::kInterval);
  for (const stats::Disagreement& d : stats::WideDisagreements(units, 1)) {
    Adjudication item{.request_id = unit_requests[d.unit], .criterion = c.id};
    for (size_t r = 0; r < names.size(); ++r)
      if (units[d.unit][r]) item.ratings[names[r]] = *units[d.unit][r];
    adjudication.push_back(std::move(item));
  }
  return agreement;
}

// Request -> criterion -> the levels it was given.
using LevelsByAnswer = std::map<int64_t, std::map<std::string, std::vector<int64_t>>>;

// Per answer fully scored (by every scorer it was given to), each criterion's levels.
LevelsByAnswer FullyScoredLevels(const std::map<int64_t, AnswerScores>& of_scorer) {
  LevelsByAnswer out;
  for (const auto& [request, a] : of_scorer) {
    if (a.assigned.empty() || a.complete.size() < a.assigned.size()) continue;
    for (const auto& [criterion, levels] : a.by_criterion)
      for (const std::string& scorer : a.complete)
        if (auto level = levels.find(scorer); level != levels.end())
          out[request][criterion].push_back(level->second);
  }
  return out;
}

// Each LLM judge against the reviewers' consensus on the answers both fully scored, with the
// scenario's gate; a gate naming a judge that scored nothing is said so.
std::vector<JudgeCalibration> CalibrateJudges(const Scores& scores, const Rubric& rubric,
                                              const std::optional<JudgeGateRule>& gate) {
  std::vector<CriterionScale> scale;
  for (const Criterion& c : rubric.criteria)
    scale.push_back({.id = c.id, .levels = c.levels});
  auto of_reviewers = scores.by_scorer.find(store::kReviewersScorer);
  const LevelsByAnswer reviewed = of_reviewers == scores.by_scorer.end()
                                      ? LevelsByAnswer{}
                                      : FullyScoredLevels(of_reviewers->second);
  std::vector<JudgeCalibration> out;
  for (const auto& [scorer, of_scorer] : scores.by_scorer) {
    if (scorer == store::kReviewersScorer) continue;
    std::map<std::string, std::vector<ScoredTwice>> by_criterion;
    for (const auto& [request, criteria] : FullyScoredLevels(of_scorer)) {
      auto by_reviewers = reviewed.find(request);
      if (by_reviewers == reviewed.end()) continue;
      for (const auto& [criterion, levels] : criteria)
        if (by_reviewers->second.contains(criterion))
          by_criterion[criterion].push_back(
              {.reviewers = by_reviewers->second.at(criterion), .judge = *ConsensusLevel(levels)});
    }
    out.push_back(CalibrateJudge(scorer, scale, by_criterion, gate));
  }
  if (gate && std::none_of(out.begin(), out.end(),
                           [&](const JudgeCalibration& j) { return j.model == gate->model; }))
    out.push_back(UnscoredJudge(*gate));
  return out;
}

// The answers a calibrated judge fully scored and the reviewers did not, added to `judged`
// marked as the judge's.
void AddJudgeOnly(const std::vector<SampledAnswer>& answers,
                  const std::map<int64_t, AnswerScores>& of_judge, const Rubric& rubric,
                  std::vector<Judged>& judged) {
  std::set<int64_t> by_reviewers;
  for (const Judged& j : judged)
    by_reviewers.insert(j.answer->request_id);
  for (Judged& j : JudgeScoredAnswers(answers, of_judge, rubric))
    if (!by_reviewers.contains(j.answer->request_id)) {
      j.by_judge = true;
      judged.push_back(std::move(j));
    }
}

// Each independent reviewer's recorded time on their items, then everyone's as "all".
std::vector<ReviewerEffort> EffortOf(
    const std::map<std::string, std::vector<double>>& seconds_by_reviewer) {
  std::vector<ReviewerEffort> effort;
  std::vector<double> everyone;
  for (const auto& [reviewer, seconds] : seconds_by_reviewer) {
    ReviewerEffort e{.reviewer = reviewer, .items = static_cast<int64_t>(seconds.size())};
    for (double v : seconds)
      e.total_s += v;
    e.median_s = stats::Median(seconds);
    everyone.insert(everyone.end(), seconds.begin(), seconds.end());
    effort.push_back(e);
  }
  ReviewerEffort all{.reviewer = "all", .items = static_cast<int64_t>(everyone.size())};
  for (double v : everyone)
    all.total_s += v;
  all.median_s = stats::Median(everyone);
  effort.push_back(all);
  return effort;
}

// The independent reviewers' usability judgements of the run's answers by source (the assistant
// and each baseline), and their hours from `effort`.
Result<CorrectionSummary> ReadCorrection(store::Store& store, const std::string& run_id,
                                         const AnswersBySource& by_source,
                                         const QualitySummary& s) {
  std::map<int64_t, std::string> source_of;  // request id -> source; the assistant's are absent
  for (const auto& [source, answers] : by_source.baselines)
    for (const SampledAnswer& a : answers)
      source_of[a.request_id] = source;
  Result<std::vector<store::ReviewItem>> items = store.ListReviewItems(run_id);
  if (!items.ok()) return items.status();
  std::map<std::string, std::string> reviewers_items;  // item id -> source
  for (const store::ReviewItem& item : *items)
    if (item.scorer == store::kReviewersScorer)
      reviewers_items[item.item_id] = source_of.contains(item.request_id)
                                          ? source_of[item.request_id]
                                          : std::string(store::kAssistantSource);
  Result<std::vector<store::Usability>> stored = store.ListUsability(run_id);
  if (!stored.ok()) return stored.status();
  std::vector<UsabilityJudgement> judged;
  for (const store::Usability& u : *stored)
    if (auto found = reviewers_items.find(u.item_id); found != reviewers_items.end())
      judged.push_back({.source = found->second,
                        .usability = u.usability,
                        .correction_seconds = u.correction_seconds});
  CorrectionSummary out{.by_source = CorrectionBySource(judged)};
  const double total_s = s.effort.empty() ? 0 : s.effort.back().total_s;  // "all" comes last
  out.reviewing = ReviewerHoursOf(total_s, s.scored, s.sampled);
  return out;
}

// The reviewers' scored answers as the comparison with a baseline reads them (a calibrated
// judge's are left out: it never scores a baseline).
std::vector<ComparedAnswer> Compared(const std::vector<Judged>& judged,
                                     const manifest::Bundle* bundle) {
  std::vector<ComparedAnswer> out;
  for (const Judged& j : judged) {
    if (j.by_judge) continue;
    ComparedAnswer c{.mean = j.mean, .weighted = j.weighted, .passed = j.passed};
    c.seconds = j.answer->e2e_s;
    if (bundle && bundle->corpus)
      if (const manifest::Task* t = bundle->corpus->FindTask(j.answer->task_id))
        c.category = t->category;
    out.push_back(std::move(c));
  }
  return out;
}

// The assistant's reviewed answers against each baseline's, for every baseline the run stored.
std::vector<BaselineComparison> CompareBaselines(const AnswersBySource& by_source,
                                                 const manifest::Bundle* bundle,
                                                 const std::vector<Judged>& judged,
                                                 const std::map<int64_t, AnswerScores>& reviewed,
                                                 const Rubric& rubric) {
  std::vector<std::string> criteria;
  for (const Criterion& c : rubric.criteria)
    criteria.push_back(c.id);
  const std::vector<ComparedAnswer> assistant = Compared(judged, bundle);
  std::vector<BaselineComparison> out;
  for (const auto& [source, answers] : by_source.baselines) {
    BaselineComparison& c = out.emplace_back(CompareWithBaseline(
        source, assistant, Compared(JudgeScoredAnswers(answers, reviewed, rubric), bundle),
        criteria));
    for (const manifest::Baseline& b :
         bundle ? bundle->scenario.baselines : std::vector<manifest::Baseline>())
      if (b.name == source) c.baseline_times = b.endpoint ? "measured at rest" : "recorded";
  }
  return out;
}

// What fails the scenario's thresholds in one condition's group (its answers below a hard floor
// apart).
std::vector<std::string> ThresholdFailures(const Thresholds& t, const GroupScores& g) {
  std::vector<std::string> failures;
  const std::string where = g.name == "at_rest" ? "at rest" : "under load";
  if (t.min_mean && g.weighted_mean && *g.weighted_mean < *t.min_mean)
    failures.push_back(where + ": mean score " + Number(*g.weighted_mean) + " < " +
                       Number(*t.min_mean));
  if (t.min_pass_rate && g.pass_rate() && *g.pass_rate() < *t.min_pass_rate)
    failures.push_back(where + ": pass rate " + Number(*g.pass_rate()) + " < " +
                       Number(*t.min_pass_rate));
  for (const auto& [criterion, floor] : t.criterion_floors)
    if (g.mean.contains(criterion) && g.mean.at(criterion) < floor)
      failures.push_back(where + ": " + criterion + " mean " + Number(g.mean.at(criterion)) +
                         " < " + Number(floor));
  return failures;
}

// The answers of one condition's group below a hard floor, when there are any.
std::optional<std::string> HardFloorFailure(const GroupScores& g) {
  if (g.hard_floor_failures == 0) return std::nullopt;
  return std::string(g.name == "at_rest" ? "at rest" : "under load") + ": " +
         std::to_string(g.hard_floor_failures) + " answers below the floor of a hard criterion";
}

// Each answer below a hard floor: a result that more scores (of other answers) cannot change.
std::vector<std::string> FinalFailures(const std::vector<Judged>& judged) {
  std::vector<std::string> failures;
  for (const Judged& j : judged)
    for (const std::string& criterion : j.below_floor)
      failures.push_back("final: answer " + std::to_string(j.answer->request_id) + " (" +
                         j.answer->task_id + ") is below the hard floor of " + criterion +
                         (j.by_judge ? " (scored by the calibrated judge)" : "") +
                         "; no further score can change that");
  return failures;
}

// The verdict against the scenario's thresholds, with the reasons. While fewer than
// min_scored_answers are scored it is "pending", and what the scores so far miss is provisional,
// not a failure; only a final result (`final_failures`) fails it then. With enough scored, any
// failure fails it, else it is "pending" while an agreement cannot be computed, else "pass".
// quality.not_worse_than, judged on the lower bound of each difference's 95% interval: a rule
// that holds is a note, one that does not a failure, one without scored answers on both sides
// pending (its reason added unless `quiet`, when too few answers are scored anyway).
void JudgeNonInferiority(const Thresholds& t, QualitySummary& s, bool quiet, bool& pending,
                         std::vector<std::string>& failures) {
  for (const auto& rule : t.not_worse_than) {
    const std::string what = rule.criterion == "weighted_mean" ? "weighted mean" : rule.criterion;
    const Difference* d = nullptr;
    for (const BaselineComparison& c : s.baselines)
      if (c.baseline == rule.baseline)
        for (const Difference& candidate : c.criteria)
          if (candidate.what == what) d = &candidate;
    const std::string named = "baseline " + rule.baseline + " on " + what;
    if (!d || !d->difference) {
      pending = true;
      if (!quiet)
        s.reasons.push_back("not_worse_than " + named + ": no answers of one side are scored yet");
      continue;
    }
    const std::string bound = "the lower bound of the 95% interval of the difference, " +
                              Number(d->difference->low) + ", ";
    if (d->difference->low >= -rule.margin)
      s.notes.push_back("not worse than " + named + " (margin " + Number(rule.margin) +
                        "): " + bound + "is at least -" + Number(rule.margin));
    else
      failures.push_back("not shown to be no worse than " + named + " (margin " +
                         Number(rule.margin) + "): " + bound + "is below -" + Number(rule.margin) +
                         "; the verdict uses the lower bound");
  }
}

void DecideVerdict(const Thresholds& t, const std::vector<std::string>& final_failures,
                   QualitySummary& s) {
  const int64_t min_scored = t.min_scored;
  const bool too_few = s.scored < min_scored;
  if (too_few)
    s.reasons.push_back(std::to_string(s.scored) + " answers are fully scored; at least " +
                        std::to_string(min_scored) + " are needed");
  const double min_agreement = t.min_agreement;
  bool pending = too_few;
  std::vector<std::string> failures;
  for (const CriterionAgreement& a : s.agreement) {
    if (!a.figure() && a.all_same) {
      s.notes.push_back("every score for " + a.criterion +
                        " is the same level, so its agreement figures are undefined; the "
                        "reviewers agreed on every answer");
    } else if (!a.figure()) {
      pending = true;
      if (too_few) continue;  // said already: too few scores
      s.reasons.push_back("agreement on " + a.criterion + " cannot be computed yet (" +
                          std::to_string(a.units) + " answers with two reviewers' scores)");
    } else if (*a.figure() < min_agreement) {
      failures.push_back("reviewers do not agree enough on " + a.criterion + " (" +
                         (a.kappa ? "kappa " : "alpha ") + Number(*a.figure()) + " < " +
                         Number(min_agreement) + "), so its scores cannot decide");
    }
  }
  for (const GroupScores& g : s.groups) {
    if (g.name != "at_rest" && g.name != "under_load") continue;
    if (g.answers == 0) continue;
    for (std::string& failure : ThresholdFailures(t, g))
      failures.push_back(std::move(failure));
    // Too few scored, each answer below a hard floor is a final failure of its own (below).
    if (std::optional<std::string> hard = HardFloorFailure(g); hard && !too_few)
      failures.push_back(std::move(*hard));
  }
  JudgeNonInferiority(t, s, too_few, pending, failures);
  s.pending_reasons = static_cast<int64_t>(s.reasons.size());
  if (too_few) {
    for (std::string& miss : failures)
      s.provisional_misses.push_back(s.ProvisionalLabel() + ": " + std::move(miss));
    failures = final_failures;
  }
  s.reasons.insert(s.reasons.end(), failures.begin(), failures.end());
  s.verdict = !failures.empty() ? QualityVerdict::kFail
              : pending         ? QualityVerdict::kPending
                                : QualityVerdict::kPass;
}

}  // namespace

std::string QualitySummary::ProvisionalLabel() const {
  if (!Provisional()) return "";
  return "provisional: from " + std::to_string(scored) + " of the " + std::to_string(needed) +
         " answers needed";
}

std::string_view Name(QualityVerdict verdict) {
  switch (verdict) {
    case QualityVerdict::kPass:
      return "pass";
    case QualityVerdict::kFail:
      return "fail";
    case QualityVerdict::kPending:
      break;
  }
  return "pending";
}

Result<QualitySummary> SummarizeQuality(store::Store& store, const store::RunInfo& run,
                                        const manifest::Bundle* bundle) {
  QualitySummary s;
  const Thresholds thresholds = ReadThresholds(run.scenario_json);
  s.needed = thresholds.min_scored;
  Result<AnswersBySource> by_source = ReadAnswersBySource(store, run.id);
  if (!by_source.ok()) return by_source.status();
  const std::vector<SampledAnswer>* answers = &by_source->assistant;
  s.sampled = static_cast<int64_t>(answers->size());
  if (bundle && bundle->corpus)
    s.automated = RunAutomatedChecks(*answers, *bundle);
  else
    s.notes.push_back("automated checks not run: the run's scenario and corpus could not be read");

  Result<Rubric> rubric = ReadRubric(store, run.id);
  if (!rubric.ok()) return rubric.status();
  if (rubric->criteria.empty()) {
    s.verdict = QualityVerdict::kPending;
    s.reasons.push_back("no answers have been exported for review yet (stagegate export " + run.id +
                        ")");
    s.pending_reasons = 1;
    return s;
  }

  Result<Scores> scores = ReadScores(store, run.id, rubric->criteria);
  if (!scores.ok()) return scores.status();
  const std::map<int64_t, AnswerScores>& reviewed = scores->by_scorer[store::kReviewersScorer];
  s.assigned = static_cast<int64_t>(reviewed.size());
  s.reviewers = static_cast<int64_t>(scores->reviewers.size());
  std::vector<Judged> judged = JudgeScoredAnswers(*answers, reviewed, *rubric);
  s.calibration = CalibrateJudges(*scores, *rubric, thresholds.judge);
  for (const JudgeCalibration& j : s.calibration)
    if (j.calibrated) {
      AddJudgeOnly(*answers, scores->by_scorer[j.scorer], *rubric, judged);
      s.judge_model = j.model;
    }
  s.scored = static_cast<int64_t>(judged.size());
  s.scored_by_judge =
      std::count_if(judged.begin(), judged.end(), [](const Judged& j) { return j.by_judge; });
  for (const Judged& j : judged) {
    s.answer_scores.push_back(j.weighted);
    s.answer_passed[j.answer->request_id] = j.passed;
  }
  // An LLM judge's scores: a separate, labelled scorer, in the verdict only through the answers
  // a calibrated judge scored above.
  for (const auto& [scorer, of_scorer] : scores->by_scorer)
    if (scorer != store::kReviewersScorer)
      s.judges.push_back(GroupOf(JudgeScoredAnswers(*answers, of_scorer, *rubric), scorer,
                                 [](const SampledAnswer&) { return true; }));
  s.groups = GroupsOf(judged, bundle);

  const std::vector<std::string> names(scores->reviewers.begin(), scores->reviewers.end());
  for (const Criterion& c : rubric->criteria)
    s.agreement.push_back(AgreementOn(c, reviewed, names, s.adjudication));
  for (Adjudication& item : s.adjudication)
    for (const SampledAnswer& a : *answers)
      if (a.request_id == item.request_id) item.task_id = a.task_id;
  s.effort = EffortOf(scores->seconds_by_reviewer);
  Result<CorrectionSummary> correction = ReadCorrection(store, run.id, *by_source, s);
  if (!correction.ok()) return correction.status();
  s.correction = std::move(*correction);
  s.baselines = CompareBaselines(*by_source, bundle, judged, reviewed, *rubric);
  DecideVerdict(thresholds, FinalFailures(judged), s);
  return s;
}

namespace {

json BaselinesJson(const std::vector<BaselineComparison>& baselines) {
  json out = json::array();
  for (const BaselineComparison& c : baselines)
    out.push_back(ComparisonToJson(c));
  return out;
}

json ToolCallShareJson(const ToolCallShare& share) {
  return {{"passed", share.passed},
          {"run", share.run},
          {"share", share.run ? json(static_cast<double>(share.passed) / share.run) : json()},
          {"share_ci95", share.ci ? json::array({share.ci->low, share.ci->high}) : json()},
          {"failures", share.failures}};
}

json ToolCallsJson(const std::vector<ToolCallCorrectness>& tool_calls) {
  json out = json::array();
  for (const ToolCallCorrectness& t : tool_calls)
    out.push_back({{"stage", t.stage},
                   {"at_rest", ToolCallShareJson(t.at_rest)},
                   {"under_load", ToolCallShareJson(t.under_load)}});
  return out;
}

// "at rest 9 of 10 (0.9, 95% Wilson interval 0.6 to 0.98; failed: argument_value 1)".
std::string ToolCallShareText(const std::string& condition, const ToolCallShare& share) {
  if (share.run == 0) return condition + " none run";
  std::string text =
      condition + " " + std::to_string(share.passed) + " of " + std::to_string(share.run) + " (" +
      Number(static_cast<double>(share.passed) / share.run) + ", 95% Wilson interval " +
      Number(share.ci->low) + " to " + Number(share.ci->high);
  std::vector<std::string> failures;
  for (const auto& [failure, count] : share.failures)
    failures.push_back(failure + " " + std::to_string(count));
  if (!failures.empty()) text += "; failed: " + Join(failures, ", ");
  return text + ")";
}

// The answers' counts, with those reviewers scored and those a calibrated judge did.
json AnswersJson(const QualitySummary& s) {
  return {{"sampled", s.sampled},
          {"assigned", s.assigned},
          {"scored", s.scored},
          {"scored_by_reviewers", s.scored - s.scored_by_judge},
          {"scored_by_judge", s.scored_by_judge},
          {"judge", s.judge_model.empty() ? json() : json(s.judge_model)},
          {"needed", s.needed}};
}

json CalibrationsJson(const QualitySummary& s) {
  json out = json::array();
  for (const JudgeCalibration& j : s.calibration)
    out.push_back(CalibrationJson(j));
  return out;
}

// "(30 by reviewers, 10 by the judge m)" when a calibrated judge scored some of `answers`.
std::string ScoredBy(const QualitySummary& s, int64_t answers, int64_t by_judge) {
  if (by_judge == 0) return "";
  return " (" + std::to_string(answers - by_judge) + " by reviewers, " + std::to_string(by_judge) +
         " by the judge " + s.judge_model + ")";
}

}  // namespace

json QualityToJson(const QualitySummary& s) {
  const auto interval = [](const std::optional<stats::Interval>& i) {
    return i ? json::array({i->low, i->high}) : json(nullptr);
  };
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  const auto group_json = [&](const GroupScores& g) {
    json criteria = json::object();
    for (const auto& [criterion, mean] : g.mean) {
      auto ci = g.mean_ci.find(criterion);
      criteria[criterion] = {
          {"mean", mean},
          {"ci95",
           ci == g.mean_ci.end() ? json(nullptr) : json::array({ci->second.low, ci->second.high})}};
    }
    return json{{"group", g.name},
                {"answers", g.answers},
                {"criteria", criteria},
                {"weighted_mean", optional(g.weighted_mean)},
                {"weighted_mean_ci95", interval(g.weighted_mean_ci)},
                {"passed", g.passed},
                {"pass_rate", optional(g.pass_rate())},
                {"pass_rate_ci95", interval(g.pass_rate_ci)},
                {"hard_floor_failures", g.hard_floor_failures},
                {"by_reviewers", g.answers - g.by_judge},
                {"by_judge", g.by_judge}};
  };
  json groups = json::array();
  for (const GroupScores& g : s.groups)
    groups.push_back(group_json(g));
  json judges = json::array();
  for (const GroupScores& g : s.judges)
    judges.push_back(group_json(g));
  json agreement = json::array();
  for (const CriterionAgreement& a : s.agreement)
    agreement.push_back({{"criterion", a.criterion},
                         {"answers", a.units},
                         {"kappa_quadratic", optional(a.kappa)},
                         {"alpha_ordinal", optional(a.alpha_ordinal)},
                         {"alpha_interval", optional(a.alpha_interval)}});
  json adjudication = json::array();
  for (const Adjudication& a : s.adjudication)
    adjudication.push_back({{"request_id", a.request_id},
                            {"task", a.task_id},
                            {"criterion", a.criterion},
                            {"ratings", a.ratings}});
  json effort = json::array();
  for (const ReviewerEffort& e : s.effort)
    effort.push_back({{"reviewer", e.reviewer},
                      {"items", e.items},
                      {"total_s", e.total_s},
                      {"median_s", optional(e.median_s)}});
  json by_kind = json::object();
  for (const auto& [kind, counts] : s.automated.by_kind)
    by_kind[kind] = {{"passed", counts.first}, {"run", counts.second}};
  return {{"verdict", Name(s.verdict)},
          {"reasons", s.reasons},
          {"answers", AnswersJson(s)},
          {"provisional", s.Provisional()},
          {"provisional_misses", s.provisional_misses},
          {"reviewers", s.reviewers},
          {"groups", groups},
          {"agreement", agreement},
          {"adjudication", adjudication},
          {"effort", effort},
          {"correction", CorrectionToJson(s.correction)},
          {"baselines", BaselinesJson(s.baselines)},
          {"automated_checks",
           {{"label", "automated"},
            {"answers", s.automated.answers},
            {"checks", s.automated.checks},
            {"passed", s.automated.passed},
            {"by_kind", by_kind},
            {"failures", s.automated.failures},
            {"tool_calls", ToolCallsJson(s.automated.tool_calls)}}},
          {"llm_judges", judges},
          {"judge_calibration", CalibrationsJson(s)},
          {"notes", s.notes}};
}

std::vector<std::string> QualityLines(const QualitySummary& s) {
  std::vector<std::string> lines;
  lines.push_back("quality: " + std::string(Name(s.verdict)) + " (" + std::to_string(s.scored) +
                  " of " + std::to_string(s.sampled) + " sampled answers fully scored" +
                  (s.scored_by_judge ? ": " + std::to_string(s.scored - s.scored_by_judge) +
                                           " by " + std::to_string(s.reviewers) + " reviewers, " +
                                           std::to_string(s.scored_by_judge) +
                                           " by the calibrated judge " + s.judge_model + ")"
                                     : " by " + std::to_string(s.reviewers) + " reviewers)"));
  for (const std::string& reason : s.reasons)
    lines.push_back("  " + reason);
  for (const std::string& miss : s.provisional_misses)
    lines.push_back("  " + miss + " (not a failure: more scores can change it)");
  // Every figure of a partial sample says what it rests on.
  const std::string provisional = s.Provisional() ? " (" + s.ProvisionalLabel() + ")" : "";
  for (const GroupScores& g : s.groups) {
    if (g.answers == 0) continue;
    std::string line = "  " + g.name + ": " + std::to_string(g.answers) + " answers" +
                       ScoredBy(s, g.answers, g.by_judge);
    if (g.weighted_mean) {
      line += ", mean " + Number(*g.weighted_mean);
      if (g.weighted_mean_ci)
        line +=
            " [" + Number(g.weighted_mean_ci->low) + ", " + Number(g.weighted_mean_ci->high) + "]";
    }
    line += ", pass rate " + Number(*g.pass_rate());
    if (g.hard_floor_failures)
      line += ", " + std::to_string(g.hard_floor_failures) + " below a hard floor";
    lines.push_back(line + provisional);
  }
  for (const CriterionAgreement& a : s.agreement) {
    if (a.units == 0) continue;
    std::string line = "  agreement " + a.criterion + ": ";
    if (a.kappa) line += "kappa " + Number(*a.kappa) + ", ";
    line += "alpha ordinal " + (a.alpha_ordinal ? Number(*a.alpha_ordinal) : std::string("-")) +
            ", interval " + (a.alpha_interval ? Number(*a.alpha_interval) : std::string("-")) +
            " over " + std::to_string(a.units) + " answers";
    lines.push_back(line + provisional);
  }
  if (!s.adjudication.empty())
    lines.push_back("  " + std::to_string(s.adjudication.size()) +
                    " ratings more than one level apart, to adjudicate (see --json)");
  for (const ReviewerEffort& e : s.effort)
    if (e.items)
      lines.push_back("  effort " + e.reviewer + ": " + std::to_string(e.items) + " items, " +
                      Number(e.total_s / 60, 1) + " min, median " + Number(*e.median_s, 1) +
                      " s an item");
  for (std::string& line : CorrectionLines(s.correction))
    lines.push_back(std::move(line) + provisional);
  for (const BaselineComparison& c : s.baselines)
    for (std::string& line : ComparisonLines(c))
      lines.push_back(std::move(line));
  if (s.automated.checks)
    lines.push_back(
        "automated checks (not reviewer scores): " + std::to_string(s.automated.passed) + " of " +
        std::to_string(s.automated.checks) + " passed on " + std::to_string(s.automated.answers) +
        " answers");
  for (const ToolCallCorrectness& t : s.automated.tool_calls)
    lines.push_back("  tool calls judged exactly, stage " + t.stage + ": " +
                    ToolCallShareText("at rest", t.at_rest) + "; " +
                    ToolCallShareText("under load", t.under_load));
  for (const GroupScores& g : s.judges)
    if (g.answers)
      lines.push_back("LLM judge " + g.name.substr(g.name.find(':') + 1) +
                      " (not reviewer scores): " + std::to_string(g.answers) + " answers, mean " +
                      Number(*g.weighted_mean) + ", pass rate " + Number(*g.pass_rate()));
  for (const JudgeCalibration& j : s.calibration)
    for (std::string& line : CalibrationLines(j))
      lines.push_back(std::move(line));
  for (const std::string& note : s.notes)
    lines.push_back("note: " + note);
  return lines;
}

}  // namespace stagegate::quality
