#pragma once

#include <regex>
#include <string>
#include <string_view>

#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// How every manifest pattern is matched: ECMAScript, case-insensitive, anywhere in the text.
inline constexpr std::regex::flag_type kPatternFlags = std::regex::ECMAScript | std::regex::icase;

/// Reads a pattern and checks that it compiles; reports it and returns nullopt when it does not.
std::optional<std::string> ReadPattern(const YamlFile& file, const YAML::Node& node,
                                       std::string_view name);

}  // namespace stagegate::manifest
