#pragma once

// The files of the release report: a stored run's report (with its triage counts) in each
// format, and the dashboard of every run in a store.

#include <string>
#include <vector>

#include "base/status.h"
#include "manifest/bundle.h"
#include "report/model.h"
#include "store/store.h"

namespace stagegate::report {

/// Writes the dashboard of every run in `store` to `dir`/index.html, linking each run's
/// `dir`/<run>/report.html where there is one.
Status WriteDashboard(store::Store& store, const std::string& dir);

/// The release report of a stored run, with the count of each triage class. `bundle` is the
/// run's scenario read again (the automated checks run against its corpus); null when it could
/// not be, and `problem` says why.
Result<ReportModel> BuildRunReport(store::Store& store, const store::RunInfo& run,
                                   const manifest::Bundle* bundle, const std::string& problem);

/// Writes `model` into `dir` in each of `formats` (md, html, json, junit, csv; empty: all), as
/// report.md, report.html, report.json, report.junit.xml and report.csv. The paths written go
/// to `written`.
Status WriteReportFormats(const ReportModel& model, const std::string& dir,
                          std::vector<std::string> formats, std::vector<std::string>& written);

/// Builds the release report of a stored run whose scenario was read again (`bundle`) and writes
/// it into `dir` in each of `formats` (as WriteReportFormats). Returns the report, for its
/// verdict.
Result<ReportModel> WriteReportFiles(store::Store& store, const store::RunInfo& run,
                                     const manifest::Bundle& bundle, const std::string& dir,
                                     std::vector<std::string> formats,
                                     std::vector<std::string>& written);

}  // namespace stagegate::report
