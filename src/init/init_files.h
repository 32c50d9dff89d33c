#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "init/endpoint_probe.h"

namespace stagegate::init {

/// What `stagegate init` was asked for.
struct InitRequest {
  std::string target_url;                    // as given; the scenario keeps its root (EndpointRoot)
  std::string model;                         // sent in requests
  std::vector<std::string> stages;           // bare first, then any of retrieval, identity, tools
  std::string api_key_env;                   // "" for none
  std::optional<EndpointFindings> findings;  // what the probe found; absent: not probed
};

/// The overload phase init writes, and why it is that size (comment lines for the scenario).
struct InitOverload {
  double rate = 40;  // requests/s, constant arrival
  double duration_s = 5;
  int64_t requests = 200;  // the bound on the phase's count: rate x duration_s
  bool probed = false;     // sized from the probe's timed answer; else the defaults above
  std::string basis;       // how it was sized, for a person
};

/// The overload of the scenario for `request`: from the probe's timed answer when there is one
/// (the time S one request of max_tokens takes alone, scaled from the answer's time per token;
/// a rate bringing 256 such requests in S, 10 to 200 requests/s, for S seconds, 5 to 30), else
/// 40 requests/s for 5 s.
InitOverload SizeOverload(const InitRequest& request);

/// The stage names init knows, in the order they run.
const std::vector<std::string>& InitStageNames();

/// The files of a starting point, as (path relative to the folder, text): a scenario, a rubric
/// and a corpus skeleton whose tasks are marked as examples. The scenario follows the findings:
/// stream: false without streaming (and no TTFT or ITL threshold), metrics_url with /metrics,
/// an overload phase of SizeOverload's size then a recovery phase in the final stage (earlier
/// stages run warmup, steady and burst alone). Every text the user gave is written as a quoted
/// YAML scalar; no text from the server is written at all.
std::vector<std::pair<std::string, std::string>> InitFiles(const InitRequest& request);

/// What the findings changed in the scenario, as lines for a person ("stream: false: ...").
std::vector<std::string> InitAdjustments(const InitRequest& request);

}  // namespace stagegate::init
