#include "report/scopes.h"

#include "base/strings.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

// Calls `row(phase, check)` for every scope check of the final stage's steady and burst phases.
template <typename Row>
void ForEachScopeCheck(const store::RunFindings& findings, Row row) {
  const store::StageFindings* stage = findings.FinalStage();
  if (!stage) return;
  for (const store::StepFindings& step : stage->steps) {
    if (step.phase != "steady" && step.phase != "burst") continue;
    for (const store::ThresholdResult& check : step.checks)
      if (!check.scope.empty()) row(step.phase, check);
  }
}

// The check's name without its "scope NAME: " prefix, which the table's first column says.
std::string Bare(const store::ThresholdResult& check) {
  const std::string prefix = "scope " + check.scope + ": ";
  return check.check.starts_with(prefix) ? check.check.substr(prefix.size()) : check.check;
}

}  // namespace

std::string ScopeStatus(const store::ThresholdResult& check) {
  if (check.pending) return "pending";
  return check.passed ? "pass" : "fail";
}

std::vector<std::vector<std::string>> ScopeTable(const store::RunFindings& findings) {
  std::vector<std::vector<std::string>> table = {
      {"scope", "phase", "requests", "check", "measured", "limit", "status"}};
  ForEachScopeCheck(findings, [&](const std::string& phase, const store::ThresholdResult& check) {
    table.push_back({check.scope, phase, std::to_string(check.requests), Bare(check),
                     check.measured ? FormatNumber(*check.measured, 3) : "-",
                     check.limit ? FormatNumber(*check.limit, 3) : "-", ScopeStatus(check)});
  });
  return table;
}

json ScopesJson(const store::RunFindings& findings) {
  json out = json::array();
  ForEachScopeCheck(findings, [&](const std::string& phase, const store::ThresholdResult& check) {
    out.push_back({{"scope", check.scope},
                   {"phase", phase},
                   {"requests", check.requests},
                   {"check", Bare(check)},
                   {"measured", check.measured ? json(*check.measured) : json(nullptr)},
                   {"limit", check.limit ? json(*check.limit) : json(nullptr)},
                   {"status", ScopeStatus(check)}});
  });
  return out;
}

}  // namespace stagegate::report
