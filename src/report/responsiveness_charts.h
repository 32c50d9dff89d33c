#pragma once

#include <string>

#include "report/model.h"

namespace stagegate::report {

/// The charts of condition 1 in report.html, as inline SVG, each with its scenario limits as
/// reference lines: TTFT at steady load by stage (a CDF), the final stage's sweep by level, and
/// the timelines of the run (empty where the run has no such data).
std::string ResponsivenessChartsHtml(const ReportModel& m);

}  // namespace stagegate::report
