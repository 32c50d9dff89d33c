#include "manifest/describe.h"

#include <algorithm>
#include <map>
#include <optional>

#include "base/redact.h"
#include "base/strings.h"

namespace stagegate::manifest {
namespace {

void Append(std::vector<std::string>& lines, const std::vector<std::string>& more) {
  lines.insert(lines.end(), more.begin(), more.end());
}

std::string Counts(const std::map<std::string, int>& counts) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts)
    parts.push_back(name + " " + std::to_string(count));
  return Join(parts, ", ");
}

std::string CapabilityList(const std::vector<Capability>& capabilities) {
  std::vector<std::string> names;
  for (Capability capability : capabilities)
    names.emplace_back(NameOf(capability, kCapabilityNames));
  return names.empty() ? "bare model" : Join(names, " + ");
}

std::string DescribeLoad(const LoadPhase& phase) {
  std::string text;
  const bool levels =
      !phase.rate_levels.empty() || !phase.concurrency_levels.empty() || phase.search;
  if (phase.search) {
    text = "search from " +
           (phase.rate ? FormatNumber(*phase.rate) + "/s (" +
                             std::string(NameOf(phase.arrival, kArrivalNames)) + ")"
                       : std::to_string(phase.concurrency.value_or(1)) + " concurrent") +
           (phase.up_to ? " up to " + FormatNumber(*phase.up_to) : std::string()) + ", to within " +
           FormatNumber(phase.resolution * 100) + "%";
  } else if (!phase.rate_levels.empty()) {
    std::vector<std::string> levels;
    for (double level : phase.rate_levels)
      levels.push_back(FormatNumber(level));
    text = "rates " + Join(levels, ", ") + " /s (" + NameOf(phase.arrival, kArrivalNames) + ")";
  } else if (!phase.concurrency_levels.empty()) {
    std::vector<std::string> levels;
    for (int64_t level : phase.concurrency_levels)
      levels.push_back(std::to_string(level));
    text = "concurrencies " + Join(levels, ", ");
  } else if (phase.concurrency) {
    text = "concurrency " + std::to_string(*phase.concurrency);
  } else if (phase.rate) {
    text =
        std::string(NameOf(phase.arrival, kArrivalNames)) + " " + FormatNumber(*phase.rate) + "/s";
    if (phase.burstiness) text += " (burstiness " + FormatNumber(*phase.burstiness) + ")";
    if (phase.ramp_to) text += " ramping to " + FormatNumber(*phase.ramp_to) + "/s";
    for (const Spike& spike : phase.spikes)
      text += ", spike to " + FormatNumber(spike.rate) + "/s at " + FormatNumber(spike.at_s) +
              " s for " + FormatNumber(spike.duration_s) + " s";
  }
  if (phase.duration_s)
    text += (levels ? ", each level " : ", ") + FormatNumber(*phase.duration_s) + " s";
  if (phase.max_duration_s)
    text += " (up to " + FormatNumber(*phase.max_duration_s) + " s while it cannot tell)";
  if (phase.requests) text += ", " + std::to_string(*phase.requests) + " requests";
  if (phase.max_concurrency)
    text += ", at most " + std::to_string(*phase.max_concurrency) + " in flight (" +
            (phase.on_full == OnFull::kQueue ? "queue" : "drop") + " the rest)";
  if (phase.bisect > 0) text += ", bisect " + std::to_string(phase.bisect);
  if (phase.kind == PhaseKind::kSweep)
    text += "; a level passes when its thresholds hold, it completes " +
            FormatNumber(phase.keep_pace * 100) + "% of arrivals, latency settles, and " +
            std::to_string(phase.min_completed) + " requests completed";
  return text;
}

