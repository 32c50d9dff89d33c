#pragma once

#include "manifest/scenario.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// Reads the `cost` mapping of a scenario: what one instance or GPU costs an hour, how many served
/// the test, in which currency, and where the price comes from. Every problem goes to `file`'s
/// diagnostics at the position of the value; what could not be read keeps its default.
Cost ReadCost(const YamlFile& file, const YAML::Node& node);

}  // namespace stagegate::manifest
