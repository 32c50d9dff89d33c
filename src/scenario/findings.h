#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "load/metrics.h"
#include "load/request_record.h"
#include "manifest/corpus.h"
#include "manifest/scenario.h"
#include "stats/recovery.h"

namespace stagegate::scenario {

/// One threshold held against one phase: "ttft p95 <= 1500 ms" measured 420.
struct ThresholdCheck {
  std::string name;
  std::optional<double> measured;  // absent when nothing was measured (then it fails)
  double limit = 0;
  bool passed = false;
  // A threshold scope's check (its name "scope actions: ttft p95 <= 800 ms"): the scope, how many
  // of its requests the phase measured and, when fewer than its minimum, pending: neither passed
  // nor failed.
  std::string scope;
  int64_t requests = 0;
  bool pending = false;
};

/// Every latency threshold and the completion rate, against the phase's statistics. A denial
/// the corpus expects (a task meant to be refused, refused with 401 or 403) completes its
/// request: `expected_denials` of them are counted with the completed ones.
std::vector<ThresholdCheck> CheckThresholds(const manifest::Thresholds& thresholds,
                                            const load::PhaseMetrics& metrics,
                                            int64_t expected_denials = 0);

/// A threshold scope's thresholds (its completion rate, or else `completion_rate`) against the
/// statistics of the scope's requests alone: `metrics` and `expected_denials` are of those.
/// With fewer than the scope's minimum of requests, every check is pending.
std::vector<ThresholdCheck> CheckScope(const manifest::ThresholdScope& scope,
                                       double completion_rate, const load::PhaseMetrics& metrics,
                                       int64_t expected_denials);
/// The tasks of `corpus` a threshold scope selects, by category or tag.
std::set<std::string> ScopeTasks(const manifest::ThresholdScope& scope,
                                 const manifest::Corpus& corpus);

/// Completed requests, with the denials the corpus expects, over measured ones: the completion
/// rate the thresholds check and every output shows. 0 when nothing was measured.
double CompletionRate(const load::PhaseMetrics& metrics, int64_t expected_denials);

/// The latency limits of the thresholds as per-request SLOs (ttft, ttst, itl, tpot, e2e and
/// corrected; schedule lag is the client's, not the application's): goodput counts the requests
/// that meet every one.
std::vector<load::Slo> SlosOf(const manifest::Thresholds& thresholds);
/// Each per-request limit (`profile --slo ttft_ms:500`) as a latency threshold at `percentile`.
std::vector<manifest::LatencyThreshold> SloThresholds(const std::vector<load::Slo>& slos,
                                                      double percentile);

/// Of `records`, the measured ones denied (401/403) on a task in `refusal_tasks`.
int64_t CountExpectedDenials(std::span<const load::RequestRecord> records,
                             const std::set<std::string>& refusal_tasks);
/// No check failed: each passed, or is pending.
bool AllPassed(const std::vector<ThresholdCheck>& checks);
nlohmann::json ChecksToJson(const std::vector<ThresholdCheck>& checks);

/// How the target behaved under overload: what it shed, how fast and how clearly, and what hung.
struct OverloadFinding {
  int64_t offered = 0;
  int64_t ok = 0;
  int64_t shed = 0;                     // outcome shed (the policy's statuses)
  int64_t shed_with_retry_after = 0;    // of those, with a usable Retry-After
  int64_t timeouts = 0;                 // hung until a timeout
  int64_t cut = 0;                      // still in flight when the phase's grace period ended
  int64_t expected_denials = 0;         // tasks meant to be refused, refused
  int64_t other_failures = 0;           // errors that are not a clear shed
  std::map<int64_t, int64_t> statuses;  // HTTP status of every answered request that failed
  stats::Summary shed_latency_ms;       // send to the end of a shed answer
  std::vector<ThresholdCheck> checks;   // the recovery policy's shedding rules
};

/// `records`: the overload phase's measured requests.
OverloadFinding FindOverload(std::span<const load::RequestRecord> records,
                             const manifest::RecoveryPolicy& policy,
                             const std::set<std::string>& refusal_tasks);
nlohmann::json OverloadToJson(const OverloadFinding& finding);

/// The recovery phase's requests as samples for stats::FindRecovery, with times in s from
/// `overload_end_ns` (ns from the run origin). A denial of a task in `refusal_tasks` is the right
/// answer: ok, as completion counts it, with no latency of its own.
std::vector<stats::RecoverySample> RecoverySamples(std::span<const load::RequestRecord> records,
                                                   int64_t overload_end_ns,
                                                   const std::set<std::string>& refusal_tasks);
/// The rolling-window criteria: the window of the recovery phase, and the TTFT and e2e limits of
/// the scenario's latency thresholds (applied to the window's p95).
stats::RecoveryCriteria RecoveryCriteriaOf(const manifest::Scenario& scenario);

/// Mean duration per Server-Timing entry name over the completed requests that carry it:
/// where the application says its time went (retrieval, identity, tools, generation).
std::map<std::string, double> ServerTimingMeans(std::span<const load::RequestRecord> records);

}  // namespace stagegate::scenario
