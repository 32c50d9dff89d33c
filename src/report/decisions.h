#pragma once

// The owners' decisions on a run's conditions (`stagegate signoff`): the evidence each decision
// is made on, and how decisions enter the verdict.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "report/model.h"
#include "store/store.h"

namespace stagegate::report {

/// The condition named `name` ("responsiveness", "quality", "recoverability"), if any.
std::optional<Condition> ConditionNamed(std::string_view name);

/// A fingerprint of the evidence a condition is judged on, from the store: the run's scenario and
/// its stored findings for responsiveness and recoverability; the scenario, the exports and every
/// score for quality. A decision made on other evidence is stale.
Result<std::string> ConditionEvidence(store::Store& store, const store::RunInfo& run,
                                      Condition condition);

/// Reads the run's sign-offs into `m.decisions` and adds a check per condition that needs or has
/// a decision: an owner's rejection fails it (stale or not: a "no" stands until the owner says
/// otherwise); an acceptance on the current evidence passes it; with `require_signoff`, a
/// condition with an owner and no acceptance on the current evidence is pending.
Status AddDecisions(store::Store& store, ReportModel& m);

/// The decisions as a table, a header row first; only the header when no condition has an owner
/// or a decision.
std::vector<std::vector<std::string>> DecisionTable(const ReportModel& m);

/// The decisions in report.json.
nlohmann::json DecisionsJson(const ReportModel& m);

}  // namespace stagegate::report
