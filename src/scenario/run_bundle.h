#pragma once

// A scenario's bundle read from its files: as `run` reads it before it sends anything, and again
// for a stored run, held to the corpus and rubric the run used.

#include <optional>
#include <string>

#include "manifest/bundle.h"
#include "manifest/diagnostics.h"
#include "scenario/stage_requests.h"
#include "store/store.h"

namespace stagegate::scenario {

/// The run's scenario read again, with the corpus and rubric it ran with: their hashes must be
/// the run's. `problem` says why there is none.
std::optional<manifest::Bundle> RunBundle(const store::RunInfo& run, std::string& problem);

/// Loads the scenario at `path` as `run` reads it before sending anything: its bundle, the sim's
/// latency profile (for a sim target), the tokenizer and the dataset or trace (into `input`).
/// Every problem goes to `diagnostics`; nothing is returned when there was one.
std::optional<manifest::Bundle> LoadBundleAsRunWill(const std::string& path,
                                                    manifest::Diagnostics& diagnostics,
                                                    InputFiles& input);

}  // namespace stagegate::scenario
