#include "scenario/shard_plan.h"

#include <algorithm>

namespace stagegate::scenario {
namespace {

using manifest::LoadPhase;
using manifest::PhaseKind;

bool UsedByAStage(const manifest::Scenario& scenario, PhaseKind kind) {
  for (const manifest::EffectiveStage& stage : manifest::EffectiveStages(scenario))
    if (stage.phases.empty() ||
        std::find(stage.phases.begin(), stage.phases.end(), kind) != stage.phases.end())
      return true;
  return false;
}

}  // namespace

std::vector<std::string> ShardProblems(const manifest::Bundle& bundle, int64_t shards) {
  std::vector<std::string> problems;
  const manifest::Scenario& scenario = bundle.scenario;
  for (const LoadPhase& phase : scenario.phases) {
    if (!UsedByAStage(scenario, phase.kind)) continue;
    const std::string where = phase.pos.ToString() + ": " +
                              std::string(manifest::NameOf(phase.kind, manifest::kPhaseNames)) +
                              ": a run in " + std::to_string(shards) + " shards ";
    if (phase.search)
      problems.push_back(where +
                         "takes fixed plans only: a search decides each level from the one "
                         "before, which no shard sees whole; give fixed levels (rates or "
                         "concurrencies) instead");
    if (phase.bisect > 0)
      problems.push_back(where +
                         "takes fixed plans only: bisection decides its levels from the ones "
                         "before, which no shard sees whole; drop 'bisect'");
    const bool closed_loop = phase.concurrency || !phase.concurrency_levels.empty();
    if (closed_loop && !phase.duration_s)
      problems.push_back(where +
                         "starts every phase at the same planned offset in every shard, so a "
                         "closed loop needs 'duration_s' (a request count alone ends whenever "
                         "the server lets it)");
    std::vector<int64_t> concurrencies = phase.concurrency_levels;
    if (phase.concurrency) concurrencies.push_back(*phase.concurrency);
    for (int64_t c : concurrencies)
      if (c < shards) {
        problems.push_back(where +
                           "needs at least one request in flight in each shard: " + "concurrency " +
                           std::to_string(c) + " is below " + std::to_string(shards));
        break;
      }
  }
  return problems;
}

int64_t SlotNs(const PhaseStep& step) {
  const load::LoadOptions& o = step.options;
  int64_t span = o.duration_s ? static_cast<int64_t>(*o.duration_s * 1e9) : 0;
  if (!o.arrivals.empty()) span = std::max(span, o.arrivals.back().intended_ns);
  return span + static_cast<int64_t>(o.grace_s * 1e9);
}

void TakeShard(PhaseStep& step, load::Shard shard) {
  step.options.shard = shard;
  if (shard.count <= 1) return;
  std::vector<load::Arrival>& arrivals = step.options.arrivals;
  std::erase_if(arrivals, [shard](const load::Arrival& a) {
    return a.sequence % shard.count != shard.index;
  });
  // What this shard's client is offered: its own part of the schedule.
  if (step.offered_rate) step.offered_rate = OfferedRate(arrivals);
}

}  // namespace stagegate::scenario
