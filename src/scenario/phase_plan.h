#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "load/engine.h"
#include "load/trace.h"
#include "manifest/scenario.h"
#include "scenario/capacity_search.h"
#include "scenario/level_judge.h"

namespace stagegate::scenario {

/// The load of one phase, or of one level of a sweep, ready for the engine.
struct PhaseStep {
  manifest::PhaseKind kind = manifest::PhaseKind::kSteady;
  std::optional<double> level;         // the rate (req/s), concurrency or trace speedup it runs at
  bool closed_loop = false;            // level is a concurrency
  std::optional<double> offered_rate;  // open loop: the drawn schedule's mean rate
  std::string label;                   // a fault-control step's name; "" for a load phase
  bool at_rest = false;                // the answers sampled one at a time for review
  bool may_end_early = false;          // a sweep level its live controller may end once it is told
  load::LoadOptions options;
  /// Kept in the stored phase's config beside its load (a fault probe's actuator and restore
  /// time), so that `merge` can judge the probe again from the store.
  nlohmann::json extra_config = nlohmann::json::object();
};

/// The levels a sweep steps through, in order (a search: where it starts); empty for other
/// phases.
std::vector<double> SweepLevels(const manifest::LoadPhase& phase);

/// The seed a stage's phase draws its schedule from: the same on every run (and in every shard)
/// of the scenario with `seed`.
uint64_t StepSeed(uint64_t seed, size_t stage_index, manifest::PhaseKind kind);

/// Plans `phase` at `level` (a sweep's level; nullopt for other phases, which have their own rate
/// or concurrency). The schedule is drawn from `seed`, or for an open loop with a `trace` (the
/// scenario's input), replays it at the rate (load::BuildTraceReplay). A warmup phase marks every
/// request as warmup. Fails (InvalidInput) when the schedule cannot be built, e.g. overlapping
/// spikes.
Result<PhaseStep> PlanPhase(const manifest::LoadPhase& phase, std::optional<double> level,
                            uint64_t seed, const manifest::Timeouts& timeouts, int workers,
                            const std::vector<load::TraceEntry>* trace = nullptr);

/// The mean rate of a schedule: its arrivals but one over the time from the first to the last;
/// none for fewer than two, or all at one instant.
std::optional<double> OfferedRate(std::span<const load::Arrival> arrivals);

/// How a sweep phase chooses its levels (scenario/capacity_search.h).
SweepPlan SweepPlanOf(const manifest::LoadPhase& phase);
/// What a sweep phase's levels must show: the scenario's thresholds and the phase's pace, length
/// and duration keys.
LevelCriteria LevelCriteriaOf(const manifest::LoadPhase& phase,
                              const manifest::Thresholds& thresholds,
                              const std::set<std::string>& refusal_tasks);

/// "steady", "sweep 8 req/s", "sweep 16 concurrent": how the console and files name a step.
std::string StepName(const PhaseStep& step);

}  // namespace stagegate::scenario
