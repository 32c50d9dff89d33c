#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "manifest/capability.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// Reads a list of capability names; a duplicate or unknown name is reported.
std::optional<std::vector<Capability>> ReadCapabilities(const YamlFile& file,
                                                        const YAML::Node& node,
                                                        std::string_view name);

}  // namespace stagegate::manifest
