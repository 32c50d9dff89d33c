#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manifest/corpus.h"
#include "manifest/diagnostics.h"
#include "manifest/recorded_answers.h"
#include "manifest/rubric.h"
#include "manifest/scenario.h"

namespace stagegate::manifest {

/// A scenario with everything it references, loaded and checked against each other.
struct Bundle {
  Scenario scenario;
  std::optional<Corpus> corpus;  // absent when the scenario names none
  std::optional<Rubric> rubric;  // absent when the scenario names none
  /// Each baseline's recorded answers, by baseline name, in the scenario's order.
  std::vector<std::pair<std::string, std::vector<RecordedAnswer>>> baseline_answers;
};

/// Loads the scenario at `path`, the corpus and rubric it names, and checks every reference
/// between them (personas, tasks, criteria). Reports every problem found in all files to
/// `diagnostics`; the result is nullopt when there was any. Reads files only; writes nothing.
std::optional<Bundle> LoadBundle(const std::string& path, Diagnostics& diagnostics);

}  // namespace stagegate::manifest
