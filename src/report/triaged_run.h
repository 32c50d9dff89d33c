#pragma once

// Every request of a stored run, classified for support (`stagegate triage`, and the report's
// triage summary): the store's phases, requests and reviewers' scores, and the run's corpus for
// the automated checks, handed to the Triager of report/triage.h.

#include <string>
#include <vector>

#include "base/status.h"
#include "load/request_record.h"
#include "manifest/bundle.h"
#include "report/triage.h"
#include "store/store.h"

namespace stagegate::report {

/// One request of a run with its phase and its class.
struct TriagedRequest {
  const load::RequestRecord* record = nullptr;
  const store::PhaseInfo* phase = nullptr;
  Triage triage;
};

/// Every request of a run, classified, with what the caller should know about how. Moving it keeps
/// `triaged` valid: a moved vector keeps its elements where they are.
struct TriagedRun {
  std::vector<store::PhaseInfo> phases;
  std::vector<load::RequestRecord> records;
  std::vector<TriagedRequest> triaged;  // points into the two above
  std::vector<std::string> notes;       // what could not be judged, and why
};

/// Classifies every request of `run` (warmup and superseded phases left out) from the store, the
/// run's scenario read again (`bundle`, for the corpus's checks; null when it could not be, and
/// `problem` says why), and the reviewers' scores.
Result<TriagedRun> TriageStoredRun(store::Store& store, const store::RunInfo& run,
                                   const manifest::Bundle* bundle, const std::string& problem);

}  // namespace stagegate::report
