#pragma once

// The per-task gate rules (quality/task_rules.h) in the report: read from the store, added to
// condition 2's checks, and shown first in its section.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "manifest/bundle.h"
#include "report/model.h"
#include "store/store.h"

namespace stagegate::report {

/// Applies the rules to `m.run` (after `m.quality` is set): judges each task's answers in this
/// run and, with `quality.no_regression_from: approved`, in the approved run; sets
/// `m.task_rules` and adds a quality check for each finding (fail) and each undecided rule
/// (pending). `bundle` (may be null) gives the corpus: without it the rules cannot run, and
/// the regression rule, if the scenario has it, is pending.
Status AddTaskRules(store::Store& store, const manifest::Bundle* bundle, ReportModel& m);

/// The title of the findings' table in report.md and report.html.
inline constexpr const char* kTaskRulesTitle = "Tasks that fail a per-task rule";

/// The findings as a table, a header row first: kind, task, evidence, trace id. Only the header
/// when there is none.
std::vector<std::vector<std::string>> TaskRulesTable(const ReportModel& m);

/// The rules' results in report.json (conditions.quality.task_rules).
nlohmann::json TaskRulesJson(const ReportModel& m);

/// Lines for `stagegate quality` and the report's quality section; none without rules.
std::vector<std::string> TaskRulesLines(const ReportModel& m);

}  // namespace stagegate::report