std::vector<std::string> CorpusLines(const Corpus& corpus) {
  std::vector<std::string> lines;
  int restricted = 0;
  for (const Document& document : corpus.documents)
    restricted += document.access.empty() ? 0 : 1;
  lines.push_back("corpus       " + corpus.name + " " + corpus.version + " (" + corpus.dir +
                  "), owner " + corpus.owner);
  lines.push_back("             " + std::to_string(corpus.tasks.size()) + " tasks, " +
                  std::to_string(corpus.personas.size()) + " personas, " +
                  std::to_string(corpus.documents.size()) + " documents (" +
                  std::to_string(restricted) + " restricted), " +
                  std::to_string(corpus.tools.size()) + " tools");
  std::map<std::string, int> by_category, by_persona, by_need;
  for (const Task& task : corpus.tasks) {
    ++by_category[task.category];
    ++by_persona[task.persona.name];
    if (task.needs.empty()) ++by_need["none"];
    for (Capability need : task.needs)
      ++by_need[NameOf(need, kCapabilityNames)];
  }
  lines.push_back("  by category  " + Counts(by_category));
  lines.push_back("  by persona   " + Counts(by_persona));
  lines.push_back("  by need      " + Counts(by_need));
  std::string required;
  for (const Task& task : corpus.tasks)
    if (task.required) required += (required.empty() ? "" : ", ") + task.id;
  if (!required.empty())
    lines.push_back("  required     " + required + " (must pass in every run)");
  return lines;
}

int TasksSent(const Corpus* corpus, const EffectiveStage& stage) {
  if (!corpus) return 0;
  int count = 0;
  for (const Task& task : corpus->tasks)
    count += stage.tasks == TaskSelection::kAll || Covers(stage.capabilities, task.needs) ? 1 : 0;
  return count;
}

// The scenario's input (synthetic, trace, sessions, shared prefixes) and how its client reads.
std::vector<std::string> InputLines(const Scenario& s) {
  std::vector<std::string> lines;
  const auto spread = [](const TokenDistribution& d) {
    return FormatNumber(d.mean) + " ± " + FormatNumber(d.std);
  };
  if (s.input.source == InputSource::kSynthetic)
    lines.push_back("input        synthetic: " + spread(*s.input.input_tokens) + " tokens in, " +
                    spread(*s.input.output_tokens) + " out" +
                    (s.input.extra_body.empty() ? "" : ", extra " + s.input.extra_body.dump()));
  if (s.input.source == InputSource::kTrace)
    lines.push_back("input        trace " + s.input.trace.written +
                    ", replayed at each open-loop "
                    "phase's rate; hash_ids blocks of " +
                    std::to_string(s.input.block_tokens) + " tokens");
  if (const std::optional<SessionSpec>& sessions = s.input.sessions) {
    std::string line = "sessions     ";
    line += sessions->turns ? spread(*sessions->turns) + " turns"
                            : std::string("each task's prompt and follow-ups");
    if (sessions->follow_up_tokens)
      line += ", follow-ups of " + spread(*sessions->follow_up_tokens) + " tokens";
    line += ", think time " + spread(sessions->think_ms) + " ms; requests count sessions";
    lines.push_back(line);
  }
  if (const std::optional<SharedPrefixSpec>& prefix = s.input.shared_prefix)
    lines.push_back("prefixes     " + std::to_string(prefix->count) + " shared prefixes of " +
                    std::to_string(prefix->tokens) + " tokens, starting " +
                    FormatNumber(prefix->share * 100) + "% of the prompts");
  if (s.client != ClientSettings{})
    lines.push_back(std::string("client       ") + (s.client.busy_poll ? "busy polling, " : "") +
                    "arrivals stamped " +
                    (s.client.receive_times == ReceiveTimes::kRead
                         ? "when read"
                         : "by the kernel's receive time"));
  return lines;
}

