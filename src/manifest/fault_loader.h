#pragma once

#include "manifest/scenario.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// Reads the `faults` mapping of a scenario (access-denial and tool-outage probes). Names of
/// tasks and personas are kept as Refs and checked against the corpus later.
FaultControls ReadFaults(const YamlFile& file, const YAML::Node& node);

/// Reads a name that refers to something defined elsewhere, keeping where it was written.
std::optional<Ref> ReadRef(MapReader& map, const std::string& key, Need need = Need::kOptional);

}  // namespace stagegate::manifest
