#pragma once

// Thresholds per kind of task: the checks of the scenario's threshold scopes, each judged on the
// requests of its own tasks, as the report shows them beside the scenario-wide checks.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/findings.h"

namespace stagegate::report {

/// The final stage's steady and burst checks of each threshold scope, a row a check, a header
/// row first: scope, phase, requests, check, measured, limit, status. Only the header when the
/// scenario has no scopes.
std::vector<std::vector<std::string>> ScopeTable(const store::RunFindings& findings);

/// The same rows in report.json: {scope, phase, requests, check, measured, limit, status}.
nlohmann::json ScopesJson(const store::RunFindings& findings);

/// A check's status word: "pass", "fail", or "pending" when the scope had too few requests.
std::string ScopeStatus(const store::ThresholdResult& check);

}  // namespace stagegate::report
