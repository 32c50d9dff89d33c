#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "load/engine.h"
#include "load/metrics.h"
#include "manifest/scenario.h"
#include "scenario/findings.h"
#include "scenario/step_runner.h"
#include "stats/capacity.h"
#include "stats/sustain.h"

namespace stagegate::scenario {

/// What a level of a sweep or capacity search must show to pass, and how long it may run.
struct LevelCriteria {
  manifest::Thresholds thresholds;
  std::set<std::string> refusal_tasks;  // their denials count as completed
  double min_share = 0.95;              // completions against arrivals
  int64_t min_completed = 30;
  double duration_s = 0;                 // a level runs at least this long...
  std::optional<double> max_duration_s;  // ...and on to this while it cannot tell
};

enum class LevelVerdict { kPass, kFail, kInconclusive };

/// A level judged: thresholds, sustained load and length together.
struct LevelJudgement {
  LevelVerdict verdict = LevelVerdict::kInconclusive;
  std::vector<ThresholdCheck> checks;
  stats::SustainFinding sustain;
  /// Why it did not pass, in one line: "not sustained: completed 11.8 of 16 req/s; TTFT rising
  /// 160 ms/s", "thresholds: ttft p95 <= 1500 ms (measured 1820)", "too short to tell: ...".
  std::string reason;
  std::string first_failed;  // the first check that failed: a threshold's name or "sustained"
  /// Completed requests per second the level sustained: over its arrival window past the fill
  /// time (open loop), or its request throughput (closed loop).
  std::optional<double> completed_rate;
  double window_s = 0;  // the arrival window judged
  /// The window and counts completed_rate is drawn from, and every other rate quoted for the
  /// level with it (answered, goodput, output tokens).
  stats::RateWindow rates;
};

/// The level's requests as the sustained-load checks see them, with times from
/// `phase_start_ns`; denials of `refusal_tasks` complete. `met_slos` is left false: JudgeLevel
/// sets it. With `now_ns` (a level still running), arrivals of `schedule` (offsets from the
/// phase start) that are due and not among `records` are in flight, waiting since their
/// intended send.
std::vector<stats::LevelRequest> LevelRequests(std::span<const load::RequestRecord> records,
                                               const std::set<std::string>& refusal_tasks,
                                               int64_t phase_start_ns,
                                               std::optional<int64_t> now_ns = std::nullopt,
                                               std::span<const load::Arrival> schedule = {});

/// Judges a level that ended: its thresholds (on `metrics`), whether it was sustained (the
/// server's queue depth `queue` is the second witness, times from the phase start) and whether
/// it ran long enough. `ended_early_reason` is the controller's reason when it ended the level
/// for a clear failure: such a level fails even when the records alone could no longer tell.
LevelJudgement JudgeLevel(std::span<const load::RequestRecord> records,
                          const load::PhaseMetrics& metrics,
                          std::span<const stats::QueueSample> queue, const LevelCriteria& criteria,
                          bool open_loop, int64_t phase_start_ns,
                          const std::string& ended_early_reason = "");

/// The live controller of a level: ends its schedule once it has clearly failed (a threshold
/// that can no longer hold, latency rising at 99% confidence or completions 10 requests behind
/// past a third of the duration), or, past `duration_s` with enough completed requests, once
/// the level is decided at 95% confidence. It looks only as far back as every request had time
/// to end. `reason` receives why it ended a failing level. `schedule` (options.arrivals) and
/// `reason` must outlive the controller.
StepRunner::EndEarly LevelController(const LevelCriteria& criteria, bool open_loop,
                                     std::span<const load::Arrival> schedule,
                                     int64_t planned_requests, std::string& reason);

const char* VerdictName(LevelVerdict verdict);

/// The judgement as run.json and profile.json show it (docs/formats.md).
nlohmann::json LevelJudgementJson(const LevelJudgement& judgement);

/// A judged level as the capacity finding sees it: every rate over the judgement's one window.
stats::LevelOutcome OutcomeOf(double level, const LevelJudgement& judgement);

/// A rate window as run.json and profile.json show it: where it lies, what it counts, and the
/// rates each count gives over it (docs/metrics.md).
nlohmann::json RateWindowJson(const stats::RateWindow& window);

}  // namespace stagegate::scenario
