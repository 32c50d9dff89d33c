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
struct DenialFinding {
  std::string probe;
  std::string verdict;
  int64_t attempts = 0;
  int64_t denied = 0;
  std::vector<std::string> leaks;          // "CANARY-... in the answer of attempt 2", ...
  std::optional<bool> control_saw_canary;  // absent without a positive control
  std::vector<std::string> reasons;        // why it is not a pass, in plain words
};

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
