#pragma once

// Whether two runs measured the same thing: the parts of their configuration (the canonical
// scenario a run was fingerprinted from, or a profile run's configuration) that must match for a
// comparison of their figures to mean anything.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace stagegate::report {

/// One part of a run's configuration: its label, a one-line summary for the report's facts, and
/// its canonical value (two runs differ in the part when the values differ).
struct ComparablePart {
  std::string label;  // "model", "corpus", "load profile", ...
  std::string summary;
  nlohmann::json value;
};

/// The parts of a run. A scenario run: model, hardware, serving stack, sampling, corpus (name,
/// version, sha256), rubric (id, sha256), target, input distribution, load profile (phases and
/// seed), stages, thresholds, quality thresholds, recovery policy and fault probes. A profile run:
/// target, input distribution, load profile and SLOs. The first part is always "kind".
std::vector<ComparablePart> ComparableParts(const store::RunInfo& run);

/// Every part in which `current` differs from `baseline`: one line with both summaries when they
/// are short ("thresholds: ttft p95 <= 1500 ms (baseline) / ttft p95 <= 2000 ms (this run)"),
/// else a line for each of up to four fields that differ ("load profile differs at arrival:
/// poisson (baseline) / gamma (this run)"). Empty when the runs are comparable.
std::vector<std::string> Differences(const store::RunInfo& current, const store::RunInfo& baseline);

}  // namespace stagegate::report
