#include "manifest/patterns.h"

namespace stagegate::manifest {

std::optional<std::string> ReadPattern(const YamlFile& file, const YAML::Node& node,
                                       std::string_view name) {
  std::optional<std::string> text = ReadString(file, node, name);
  if (!text) return std::nullopt;
  try {
    std::regex compiled(*text, kPatternFlags);
  } catch (const std::regex_error& error) {
    file.Error(node, std::string(name) + " is not a valid pattern: " + error.what());
    return std::nullopt;
  }
  return text;
}

}  // namespace stagegate::manifest
