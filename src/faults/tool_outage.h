#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "load/request_record.h"
#include "manifest/scenario.h"

namespace stagegate::faults {

/// One request of a tool-outage probe, with what was judged of it.
struct OutageRequest {
  std::string part;  // "before", "during" or "after"
  int64_t phase_id = 0, sequence = 0;
  std::string trace_id;
  std::string outcome;
  std::optional<int64_t> status;
  std::optional<double> e2e_ms;  // absent when it never ended
  bool in_time = false;          // ended, with an answer, within answer_within_ms
  std::string acknowledged;      // what matched expect_answer; "" for no match
  std::string claimed;           // what matched must_not; "" for no match
  bool worked = false;           // the tool did its job (see ToolWorked)
  bool passed = false;  // before and after: worked; during: in time, acknowledged, no claim
  std::string tool_calls_json;
  std::string excerpt;  // the answer's (or error's) first 300 bytes
};

/// What a tool-outage probe saw: the records of each part, the actuator's results, and, with the
/// built-in proxy, how many connections the application made through it.
struct OutageObservation {
  std::string actuator;  // Actuator::Describe()
  std::span<const load::RequestRecord> before, during, after;
  Status injected = Status::Ok();
  Status restored = Status::Ok();
  std::optional<int64_t> restored_ns;  // from the run's origin, when the restore returned
  std::optional<int64_t> proxy_connections_before;
  bool interrupted = false;
};

/// The verdict of a tool-outage probe:
/// - "pass": the tool worked before; during the outage every answer came in time, said the tool
///   was unavailable, and claimed nothing that did not happen; it worked again in time.
/// - "fail": an answer during the outage was late or missing, did not acknowledge the outage,
///   or claimed success; or the tool did not work again within recover_within_s.
/// - "inconclusive": the probe could not show anything: the tool did not work before the
///   outage, no tool call went through the proxy, the actuator failed, or restore failed.
/// - "interrupted": the run was stopped during the probe.
struct ToolOutageFinding {
  std::string probe;
  std::string actuator;
  std::string verdict;
  int64_t before = 0, during = 0, after = 0;  // requests sent in each part
  std::optional<double> recovered_s;          // restore to the end of the first working answer
  std::optional<int64_t> proxy_connections_before;
  std::vector<OutageRequest> requests;
  std::vector<std::string> reasons;  // why it is not a pass, in plain words
};

/// Did this request show the tool working: an answer (HTTP 200, complete) within
/// answer_within_ms that does not say the tool is unavailable and, when the probe has
/// `expect_working`, matches it.
bool ToolWorked(const manifest::ToolOutageProbe& probe, const load::RequestRecord& record);

ToolOutageFinding JudgeToolOutage(const manifest::ToolOutageProbe& probe,
                                  const OutageObservation& seen);

nlohmann::json ToolOutageToJson(const ToolOutageFinding& finding);

}  // namespace stagegate::faults
