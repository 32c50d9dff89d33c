#pragma once

// `profile`'s outputs over the levels its run found: the console's table and self-checks,
// profile.json, profile.csv, the AIPerf exports, server_metrics, and its findings in run.json's
// schema for the store.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "load/engine.h"
#include "load/metrics.h"
#include "load/sessions.h"
#include "load/synthetic.h"
#include "scenario/capacity_search.h"
#include "scenario/level_judge.h"
#include "scenario/runner.h"
#include "scenario/telemetry_scrapers.h"
#include "store/store.h"
#include "telemetry/scraper.h"
#include "telemetry/series.h"

namespace stagegate::scenario {

/// One level of a profile (a concurrency or a request rate) after it ran.
struct ProfileLevel {
  std::string kind;  // "concurrency", "request_rate" or "trace"
  double value = 0;
  int64_t started_ns = 0, ended_ns = 0;  // its window, from the profile's origin
  load::PhaseMetrics metrics;
  std::optional<double> offered_rate;  // open loop: the schedule's mean rate
  double wall_s = 0;
  double client_cpu_s = 0;
  double idle_poll_s = 0;      // of client_cpu_s, polling that found nothing
  double max_worker_busy = 0;  // idle polling left out
  int workers = 0;
  int64_t dropped = 0;
  bool interrupted = false;
  load::ReceiveTimes receive_times = load::ReceiveTimes::kKernel;
  load::ReceiveStats receive;  // how arrivals were stamped, and the client's read delays
  int64_t start_lag_ns = 0;    // in shards: how late it started against its planned offset
  std::vector<std::string> client_warnings;      // CheckClient's
  std::vector<std::string> self_check_warnings;  // the rest (the tokenizer's check)
  /// The level judged: its SLOs as thresholds, whether it was sustained, whether it could tell.
  std::optional<LevelJudgement> judgement;
  size_t first_record = 0, record_count = 0;     // where its records are among the profile's
  std::optional<load::SessionMetrics> sessions;  // a level of multi-turn sessions

  /// A trace's step, which is not a level: its thresholds' checks.
  std::vector<ThresholdCheck> checks;

