#pragma once

// The Runner's plan, shared by the files that define its parts (runner.cc, fault_probes.cc).
// Private to scenario/.

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "faults/fault_proxy.h"
#include "scenario/runner.h"
#include "sim/sim_server.h"

namespace stagegate::scenario {

// Everything planned before the first request: the stages to run, each with its requests and
// the steps of its phases (a sweep's levels are planned as they come, from the same seed).
struct Runner::PlanStage {
  manifest::EffectiveStage effective;
  std::optional<StageRequests> requests;
  std::vector<PhaseStep> steps;  // sweep: the first level only; the rest follow the results
  bool skipped = false;
};

struct Runner::Plan {
  Endpoint endpoint;
  std::vector<PlanStage> stages;
  std::unique_ptr<sim::SimServer> sim;
  // Fault proxies in front of the tools of a target that is not our sim, by listening port: in
  // pass mode for the whole run, so the application's tool URL works through them.
  std::map<int64_t, std::unique_ptr<faults::FaultProxy>> proxies;
};

}  // namespace stagegate::scenario
