#pragma once

#include <string>
#include <string_view>

#include "base/pattern.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// Reads a pattern and checks that it compiles as a stagegate::Pattern (RE2, case-insensitive,
/// anywhere in the text); reports it at the node and returns nullopt when it does not.
std::optional<std::string> ReadPattern(const YamlFile& file, const YAML::Node& node,
                                       std::string_view name);

}  // namespace stagegate::manifest
