#include "scenario/phase_plan.h"

#include <cmath>
#include <limits>

#include "base/hashing.h"
#include "base/strings.h"
#include "load/schedule.h"
#include "manifest/enum_name.h"

namespace stagegate::scenario {

std::vector<double> SweepLevels(const manifest::LoadPhase& phase) {
  if (phase.kind != manifest::PhaseKind::kSweep) return {};
  if (phase.search)
    return {phase.rate ? *phase.rate : static_cast<double>(phase.concurrency.value_or(1))};
  if (!phase.rate_levels.empty()) return phase.rate_levels;
  return {phase.concurrency_levels.begin(), phase.concurrency_levels.end()};
}

uint64_t StepSeed(uint64_t seed, size_t stage_index, manifest::PhaseKind kind) {
  return Mix64(seed ^ Mix64(stage_index * 16 + static_cast<uint64_t>(kind)));
}

Result<PhaseStep> PlanPhase(const manifest::LoadPhase& phase, std::optional<double> level,
                            uint64_t seed, const manifest::Timeouts& timeouts, int workers,
                            const std::vector<load::TraceEntry>* trace) {
  PhaseStep step{.kind = phase.kind};
  const bool sweep = phase.kind == manifest::PhaseKind::kSweep;
  step.closed_loop =
      sweep && !phase.search ? !phase.concurrency_levels.empty() : phase.concurrency.has_value();
  step.level = sweep              ? level
               : step.closed_loop ? std::optional<double>(static_cast<double>(*phase.concurrency))
               : phase.speedup    ? phase.speedup
                                  : phase.rate;
  if (!step.level) return Status::InvalidInput("phase has neither a rate nor a concurrency");
  step.may_end_early = sweep && (phase.decide_levels || phase.max_duration_s);
  if (phase.schedule_seed) seed = *phase.schedule_seed;

  // A sweep level that may run on until it can tell is planned for its longest.
  const std::optional<double> duration_s =
      sweep && phase.max_duration_s ? phase.max_duration_s : phase.duration_s;
  load::LoadOptions& options = step.options;
  // Warmup requests come first, on top of the measured ones.
  options.requests = phase.requests
                         ? std::optional<int64_t>(*phase.requests + phase.warmup_requests)
                         : std::nullopt;
  options.warmup_requests = phase.warmup_requests;
  options.duration_s = duration_s;
  options.grace_s = phase.grace_s;
  options.workers = workers;
  options.timeouts = {.connect_ms = timeouts.connect_ms,
                      .first_token_ms = timeouts.first_token_ms,
                      .total_ms = timeouts.total_ms};
  if (phase.kind == manifest::PhaseKind::kWarmup)
    options.warmup_requests = std::numeric_limits<int64_t>::max();
  if (step.closed_loop) {
    options.concurrency = static_cast<int64_t>(std::llround(*step.level));
    return step;
  }
  options.max_concurrency = phase.max_concurrency;
  options.when_full =
      phase.on_full == manifest::OnFull::kDrop ? load::WhenFull::kDrop : load::WhenFull::kQueue;
  std::vector<load::RateSpike> spikes;
  for (const manifest::Spike& s : phase.spikes)
    spikes.push_back({.at_s = s.at_s, .duration_s = s.duration_s, .rate = s.rate});
  Result<std::vector<load::Arrival>> arrivals =
      trace && phase.speedup ? load::BuildTraceSchedule(*trace, {.speedup = *phase.speedup,
                                                                 .requests = phase.requests,
                                                                 .duration_s = phase.duration_s})
      : trace
          ? load::BuildTraceReplay(*trace, *step.level, phase.requests, duration_s)
          : load::BuildOpenLoop(
                {.rate = *step.level,
                 .process =
                     phase.arrival == manifest::Arrival::kPoisson ? load::ArrivalProcess::kPoisson
                     : phase.arrival == manifest::Arrival::kGamma ? load::ArrivalProcess::kGamma
                                                                  : load::ArrivalProcess::kConstant,
                 .burstiness = phase.burstiness.value_or(1),
                 .ramp_to = phase.ramp_to,
                 .spikes = spikes,
                 .duration_s = duration_s,
                 .requests = options.requests,
                 .seed = seed,
                 // A sweep level offers its nominal rate over the time it surely
                 // runs, so that "holds up to 16 req/s" means 16.
                 .exact_count_s = sweep && phase.decide_levels ? phase.duration_s : std::nullopt});
  if (!arrivals.ok()) return arrivals.status();
  options.arrivals = std::move(*arrivals);
  step.offered_rate = OfferedRate(options.arrivals);
  return step;
}

std::optional<double> OfferedRate(std::span<const load::Arrival> a) {
  if (a.size() < 2 || a.back().intended_ns <= a.front().intended_ns) return std::nullopt;
  return static_cast<double>(a.size() - 1) /
         (static_cast<double>(a.back().intended_ns - a.front().intended_ns) / 1e9);
}

SweepPlan SweepPlanOf(const manifest::LoadPhase& phase) {
  SweepPlan plan{
      .levels = SweepLevels(phase),
      .bisect = phase.bisect,
      .search = phase.search,
      .max_level = phase.up_to,
      .resolution = phase.resolution,
      .integer = phase.search ? phase.concurrency.has_value() : !phase.concurrency_levels.empty()};
  if (phase.search && !plan.levels.empty()) plan.start = plan.levels.front();
  return plan;
}

LevelCriteria LevelCriteriaOf(const manifest::LoadPhase& phase,
                              const manifest::Thresholds& thresholds,
                              const std::set<std::string>& refusal_tasks) {
  return {.thresholds = thresholds,
          .refusal_tasks = refusal_tasks,
          .min_share = phase.keep_pace,
          .min_completed = phase.min_completed,
          .duration_s = phase.duration_s.value_or(0),
          .max_duration_s = phase.max_duration_s};
}

std::string StepName(const PhaseStep& step) {
  if (!step.label.empty()) return step.label;
  std::string name = manifest::NameOf(step.kind, manifest::kPhaseNames);
  if (step.kind == manifest::PhaseKind::kSweep && step.level)
    name += " " + FormatNumber(*step.level, 2) + (step.closed_loop ? " concurrent" : " req/s");
  return name;
}

}  // namespace stagegate::scenario
