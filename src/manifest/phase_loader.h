#pragma once

#include <optional>
#include <vector>

#include "manifest/scenario.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// Reads the `phases` mapping of a scenario: each known phase name to its load pattern, returned
/// in run order. Problems go to the file's diagnostics.
std::vector<LoadPhase> ReadPhases(const YamlFile& file, const YAML::Node& node);

}  // namespace stagegate::manifest
