#include "scenario/findings.h"

#include <algorithm>

#include "base/strings.h"
#include "http/openai_request.h"
#include "manifest/enum_name.h"

namespace stagegate::scenario {
namespace {

using json = nlohmann::json;

const stats::Summary& SummaryOf(const load::PhaseMetrics& m, manifest::LatencyMetric metric) {
  switch (metric) {
    case manifest::LatencyMetric::kTtft:
      return m.ttft_ms;
    case manifest::LatencyMetric::kTtst:
      return m.ttst_ms;
    case manifest::LatencyMetric::kItl:
      return m.itl_ms;
    case manifest::LatencyMetric::kTpot:
      return m.tpot_ms;
    case manifest::LatencyMetric::kE2e:
      return m.e2e_ms;
    case manifest::LatencyMetric::kCorrected:
      return m.corrected_ms;
    case manifest::LatencyMetric::kScheduleLag:
      return m.schedule_lag_ms;
  }
  return m.e2e_ms;
}

double Ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

}  // namespace

double CompletionRate(const load::PhaseMetrics& metrics, int64_t expected_denials) {
  if (metrics.offered <= 0) return 0;
  return static_cast<double>(metrics.completed + expected_denials) /
         static_cast<double>(metrics.offered);
}

std::vector<load::Slo> SlosOf(const manifest::Thresholds& thresholds) {
  std::vector<load::Slo> slos;
  for (const manifest::LatencyThreshold& t : thresholds.latency) {
    if (t.metric == manifest::LatencyMetric::kScheduleLag) continue;
    const std::string metric =
        std::string(manifest::NameOf(t.metric, manifest::kLatencyMetricNames)) + "_ms";
    // Two limits on one metric (p50 and p99, say): the tighter one is what every request meets.
    auto same = std::find_if(slos.begin(), slos.end(),
                             [&](const load::Slo& s) { return s.metric == metric; });
    if (same == slos.end())
      slos.push_back({.metric = metric, .max_ms = t.max_ms});
    else
      same->max_ms = std::min(same->max_ms, t.max_ms);
  }
  return slos;
}

std::vector<manifest::LatencyThreshold> SloThresholds(const std::vector<load::Slo>& slos,
                                                      double percentile) {
  std::vector<manifest::LatencyThreshold> thresholds;
  for (const load::Slo& slo : slos) {
    const std::string name = slo.metric.substr(0, slo.metric.size() - 3);  // "ttft_ms": ttft
    for (const auto& [metric, metric_name] : manifest::kLatencyMetricNames)
      if (metric_name == name)
        thresholds.push_back({.metric = metric, .percentile = percentile, .max_ms = slo.max_ms});
  }
  return thresholds;
}

int64_t CountExpectedDenials(std::span<const load::RequestRecord> records,
                             const std::set<std::string>& refusal_tasks) {
  return std::count_if(records.begin(), records.end(), [&](const load::RequestRecord& r) {
    return !r.warmup && r.outcome == load::Outcome::kDenied && refusal_tasks.contains(r.task_id);
  });
}

std::vector<ThresholdCheck> CheckThresholds(const manifest::Thresholds& thresholds,
                                            const load::PhaseMetrics& metrics,
                                            int64_t expected_denials) {
  std::vector<ThresholdCheck> checks;
  for (const manifest::LatencyThreshold& t : thresholds.latency) {
    const stats::Summary& summary = SummaryOf(metrics, t.metric);
    ThresholdCheck check{
        .name = std::string(manifest::NameOf(t.metric, manifest::kLatencyMetricNames)) + " p" +
                FormatNumber(t.percentile, 0) + " <= " + FormatNumber(t.max_ms, 3) + " ms",
        .limit = t.max_ms};
    if (summary.count > 0) {
      check.measured = summary.Percentile(t.percentile);
      check.passed = *check.measured <= t.max_ms;
    }
    checks.push_back(std::move(check));
  }
  ThresholdCheck completion{
      .name = "completion rate >= " + FormatNumber(thresholds.completion_rate, 4),
      .limit = thresholds.completion_rate};
  if (metrics.offered > 0) {
    completion.measured = CompletionRate(metrics, expected_denials);
    completion.passed = *completion.measured >= thresholds.completion_rate;
  }
  checks.push_back(std::move(completion));
  return checks;
}

std::vector<ThresholdCheck> CheckScope(const manifest::ThresholdScope& scope,
                                       double completion_rate, const load::PhaseMetrics& metrics,
                                       int64_t expected_denials) {
  const manifest::Thresholds thresholds{
      .latency = scope.latency, .completion_rate = scope.completion_rate.value_or(completion_rate)};
  std::vector<ThresholdCheck> checks = CheckThresholds(thresholds, metrics, expected_denials);
  for (ThresholdCheck& c : checks) {
    c.name = "scope " + scope.name + ": " + c.name;
    c.scope = scope.name;
    c.requests = metrics.offered;
    c.pending = metrics.offered < scope.min_requests;
    if (c.pending) c.passed = false;
  }
  return checks;
}

std::set<std::string> ScopeTasks(const manifest::ThresholdScope& scope,
                                 const manifest::Corpus& corpus) {
  std::set<std::string> tasks;
  for (const manifest::Task& task : corpus.tasks)
    if (scope.tag.empty()
            ? task.category == scope.category
            : std::find(task.tags.begin(), task.tags.end(), scope.tag) != task.tags.end())
      tasks.insert(task.id);
  return tasks;
}

bool AllPassed(const std::vector<ThresholdCheck>& checks) {
  return std::all_of(checks.begin(), checks.end(),
                     [](const ThresholdCheck& c) { return c.passed || c.pending; });
}

json ChecksToJson(const std::vector<ThresholdCheck>& checks) {
  json out = json::array();
  for (const ThresholdCheck& c : checks) {
    json check = {{"check", c.name},
                  {"measured", c.measured ? json(*c.measured) : json(nullptr)},
                  {"limit", c.limit},
                  {"passed", c.passed}};
    if (!c.scope.empty()) {
      check["scope"] = c.scope;
      check["requests"] = c.requests;
      check["pending"] = c.pending;
    }
    out.push_back(std::move(check));
  }
  return out;
}

OverloadFinding FindOverload(std::span<const load::RequestRecord> records,
                             const manifest::RecoveryPolicy& policy,
                             const std::set<std::string>& refusal_tasks) {
  OverloadFinding f;
  std::vector<double> shed_latency;
  for (const load::RequestRecord& r : records) {
    if (r.warmup) continue;
    ++f.offered;
    if (r.http_status && *r.http_status >= 400) ++f.statuses[*r.http_status];
    switch (r.outcome) {
      case load::Outcome::kOk:
        ++f.ok;
        break;
      case load::Outcome::kShed:
        if (r.http_status && std::find(policy.shed_statuses.begin(), policy.shed_statuses.end(),
                                       *r.http_status) == policy.shed_statuses.end()) {
          ++f.other_failures;
          break;
        }
        ++f.shed;
        if (r.retry_after_s) ++f.shed_with_retry_after;
        if (r.sent_ns && r.end_ns) shed_latency.push_back(Ms(*r.end_ns - *r.sent_ns));
        break;
      case load::Outcome::kTimeout:
        ++f.timeouts;
        break;
      case load::Outcome::kCancelled:
        // Cut at the end of the grace period, before any timeout: not known to hang.
        if (r.sent_ns) ++f.cut;
        break;
      case load::Outcome::kDenied:
        if (refusal_tasks.contains(r.task_id)) {
          ++f.expected_denials;
          break;
        }
        ++f.other_failures;
        break;
      default:
        ++f.other_failures;
    }
  }
  f.shed_latency_ms = stats::Summarize(std::move(shed_latency));
  // A request neither answered nor shed by the end of the phase's grace period hangs as surely
  // as one that ran into its timeout: an application that queues everything must not pass.
  f.checks.push_back({.name = "no request hangs (until a timeout, or past the grace period)",
                      .measured = static_cast<double>(f.timeouts + f.cut),
                      .limit = 0,
                      .passed = f.timeouts == 0 && f.cut == 0});
  f.checks.push_back({.name = "every failure is a clear shed (" +
                              Join(
                                  [&] {
                                    std::vector<std::string> s;
                                    for (int64_t status : policy.shed_statuses)
                                      s.push_back(std::to_string(status));
                                    return s;
                                  }(),
                                  " or ") +
                              ")",
                      .measured = static_cast<double>(f.other_failures),
                      .limit = 0,
                      .passed = f.other_failures == 0});
  if (policy.require_retry_after)
    f.checks.push_back({.name = "every shed answer carries Retry-After",
                        .measured = static_cast<double>(f.shed - f.shed_with_retry_after),
                        .limit = 0,
                        .passed = f.shed_with_retry_after == f.shed});
  ThresholdCheck fast{
      .name = "shed answers p95 <= " + FormatNumber(policy.max_shed_latency_ms, 3) + " ms",
      .limit = policy.max_shed_latency_ms,
      .passed = true};  // nothing shed: nothing was slow to shed
  if (f.shed_latency_ms.count > 0) {
    fast.measured = f.shed_latency_ms.Percentile(95);
    fast.passed = *fast.measured <= policy.max_shed_latency_ms;
  }
  f.checks.push_back(std::move(fast));
  return f;
}

json OverloadToJson(const OverloadFinding& f) {
  json statuses = json::object();
  for (const auto& [status, count] : f.statuses)
    statuses[std::to_string(status)] = count;
  return {{"offered", f.offered},
          {"ok", f.ok},
          {"shed", f.shed},
          {"shed_with_retry_after", f.shed_with_retry_after},
          {"hung_until_timeout", f.timeouts},
          {"cut_at_grace_end", f.cut},
          {"expected_denials", f.expected_denials},
          {"other_failures", f.other_failures},
          {"failed_statuses", statuses},
          {"shed_latency_ms", f.shed_latency_ms.ToJson()},
          {"checks", ChecksToJson(f.checks)},
          {"passed", AllPassed(f.checks)}};
}

std::vector<stats::RecoverySample> RecoverySamples(std::span<const load::RequestRecord> records,
                                                   int64_t overload_end_ns,
                                                   const std::set<std::string>& refusal_tasks) {
  std::vector<stats::RecoverySample> samples;
  for (const load::RequestRecord& r : records) {
    if (r.warmup || !r.end_ns) continue;
    const bool answered = r.outcome == load::Outcome::kOk;
    const bool rightly_denied =
        r.outcome == load::Outcome::kDenied && refusal_tasks.contains(r.task_id);
    stats::RecoverySample sample{.end_s = static_cast<double>(*r.end_ns - overload_end_ns) / 1e9,
                                 .ok = answered || rightly_denied};
    if (r.sent_ns && r.first_token_ns && !rightly_denied)
      sample.ttft_ms = Ms(*r.first_token_ns - *r.sent_ns);
    if (r.sent_ns && answered) sample.e2e_ms = Ms(*r.end_ns - *r.sent_ns);
    samples.push_back(sample);
  }
  return samples;
}

stats::RecoveryCriteria RecoveryCriteriaOf(const manifest::Scenario& scenario) {
  stats::RecoveryCriteria criteria;
  if (const manifest::LoadPhase* recovery = scenario.FindPhase(manifest::PhaseKind::kRecovery))
    criteria.window_s = recovery->window_s;
  for (const manifest::LatencyThreshold& t : scenario.thresholds.latency) {
    if (t.metric == manifest::LatencyMetric::kTtft)
      criteria.max_ttft_p95_ms = std::min(criteria.max_ttft_p95_ms.value_or(t.max_ms), t.max_ms);
    if (t.metric == manifest::LatencyMetric::kE2e)
      criteria.max_e2e_p95_ms = std::min(criteria.max_e2e_p95_ms.value_or(t.max_ms), t.max_ms);
  }
  return criteria;
}

std::map<std::string, double> ServerTimingMeans(std::span<const load::RequestRecord> records) {
  std::map<std::string, std::pair<double, int64_t>> sums;
  for (const load::RequestRecord& r : records) {
    if (r.warmup || r.outcome != load::Outcome::kOk || r.server_timing.empty()) continue;
    for (const http::ServerTiming& entry : http::ParseServerTiming(r.server_timing)) {
      if (!entry.duration_ms) continue;
      auto& [sum, count] = sums[entry.name];
      sum += *entry.duration_ms;
      ++count;
    }
  }
  std::map<std::string, double> means;
  for (const auto& [name, sum_count] : sums)
    means[name] = sum_count.first / static_cast<double>(sum_count.second);
  return means;
}

}  // namespace stagegate::scenario