// The scenario, its manifest and target, and what it sends: corpus, input and rubric.
std::vector<std::string> SubjectLines(const Bundle& bundle) {
  const Scenario& s = bundle.scenario;
  std::vector<std::string> lines;
  lines.push_back("scenario     " + s.name + " (" + s.file + "), seed " + std::to_string(s.seed));
  lines.push_back(
      "manifest     model " + s.manifest.model + " " + s.manifest.model_version +
      (s.manifest.hardware.empty() ? "" : "; hardware " + s.manifest.hardware) +
      (s.manifest.serving_stack.empty() ? "" : "; serving " + s.manifest.serving_stack));
  const Target& t = s.target;
  lines.push_back("target       " + std::string(NameOf(t.kind, kTargetKindNames)) +
                  (t.kind == TargetKind::kSim ? " (profile " + t.sim_profile + ")"
                                              : " " + UrlWithoutUserinfo(t.base_url)) +
                  ", model " + t.model + ", " + NameOf(t.endpoint, kEndpointNames) + ", " +
                  (t.stream ? "streaming" : "not streaming (no TTFT or ITL can be measured)"));
  if (bundle.corpus) Append(lines, CorpusLines(*bundle.corpus));
  Append(lines, InputLines(s));
  if (bundle.rubric) {
    std::vector<std::string> criteria;
    for (const Criterion& c : bundle.rubric->criteria)
      criteria.push_back(c.id + (c.hard ? " (hard)" : " " + FormatNumber(c.weight)));
    lines.push_back("rubric       " + bundle.rubric->id + ": " + Join(criteria, ", "));
  }
  return lines;
}

// The stages in order, and the load of each phase.
std::vector<std::string> StageLines(const Bundle& bundle) {
  const Scenario& s = bundle.scenario;
  const Corpus* corpus = bundle.corpus ? &*bundle.corpus : nullptr;
  std::vector<std::string> lines = {"stages       in order, each adding to the one before:"};
  const std::vector<EffectiveStage> stages = EffectiveStages(s);
  for (size_t i = 0; i < stages.size(); ++i) {
    const EffectiveStage& stage = stages[i];
    std::vector<std::string> phases;
    for (PhaseKind kind : stage.phases)
      phases.emplace_back(NameOf(kind, kPhaseNames));
    std::string line = "  " + std::to_string(i + 1) + ". " + stage.name + ": " +
                       CapabilityList(stage.capabilities) + "; phases " + Join(phases, ", ");
    if (corpus) line += "; " + std::to_string(TasksSent(corpus, stage)) + " tasks";
    lines.push_back(line);
  }
  lines.push_back("phases");
  for (const LoadPhase& phase : s.phases)
    lines.push_back("  " + std::string(NameOf(phase.kind, kPhaseNames)) +
                    std::string(10 - std::string(NameOf(phase.kind, kPhaseNames)).size(), ' ') +
                    DescribeLoad(phase));
  return lines;
}

// "ttft p95 <= 1500 ms; completion >= 99%".
std::string Limits(const std::vector<LatencyThreshold>& latency, double completion_rate) {
  std::vector<std::string> parts;
  for (const LatencyThreshold& t : latency)
    parts.push_back(std::string(NameOf(t.metric, kLatencyMetricNames)) + " p" +
                    FormatNumber(t.percentile) + " <= " + FormatNumber(t.max_ms) + " ms");
  parts.push_back("completion >= " + FormatNumber(completion_rate * 100, 2) + "%");
  return Join(parts, "; ");
}

// Where a baseline's answers come from: its recorded answers, or the service asked at rest.
std::string BaselineSource(const Bundle& bundle, const Baseline& baseline) {
  if (baseline.endpoint) {
    const Stage& e = *baseline.endpoint;
    return "asked at rest" + (e.base_url ? " at " + *e.base_url : std::string(" at the target")) +
           (baseline.answer_at.empty() ? ""
                                       : ", a plain JSON API at " + e.path.value_or("") +
                                             " answering at " + baseline.answer_at) +
           (e.body.empty() ? "" : ", body " + e.body.dump());
  }
  for (const auto& [name, answers] : bundle.baseline_answers)
    if (name == baseline.name) return std::to_string(answers.size()) + " recorded answers";
  return "recorded answers";
}

