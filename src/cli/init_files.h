#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/endpoint_probe.h"

namespace stagegate::cli {

/// What `stagegate init` was asked for.
struct InitRequest {
  std::string target_url;                    // as given; the scenario keeps its root (EndpointRoot)
  std::string model;                         // sent in requests
  std::vector<std::string> stages;           // bare first, then any of retrieval, identity, tools
  std::string api_key_env;                   // "" for none
  std::optional<EndpointFindings> findings;  // what the probe found; absent: not probed
};

/// The stage names init knows, in the order they run.
const std::vector<std::string>& InitStageNames();

/// The files of a starting point, as (path relative to the folder, text): a scenario, a rubric
/// and a corpus skeleton whose tasks are marked as examples. The scenario follows the findings:
/// stream: false without streaming (and no TTFT or ITL threshold), metrics_url with /metrics.
/// Every text the user gave is written as a quoted YAML scalar.
std::vector<std::pair<std::string, std::string>> InitFiles(const InitRequest& request);

/// What the findings changed in the scenario, as lines for a person ("stream: false: ...").
std::vector<std::string> InitAdjustments(const InitRequest& request);

}  // namespace stagegate::cli