  /// Every warning of its self-check: the client check's, then the rest.
  std::vector<std::string> Warnings() const;
  /// The level's verdict; a trace's step passes when it held every threshold.
  LevelVerdict Verdict() const;
};

/// "concurrency", "request_rate" or "trace": what kind of level a step of a profile is.
std::string LevelKind(const PhaseStep& step);
/// "c=8", "12.50/s", "trace x2.00": how the console names a level.
std::string LevelLabel(const std::string& kind, double value);
/// A step of a profile's run as a level: its figures, client check and, with the model's
/// tokenizer, the tokenizer's check over its `records`.
ProfileLevel LevelOf(const StepResult& step, std::span<const load::RequestRecord> records,
                     bool tokenizer);

/// A level of sessions: per turn, how many completed and their TTFT and input tokens ("turn 1:
/// 8 completed, TTFT p50 210 ms, p95 ..."), then how many sessions completed every turn.
std::vector<std::string> SessionLines(const ProfileLevel& level);

/// Sets the level's client warnings: CheckClient over its `records`.
void CheckClient(ProfileLevel& level, std::span<const load::RequestRecord> records);

/// With the model's tokenizer: how far the server's input counts (usage.prompt_tokens) are from
/// the tokenizer's designed lengths, as the median relative difference over the requests that
/// have both; a warning past 2% (a chat template adds a few tokens; more says the tokenizer is not
/// the model's). Nothing when no request has both.
std::optional<std::string> TokenizerCheck(std::span<const load::RequestRecord> records);

/// The console table, one row per level.
std::vector<std::string> ProfileTable(const std::vector<ProfileLevel>& levels);
/// The self-check lines of a level.
std::vector<std::string> SelfCheckLines(const ProfileLevel& level);

/// The profile's findings as the store keeps every run's (run.json's schema, docs/formats.md):
/// one stage "profile" whose steps are its levels (a sweep level each, a trace a steady step) and
/// whose capacity is the sweep's, with `profile` (profile.json) under "profile". Report, compare
/// and merge read a profile run from these alone.
nlohmann::json ProfileFindings(const nlohmann::json& profile, const std::string& model,
                               const std::vector<ProfileLevel>& levels,
                               const std::optional<SweepResult>& sweep, bool search);

/// Keeps `findings` (ProfileFindings) with the run and marks it complete or interrupted.
Status KeepFindings(store::Store& store, const std::string& run_id, const nlohmann::json& findings,
                    bool interrupted);

/// profile.json: the configuration, its fingerprint, and per level the metrics and self-check.
nlohmann::json ProfileJson(const nlohmann::json& config, const std::string& fingerprint,
                           const std::string& run_id, const std::vector<ProfileLevel>& levels,
                           bool interrupted);
/// The capacity finding of the levels (nothing without `sweep`): where they stop holding, what
/// the application sustained there, why each level that did not pass did not, and how long a
/// search took. `unit` is "req/s" or "concurrent".
std::vector<std::string> CapacityLines(const std::vector<ProfileLevel>& levels,
                                       const std::optional<SweepResult>& sweep,
                                       const std::string& unit, bool search);
/// profile.csv: one row per level.
std::string ProfileCsv(const std::vector<ProfileLevel>& levels);

/// Writes profile.json (`profile`), profile.csv, requests.jsonl and the AIPerf-compatible
/// exports (WriteProfileAiperf) under `out_dir`, creating it; returns the AIPerf directories.
Result<std::vector<std::string>> WriteProfileOutputs(const std::string& out_dir,
                                                     const nlohmann::json& profile,
                                                     const std::vector<ProfileLevel>& levels,
                                                     std::span<const load::RequestRecord> records,
                                                     const std::vector<load::Slo>& slos,
                                                     const load::SyntheticOptions* synthetic,
                                                     int64_t wall_origin_ns);

/// Writes each level's AIPerf-compatible export (profile_export_aiperf.json and .csv): into
/// `out_dir` itself for a profile of one level, else into out_dir/aiperf/<kind><value> for each
/// ("aiperf/concurrency8", "aiperf/request_rate12.5"), as AIPerf keeps a directory per level of
/// a sweep. `config` is profile.json's; `synthetic` the synthetic prompts' lengths, if they were
/// synthetic. Returns the directories written.
Result<std::vector<std::string>> WriteProfileAiperf(
    const std::string& out_dir, const nlohmann::json& config, const std::string& run_id,
    const std::vector<ProfileLevel>& levels, std::span<const load::RequestRecord> records,
    const std::vector<load::Slo>& slos, const load::SyntheticOptions* synthetic,
    int64_t wall_origin_ns);

/// A level's window on the profile's clock, for the per-level server series.
struct LevelWindow {
  std::string kind;
  double value = 0;
  int64_t started_ns = 0, ended_ns = 0;
};

/// The canonical series over one level's window, each scrape's value, as the report reads them
/// (report::ReadServerSeries, docs/metrics.md).
using LevelSeries = std::map<telemetry::Series, std::vector<std::pair<int64_t, double>>>;

/// profile.json's "server_metrics": each source with its scrapes and failures, and per level
/// (`series[i]` over `levels[i]`) the canonical series' mean and peak.
nlohmann::json ServerMetricsJson(const std::vector<TelemetrySource>& sources,
                                 const std::vector<LevelWindow>& levels,
                                 const std::vector<LevelSeries>& series);
/// server_metrics.csv: a row a sample (`samples` oldest first), its time in ns on the clock of
/// requests.jsonl's times_ns, the level it fell in, the series as exposed and in its canonical
/// unit.
std::string ServerMetricsCsv(const std::vector<telemetry::TimedSample>& samples,
                             const std::vector<LevelWindow>& levels);

}  // namespace stagegate::scenario