// What each of the three release conditions asks.
std::vector<std::string> ConditionLines(const Bundle& bundle) {
  const Scenario& s = bundle.scenario;
  std::vector<std::string> lines;
  lines.push_back("condition 1  responsiveness (steady and burst of the final stage): " +
                  Limits(s.thresholds.latency, s.thresholds.completion_rate));
  for (const ThresholdScope& scope : s.thresholds.scopes)
    lines.push_back(
        "  scope " + scope.name + " (" +
        (scope.tag.empty() ? "category " + scope.category : "tag " + scope.tag) +
        ", pending below " + std::to_string(scope.min_requests) + " requests): " +
        Limits(scope.latency, scope.completion_rate.value_or(s.thresholds.completion_rate)));
  if (bundle.rubric) {
    const QualityThresholds& q = s.quality;
    std::string text = "quality: " + std::to_string(q.samples_at_rest) + " answers at rest + " +
                       std::to_string(q.samples_under_load) + " under load, " +
                       std::to_string(q.reviewers_per_answer) + " reviewers each, at least " +
                       std::to_string(q.min_scored_answers) +
                       " scored, agreement >= " + FormatNumber(q.min_agreement);
    if (q.min_mean) text += ", mean >= " + FormatNumber(*q.min_mean);
    if (q.min_pass_rate) text += ", pass rate >= " + FormatNumber(*q.min_pass_rate * 100, 2) + "%";
    for (const auto& [ref, floor] : q.criterion_floors)
      text += ", " + ref.name + " >= " + FormatNumber(floor);
    for (const Ref& ref : q.hard_criteria)
      text += ", " + ref.name + " must pass";
    if (q.judge)
      text += "; judge " + q.judge->model + " may score what reviewers did not once its kappa's " +
              "lower bound >= " + FormatNumber(q.judge->min_kappa) +
              " on >= " + std::to_string(q.judge->min_overlap) + " answers both scored";
    if (q.no_regression_from == RegressionBaseline::kApproved)
      text += ", no task may regress from the approved run";
    for (const NotWorseThan& rule : q.not_worse_than)
      text += ", not worse than " + rule.baseline.name + " on " + rule.criterion.name +
              " by more than " + FormatNumber(rule.margin) + " (interval's lower bound)";
    for (size_t i = 0; i < s.baselines.size(); ++i)
      text += (i == 0 ? "; scored blind beside baseline " : ", ") + s.baselines[i].name + " (" +
              BaselineSource(bundle, s.baselines[i]) + ")";
    lines.push_back("condition 2  " + text);
  } else {
    lines.push_back("condition 2  quality: no rubric; condition 2 will stay pending");
  }
  std::vector<std::string> statuses;
  for (int64_t status : s.recovery.shed_statuses)
    statuses.push_back(std::to_string(status));
  lines.push_back("condition 3  recoverability: shed with " + Join(statuses, "/") +
                  (s.recovery.require_retry_after ? " and Retry-After" : "") + " within " +
                  FormatNumber(s.recovery.max_shed_latency_ms) + " ms; recover within " +
                  FormatNumber(s.recovery.max_recovery_s) + " s; " +
                  std::to_string(s.faults.access_denial.size()) + " access-denial, " +
                  std::to_string(s.faults.tool_outage.size()) + " tool-outage probes");
  return lines;
}

// The price of serving the test, and who owns each decision: beside the verdict.
std::vector<std::string> CostAndDecisionLines(const Scenario& s) {
  std::vector<std::string> lines;
  if (const std::optional<Cost>& cost = s.cost) {
    const bool gpu = cost->per == CostPer::kGpu;
    lines.push_back("cost         " + FormatNumber(cost->price_per_hour) + " " + cost->currency +
                    " an hour per " + (gpu ? "GPU" : "instance") + " x " +
                    std::to_string(cost->count) +
                    "; source: " + (cost->source.empty() ? "not given" : cost->source) +
                    " (information beside the verdict, not a check)");
  } else {
    lines.push_back("cost         no price: the report gives instance-seconds per accepted answer");
  }
  if (s.decisions.present) {
    std::vector<std::string> owners;
    for (const auto& [condition, owner] : s.decisions.owners)
      owners.push_back(condition + ": " + owner);
    lines.push_back("decisions    " +
                    (owners.empty() ? std::string("no owners named") : Join(owners, "; ")) +
                    (s.decisions.require_signoff
                         ? "; ready needs each owner's acceptance (stagegate signoff)"
                         : "; their sign-offs are shown, and a rejection makes it not ready"));
  }
  return lines;
}

// How to make the final stage run `kind`: define it, or list it in the stage's phases.
std::string AddPhase(const Scenario& s, const EffectiveStage& final_stage, PhaseKind kind) {
  const std::string name(NameOf(kind, kPhaseNames));
  if (!s.FindPhase(kind)) return "add phases." + name;
  return "list " + name + " in the phases of stage '" + final_stage.name + "'";
}

