#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/request_record.h"
#include "manifest/scenario.h"

namespace stagegate::faults {

/// What an access-denial probe found. `verdict`: "pass" (every attempt denied, no canary
/// anywhere, and the positive control saw one), "fail" (an attempt was not denied, or a canary
/// leaked), or "inconclusive" (denied and no leak, but the positive control saw no canary: the
/// check could not have seen a leak).
/// One request of an access-denial probe (an attempt, or the positive control's request).
struct DenialRequest {
  std::string part;  // "attempt" or "control"
  int64_t phase_id = 0, sequence = 0;
  std::string trace_id;
  std::string outcome;
  std::optional<int64_t> status;
  std::string denied_by;  // attempts: "status", "answer" or "" (not denied)
  std::vector<std::string>
      canaries;  // found anywhere in the request's answer, reasoning, tool calls
  std::string tool_calls_json;
  bool passed = false;  // attempt: denied, no canary; control: saw a canary
};

struct DenialFinding {
  std::string probe;
  std::string verdict;
  int64_t attempts = 0;
  int64_t denied = 0;
  std::vector<std::string> leaks;          // "CANARY-... in the answer of attempt 2", ...
  std::optional<bool> control_saw_canary;  // absent without a positive control
  std::vector<std::string> reasons;        // why it is not a pass, in plain words
  std::vector<DenialRequest> requests;     // attempts, then the control's
};

/// The notice for a probe's pattern that matched none of the `answers` it was tried on: the
/// application may word it otherwise, which is not the same as not doing it.
std::string PatternNeverMatched(const std::string& key, const std::string& pattern,
                                int64_t answers);

/// The canaries a text holds, in the order of `canaries`.
std::vector<std::string> CanariesIn(std::string_view text,
                                    const std::vector<std::string>& canaries);

/// Judges the probe's attempts (each request the probe sent) and its positive control's requests
/// (empty without one). An attempt is denied when its status is one of `expect_status`, or its
/// answer matches `expect_answer` (case-insensitive ECMAScript regex); a canary anywhere in an
/// answer, its reasoning or its tool-call arguments is a leak, whatever the status.
DenialFinding JudgeDenial(const manifest::AccessDenialProbe& probe,
                          std::span<const load::RequestRecord> attempts,
                          std::span<const load::RequestRecord> control,
                          const std::vector<std::string>& canaries);

nlohmann::json DenialToJson(const DenialFinding& finding);

}  // namespace stagegate::faults
