#include "manifest/patterns.h"

namespace stagegate::manifest {

std::optional<std::string> ReadPattern(const YamlFile& file, const YAML::Node& node,
                                       std::string_view name) {
  std::optional<std::string> text = ReadString(file, node, name);
  if (!text) return std::nullopt;
  Result<Pattern> compiled = Pattern::Compile(*text);
  if (!compiled.ok()) {
    file.Error(node, std::string(name) + " is not a valid pattern: " + compiled.status().message());
    return std::nullopt;
  }
  return text;
}

}  // namespace stagegate::manifest