bool Runs(const EffectiveStage& stage, PhaseKind kind) {
  return std::find(stage.phases.begin(), stage.phases.end(), kind) != stage.phases.end();
}

// Condition 2's note, when the answers a run sends to review cannot reach min_scored_answers:
// under load one a task of the final stage's steady phase, at rest as many as asked (docs/cli.md,
// "Quality samples").
std::optional<std::string> TooFewSamples(const Bundle& bundle, const EffectiveStage& last) {
  const Scenario& s = bundle.scenario;
  const QualityThresholds& q = s.quality;
  const bool steady = Runs(last, PhaseKind::kSteady);
  const bool by_task = s.input.source == InputSource::kCorpus && bundle.corpus;
  const int64_t tasks = by_task ? TasksSent(&*bundle.corpus, last) : 0;
  const int64_t under_load = !steady   ? 0
                             : by_task ? std::min(q.samples_under_load, tasks)
                                       : q.samples_under_load;
  const int64_t most = q.samples_at_rest + under_load;
  if (most >= q.min_scored_answers) return std::nullopt;
  return "condition 2 (quality) cannot be decided: at most " + std::to_string(most) +
         " answers go to review (" + std::to_string(q.samples_at_rest) + " at rest, " +
         (!steady ? std::string("none under load: the final stage runs no steady phase")
                  : std::to_string(under_load) + " under load" +
                        (by_task ? ": one a task of the final stage's " + std::to_string(tasks)
                                 : std::string())) +
         "), fewer than quality.min_scored_answers (" + std::to_string(q.min_scored_answers) +
         "); raise quality.samples.at_rest or lower quality.min_scored_answers";
}

}  // namespace

std::vector<std::string> DescribeScenario(const Bundle& bundle, const Fingerprint& fingerprint) {
  std::vector<std::string> lines = SubjectLines(bundle);
  Append(lines, StageLines(bundle));
  Append(lines, ConditionLines(bundle));
  Append(lines, CostAndDecisionLines(bundle.scenario));
  lines.push_back("fingerprint  " + fingerprint.value);
  return lines;
}

std::vector<std::string> UndecidedConditions(const Bundle& bundle) {
  const Scenario& s = bundle.scenario;
  const std::vector<EffectiveStage> stages = EffectiveStages(s);
  if (stages.empty()) return {};
  const EffectiveStage& last = stages.back();
  const std::string final_stage = "stage '" + last.name + "', the final one,";
  std::vector<std::string> notes;
  if (!Runs(last, PhaseKind::kSteady) && !Runs(last, PhaseKind::kBurst))
    notes.push_back("condition 1 (responsiveness) cannot be decided: " + final_stage +
                    " runs no steady or burst phase; " + AddPhase(s, last, PhaseKind::kSteady));
  else if (s.thresholds.latency.empty())
    notes.push_back(
        "condition 1 (responsiveness) cannot judge latency, only completion: no latency "
        "threshold; add thresholds.latency (e.g. - {metric: e2e, percentile: 95, max_ms: 20000})");
  if (!bundle.rubric)
    notes.push_back(
        "condition 2 (quality) cannot be decided: no rubric to score answers on; add rubric "
        "(a rubric file) and a quality section");
  else if (std::optional<std::string> note = TooFewSamples(bundle, last))
    notes.push_back(*note);
  if (!Runs(last, PhaseKind::kOverload))
    notes.push_back("condition 3 (recoverability) cannot be decided: " + final_stage +
                    " runs no overload phase; " + AddPhase(s, last, PhaseKind::kOverload) +
                    " (a rate above what the application can take, e.g. {rate: 40, arrival: "
                    "constant, duration_s: 5})");
  if (!Runs(last, PhaseKind::kRecovery))
    notes.push_back("condition 3 (recoverability) cannot be decided: " + final_stage +
                    " runs no recovery phase after the overload; " +
                    AddPhase(s, last, PhaseKind::kRecovery) +
                    " (e.g. {rate: 1, arrival: constant, duration_s: 35, window_s: 5})");
  return notes;
}

}  // namespace stagegate::manifest
