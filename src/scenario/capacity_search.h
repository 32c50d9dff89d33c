#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "stats/capacity.h"

namespace stagegate::scenario {

/// How a sweep chooses its levels: a fixed list, or a search for the sustained capacity.
struct SweepPlan {
  /// A fixed list, in order: run until one level past the first that did not pass, then
  /// `bisect` levels between the last pass and the first miss.
  std::vector<double> levels;
  int64_t bisect = 0;
  /// Every level of the list runs, whatever the ones before showed: a sharded run's plan, which
  /// no shard may change on what it alone saw.
  bool every_level = false;
  /// A search: from `start`, double until a level does not pass (or `max_level` passes), then
  /// bisect until the first miss is within `resolution` of the last pass (fails_at <=
  /// holds_up_to x (1 + resolution)).
  bool search = false;
  double start = 1;
  std::optional<double> max_level;
  double resolution = 0.1;
  bool integer = false;  // concurrency levels: whole numbers
};

struct SweepResult {
  std::vector<stats::LevelOutcome> outcomes;  // in the order they ran
  stats::CapacityFinding finding;
  double took_s = 0;  // wall time of the whole sweep or search
};

/// The finding as run.json's and profile.json's "capacity" (docs/formats.md): the bracket, the
/// sustained rate, goodput and output tokens/s at the limit, the first check that failed above
/// it, and the levels and time the sweep took.
nlohmann::json CapacityJson(const SweepResult& sweep, bool closed_loop, bool search);

/// Runs one level and judges it.
using RunLevel = std::function<Result<stats::LevelOutcome>(double level)>;

/// Runs the sweep's levels through `run_level` until the plan is done or `stop` is set.
Result<SweepResult> RunSweep(const SweepPlan& plan, const RunLevel& run_level,
                             const std::atomic<bool>& stop,
                             const Clock& clock = SteadyClock::Get());

}  // namespace stagegate::scenario
