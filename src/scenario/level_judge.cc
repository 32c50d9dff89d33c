#include "scenario/level_judge.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "base/strings.h"
#include "manifest/enum_name.h"

namespace stagegate::scenario {
namespace {

using json = nlohmann::json;

double Seconds(int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

bool Completed(const load::RequestRecord& r, const std::set<std::string>& refusal_tasks) {
  return r.outcome == load::Outcome::kOk ||
         (r.outcome == load::Outcome::kDenied && refusal_tasks.contains(r.task_id));
}

stats::SustainOptions OptionsFor(const LevelCriteria& criteria, bool open_loop, double window_s,
                                 double confidence, bool streamed) {
  return {.open_loop = open_loop,
          .window_s = window_s,
          .min_share = criteria.min_share,
          .min_completed = criteria.min_completed,
          .confidence = confidence,
          .latency_name = streamed ? "TTFT" : "latency"};
}

// The latency of a completed request that a threshold on `metric` reads, in ms; nullopt for a
// metric a request cannot show before the level ends (ITL, TPOT, ...).
std::optional<double> ThresholdValueMs(const load::RequestRecord& r,
                                       manifest::LatencyMetric metric) {
  if (!r.sent_ns || !r.end_ns) return std::nullopt;
  switch (metric) {
    case manifest::LatencyMetric::kTtft:
      if (!r.first_token_ns) return std::nullopt;
      return static_cast<double>(*r.first_token_ns - *r.sent_ns) / 1e6;
    case manifest::LatencyMetric::kE2e:
      return static_cast<double>(*r.end_ns - *r.sent_ns) / 1e6;
    case manifest::LatencyMetric::kCorrected:
      return static_cast<double>(*r.end_ns - r.intended_ns) / 1e6;
    default:
      return std::nullopt;
  }
}

// A threshold the level can no longer meet, however its remaining requests go: enough of its
// requests already over a latency limit, or already failed, out of the most it can have.
std::string CertainFailure(std::span<const load::RequestRecord> finished,
                           const LevelCriteria& criteria, int64_t planned) {
  if (planned <= 0) return "";
  const double most = static_cast<double>(planned);
  for (const manifest::LatencyThreshold& t : criteria.thresholds.latency) {
    int64_t over = 0;
    for (const load::RequestRecord& r : finished) {
      if (r.warmup || r.outcome != load::Outcome::kOk) continue;
      const std::optional<double> value = ThresholdValueMs(r, t.metric);
      if (value && *value > t.max_ms) ++over;
    }
    // With n <= planned values, the p-th percentile is over the limit once the values over it
    // reach (1 - p/100) (n - 1) + 2.
    if (static_cast<double>(over) >= (1 - t.percentile / 100) * most + 2)
      return "thresholds: " +
             std::string(manifest::NameOf(t.metric, manifest::kLatencyMetricNames)) + " p" +
             FormatNumber(t.percentile, 0) + " <= " + FormatNumber(t.max_ms, 3) +
             " ms cannot hold (" + std::to_string(over) + " of at most " + std::to_string(planned) +
             " requests already over it)";
  }
  int64_t failed = 0;
  for (const load::RequestRecord& r : finished)
    if (!r.warmup && !Completed(r, criteria.refusal_tasks)) ++failed;
  if (static_cast<double>(failed) > (1 - criteria.thresholds.completion_rate) * most)
    return "thresholds: completion rate >= " +
           FormatNumber(criteria.thresholds.completion_rate, 4) + " cannot hold (" +
           std::to_string(failed) + " of at most " + std::to_string(planned) +
           " requests already failed)";
  return "";
}

// Open loop: the pace check's span and its counts. Closed loop, where arrivals follow
// completions: the whole step, first send to last end, and its answers.
stats::RateWindow RatesOf(const stats::SustainFinding& sustain, const load::PhaseMetrics& metrics,
                          bool open_loop) {
  if (open_loop && sustain.pace && sustain.pace->span_s > 0) {
    const stats::PaceCheck& p = *sustain.pace;
    return {.arrivals = true,
            .to_s = p.span_s,
            .arrived = p.arrived,
            .completed = p.completed,
            .answered = p.answered,
            .met_slos = p.met_slos,
            .output_tokens = p.output_tokens};
  }
  return {.arrivals = false,
          .to_s = metrics.window_s,
          .arrived = metrics.sent,
          .completed = metrics.completed,
          .answered = metrics.completed,
          .met_slos = metrics.met_slos,
          .output_tokens = metrics.output_token_throughput * metrics.window_s};
}

// Which answers met every SLO, for the level's goodput. Only the judgement of a level that
// ended needs it, so the live controller's looks every 250 ms do not pay for it. `requests` is
// LevelRequests(records, ...) without `now_ns`: one entry per record but warmup, in order.
void MarkSlos(std::span<const load::RequestRecord> records, const std::vector<load::Slo>& slos,
              std::vector<stats::LevelRequest>& requests) {
  size_t i = 0;
  for (const load::RequestRecord& r : records) {
    if (r.warmup) continue;
    assert(i < requests.size());
    stats::LevelRequest& q = requests[i++];
    if (q.answered) q.met_slos = load::MeetsSlos(load::LatencyOf(r), slos);
  }
}

}  // namespace

const char* VerdictName(LevelVerdict verdict) {
  switch (verdict) {
    case LevelVerdict::kPass:
      return "pass";
    case LevelVerdict::kFail:
      return "fail";
    case LevelVerdict::kInconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

stats::LevelOutcome OutcomeOf(double level, const LevelJudgement& judgement) {
  return {
      .level = level,
      .passed = judgement.verdict == LevelVerdict::kPass,
      .inconclusive = judgement.verdict == LevelVerdict::kInconclusive,
      .failed = judgement.first_failed == "sustained" ? "not sustained" : judgement.first_failed,
      .sustained_rate = judgement.completed_rate,
      .goodput = judgement.rates.Rate(static_cast<double>(judgement.rates.met_slos)),
      .output_tokens_per_s = judgement.rates.Rate(judgement.rates.output_tokens),
      .window = judgement.rates};
}

std::vector<stats::LevelRequest> LevelRequests(std::span<const load::RequestRecord> records,
                                               const std::set<std::string>& refusal_tasks,
                                               int64_t phase_start_ns,
                                               std::optional<int64_t> now_ns,
                                               std::span<const load::Arrival> schedule) {
  std::vector<stats::LevelRequest> out;
  out.reserve(records.size());
  std::set<int64_t> seen;
  const auto at = [phase_start_ns](int64_t ns) { return Seconds(ns - phase_start_ns); };
  for (const load::RequestRecord& r : records) {
    if (now_ns) seen.insert(r.sequence);
    if (r.warmup) continue;
    stats::LevelRequest q{.intended_s = at(r.intended_ns)};
    // A request never sent (dropped, or queued when the level ended) ended where it was due.
    q.done_s = r.end_ns ? at(*r.end_ns) : q.intended_s;
    q.completed = Completed(r, refusal_tasks);
    q.answered = r.outcome == load::Outcome::kOk && r.sent_ns && r.end_ns;
    if (q.answered) q.output_tokens = static_cast<double>(r.output_tokens.value_or(0));
    const bool waited = r.outcome == load::Outcome::kOk || r.outcome == load::Outcome::kTimeout ||
                        r.outcome == load::Outcome::kCancelled;
    if (waited && r.sent_ns) {
      const std::optional<int64_t> until = r.first_token_ns ? r.first_token_ns : r.end_ns;
      if (until) q.wait_s = Seconds(*until - r.intended_ns);
    }
    out.push_back(q);
  }
  if (now_ns)
    for (const load::Arrival& a : schedule) {
      const int64_t intended = phase_start_ns + a.intended_ns;
      if (intended > *now_ns) break;
      if (seen.contains(a.sequence)) continue;
      out.push_back({.intended_s = at(intended), .wait_s = Seconds(*now_ns - intended)});
    }
  return out;
}

LevelJudgement JudgeLevel(std::span<const load::RequestRecord> records,
                          const load::PhaseMetrics& metrics,
                          std::span<const stats::QueueSample> queue, const LevelCriteria& criteria,
                          bool open_loop, int64_t phase_start_ns,
                          const std::string& ended_early_reason) {
  LevelJudgement j;
  j.checks = CheckThresholds(criteria.thresholds, metrics,
                             CountExpectedDenials(records, criteria.refusal_tasks));
  std::vector<stats::LevelRequest> requests =
      LevelRequests(records, criteria.refusal_tasks, phase_start_ns);
  MarkSlos(records, SlosOf(criteria.thresholds), requests);
  for (const stats::LevelRequest& q : requests)
    j.window_s = std::max(j.window_s, q.intended_s);
  j.sustain = stats::JudgeSustained(
      requests, queue,
      OptionsFor(criteria, open_loop, j.window_s, 0.90, metrics.ttft_ms.count > 0));
  j.rates = RatesOf(j.sustain, metrics, open_loop);
  j.completed_rate =
      j.rates.Seconds() > 0
          ? std::optional<double>(j.rates.Rate(static_cast<double>(j.rates.completed)))
          : std::nullopt;

  std::vector<std::string> reasons, failed_thresholds;
  for (const ThresholdCheck& c : j.checks)
    if (!c.passed)
      failed_thresholds.push_back(c.name + (c.measured
                                                ? " (measured " + FormatNumber(*c.measured, 3) + ")"
                                                : " (nothing measured)"));
  if (!failed_thresholds.empty()) {
    reasons.push_back("thresholds: " + Join(failed_thresholds, ", "));
    for (const ThresholdCheck& c : j.checks)
      if (!c.passed) {
        j.first_failed = c.name;
        break;
      }
  }
  if (j.sustain.verdict == stats::Sustained::kNo) {
    reasons.push_back("not sustained: " + Join(j.sustain.failures, "; "));
    if (j.first_failed.empty()) j.first_failed = "sustained";
  }
  if (reasons.empty() && !ended_early_reason.empty()) {
    reasons.push_back(ended_early_reason + " (the level was ended early)");
    j.first_failed = ended_early_reason.starts_with("not sustained") ? "sustained" : "thresholds";
  }
  if (!reasons.empty()) {
    j.verdict = LevelVerdict::kFail;
    j.reason = Join(reasons, "; ");
  } else if (j.sustain.verdict == stats::Sustained::kUndecided) {
    j.verdict = LevelVerdict::kInconclusive;
    j.reason = "inconclusive: " + Join(j.sustain.unknowns, "; ");
  } else {
    j.verdict = LevelVerdict::kPass;
  }
  return j;
}

StepRunner::EndEarly LevelController(const LevelCriteria& criteria, bool open_loop,
                                     std::span<const load::Arrival> schedule,
                                     int64_t planned_requests, std::string& reason) {
  return [&criteria, open_loop, schedule, planned_requests, &reason](
             std::span<const load::RequestRecord> finished, int64_t phase_start_ns,
             int64_t now_ns) {
    const double elapsed = Seconds(now_ns - phase_start_ns);
    if (elapsed < 1) return false;
    reason = CertainFailure(finished, criteria, planned_requests);
    if (!reason.empty()) return true;
    const bool streamed = std::any_of(finished.begin(), finished.end(),
                                      [](const auto& r) { return r.first_token_ns.has_value(); });
    if (elapsed < criteria.duration_s / 3) return false;
    // A request in flight may already have its first token: its wait is known only once it
    // ends. So the live checks look only as far as every request had time to end, the longest
    // any took so far; one still in flight from before then waits at least since its send.
    int64_t longest_ns = 0;
    for (const load::RequestRecord& r : finished)
      if (!r.warmup && r.end_ns) longest_ns = std::max(longest_ns, *r.end_ns - r.intended_ns);
    const double horizon = Seconds(now_ns - longest_ns - phase_start_ns);
    std::vector<stats::LevelRequest> requests =
        LevelRequests(finished, criteria.refusal_tasks, phase_start_ns, now_ns, schedule);
    std::erase_if(requests,
                  [horizon](const stats::LevelRequest& q) { return q.intended_s > horizon; });
    // Many looks at the same level: a failure before the end must be clear. Latency rising at
    // 99% on each side, or completions at least 10 requests behind out of 50 or more.
    const stats::SustainFinding clear = stats::JudgeSustained(
        requests, {}, OptionsFor(criteria, open_loop, horizon, 0.98, streamed));
    const bool behind = clear.pace && clear.pace->decided && !clear.pace->kept_pace &&
                        clear.pace->arrived >= 50 &&
                        clear.pace->arrived - clear.pace->completed >= 10;
    if (clear.latency.state == stats::TrendState::kRising || behind) {
      reason = "not sustained: " + Join(clear.failures, "; ");
      return true;
    }
    if (elapsed < criteria.duration_s) return false;
    // Past the duration: end as soon as the level can be told, at 95% where the final
    // judgement asks 90%, since what is seen while running stops short of the level's end.
    // Completions are judged on the whole level once it ended: the live view of them stops
    // short of its end, by the longest time a request took.
    const stats::SustainFinding told = stats::JudgeSustained(
        requests, {}, OptionsFor(criteria, open_loop, horizon, 0.95, streamed));
    if (told.latency.state == stats::TrendState::kRising) {
      reason = "not sustained: " +
               stats::DescribeRise(told.latency, streamed ? "TTFT" : "latency", false);
      return true;
    }
    return told.latency.state == stats::TrendState::kSettled &&
           told.completed >= criteria.min_completed && (!told.pace || told.pace->decided);
  };
}

namespace {

json TrendJson(const stats::TrendCheck& t, double scale) {
  static constexpr const char* kStates[] = {"settled", "rising", "undecided"};
  json out = {{"state", kStates[static_cast<int>(t.state)]},
              {"from_s", t.from_s},
              {"span_s", t.span_s},
              {"intervals", t.intervals},
              {"baseline", t.baseline * scale},
              {"tolerance", t.tolerance * scale}};
  if (t.trend) {
    out["slope_per_s"] = t.trend->slope * scale;
    out["slope_interval"] = {t.trend->interval.low * scale, t.trend->interval.high * scale};
  } else {
    out["slope_per_s"] = nullptr;
    out["slope_interval"] = nullptr;
  }
  return out;
}

}  // namespace

json RateWindowJson(const stats::RateWindow& w) {
  const auto rate = [&w](double count) { return w.Rate(count); };
  return {{"counts", w.arrivals ? "arrivals" : "sends"},
          {"from_s", w.from_s},
          {"to_s", w.to_s},
          {"arrived", w.arrived},
          {"completed", w.completed},
          {"answered", w.answered},
          {"expected_denials", w.completed - w.answered},
          {"met_slos", w.met_slos},
          {"output_tokens", w.output_tokens},
          {"completed_rate", rate(static_cast<double>(w.completed))},
          {"answered_rate", rate(static_cast<double>(w.answered))},
          {"goodput", rate(static_cast<double>(w.met_slos))},
          {"output_tokens_per_s", rate(w.output_tokens)}};
}

json LevelJudgementJson(const LevelJudgement& j) {
  const stats::SustainFinding& f = j.sustain;
  json sustained = {
      {"verdict", f.verdict == stats::Sustained::kYes  ? "sustained"
                  : f.verdict == stats::Sustained::kNo ? "not sustained"
                                                       : "undecided"},
      {"completed", f.completed},
      {"failures", f.failures},
      {"unknowns", f.unknowns},
      // Latency: TTFT (or the whole answer) from the intended send, per-interval medians, in ms.
      {"latency_ms", TrendJson(f.latency, 1000)},
      {"queue", f.queue ? TrendJson(*f.queue, 1) : json(nullptr)}};
  if (f.pace)
    sustained["pace"] = {{"fill_s", f.pace->fill_s},
                         {"span_s", f.pace->span_s},
                         {"arrived", f.pace->arrived},
                         {"completed", f.pace->completed},
                         {"arriving_rate", f.pace->arriving_rate},
                         {"completed_rate", f.pace->completed_rate},
                         {"share", f.pace->share},
                         {"answered", f.pace->answered},
                         {"met_slos", f.pace->met_slos},
                         {"output_tokens", f.pace->output_tokens},
                         {"decided", f.pace->decided},
                         {"kept_pace", f.pace->kept_pace}};
  else
    sustained["pace"] = nullptr;
  return {{"verdict", VerdictName(j.verdict)},
          {"reason", j.reason},
          {"checks", ChecksToJson(j.checks)},
          {"first_failed", j.first_failed},
          {"completed_rate", j.completed_rate ? json(*j.completed_rate) : json(nullptr)},
          {"window_s", j.window_s},
          {"rates", RateWindowJson(j.rates)},
          {"sustained", sustained}};
}

}  // namespace stagegate::scenario
