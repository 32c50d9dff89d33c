#include "scenario/capacity_search.h"

#include <algorithm>
#include <cmath>

#include "scenario/level_judge.h"

namespace stagegate::scenario {

nlohmann::json CapacityJson(const SweepResult& sweep, bool closed_loop, bool search) {
  using json = nlohmann::json;
  const stats::CapacityFinding& c = sweep.finding;
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"holds_up_to", optional(c.holds_up_to)},
          {"fails_at", optional(c.fails_at)},
          {"monotonic", c.monotonic},
          {"inconclusive", c.inconclusive},
          {"unit", closed_loop ? "concurrency" : "req/s"},
          {"sustained_rate", optional(c.sustained_rate)},
          {"goodput", c.holds_up_to ? json(c.goodput) : json(nullptr)},
          {"output_tokens_per_s", c.holds_up_to ? json(c.output_tokens_per_s) : json(nullptr)},
          {"window", c.holds_up_to && c.window ? RateWindowJson(*c.window) : json(nullptr)},
          {"first_failed", c.failed},
          {"search", search},
          {"levels_run", sweep.outcomes.size()},
          {"took_s", sweep.took_s},
          {"finding",
           stats::DescribeCapacity(c, sweep.outcomes, closed_loop ? "concurrent" : "req/s")}};
}

Result<SweepResult> RunSweep(const SweepPlan& plan, const RunLevel& run_level,
                             const std::atomic<bool>& stop, const Clock& clock) {
  const int64_t started_ns = clock.NowNs();
  SweepResult result;
  const auto run = [&](double level) -> Status {
    Result<stats::LevelOutcome> outcome = run_level(level);
    if (!outcome.ok()) return outcome.status();
    result.outcomes.push_back(std::move(*outcome));
    return Status::Ok();
  };
  const auto missed = [&] { return !result.outcomes.back().passed; };

  if (plan.search) {
    // Upward, doubling, until a level does not pass.
    double level = plan.integer ? std::max(1.0, std::round(plan.start)) : plan.start;
    // Without a ceiling, 2^12 times the start is as far as a search goes.
    for (int doublings = 0; !stop.load() && doublings <= 12; ++doublings) {
      SG_RETURN_IF_ERROR(run(level));
      if (missed() || (plan.max_level && level >= *plan.max_level)) break;
      double next = level * 2;
      if (plan.max_level) next = std::min(next, *plan.max_level);
      level = next;
    }
  } else {
    std::optional<size_t> first_miss;
    for (size_t l = 0; l < plan.levels.size() && !stop.load(); ++l) {
      SG_RETURN_IF_ERROR(run(plan.levels[l]));
      if (missed() && !first_miss) first_miss = l;
      if (first_miss && l > *first_miss && !plan.every_level) break;
    }
  }
  // Bisection between the last pass and the first miss.
  for (int64_t b = 0; !stop.load() && (plan.search || b < plan.bisect); ++b) {
    const stats::CapacityFinding so_far = stats::FindCapacity(result.outcomes);
    if (!so_far.holds_up_to || !so_far.fails_at) break;
    if (plan.search && *so_far.fails_at <= *so_far.holds_up_to * (1 + plan.resolution)) break;
    const std::optional<double> next =
        stats::BisectLevel(*so_far.holds_up_to, *so_far.fails_at, plan.integer);
    if (!next) break;
    SG_RETURN_IF_ERROR(run(*next));
  }
  result.finding = stats::FindCapacity(result.outcomes);
  result.took_s = static_cast<double>(clock.NowNs() - started_ns) / 1e9;
  return result;
}

}  // namespace stagegate::scenario
