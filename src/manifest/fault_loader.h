#pragma once

#include "manifest/scenario.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// Reads the `faults` mapping of a scenario (access-denial and tool-outage probes). Names of
/// tasks and personas are kept as Refs and checked against the corpus later.
FaultControls ReadFaults(const YamlFile& file, const YAML::Node& node);

/// Gives probes that name no wording the scenario's: a tool-outage probe without expect_answer
/// takes `triage.tool_failure_patterns`, an access-denial probe with neither expect_status nor
/// expect_answer takes statuses 401 and 403 and `triage.refusal_patterns` (each list as one
/// pattern, any of them matching).
void ApplyDefaultWording(const TriageRules& triage, FaultControls& faults);

/// Reads a name that refers to something defined elsewhere, keeping where it was written.
std::optional<Ref> ReadRef(MapReader& map, const std::string& key, Need need = Need::kOptional);

}  // namespace stagegate::manifest
