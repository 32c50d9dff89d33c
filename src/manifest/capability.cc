#include "manifest/capability_reader.h"

#include <algorithm>

namespace stagegate::manifest {

std::optional<std::vector<Capability>> ReadCapabilities(const YamlFile& file,
                                                        const YAML::Node& node,
                                                        std::string_view name) {
  if (!node.IsSequence()) {
    file.Error(node, std::string(name) +
                         " must be a list (any of retrieval, identity, tools), got " +
                         Describe(node));
    return std::nullopt;
  }
  std::vector<Capability> capabilities;
  bool ok = true;
  for (const YAML::Node& item : node) {
    std::optional<Capability> capability =
        ReadEnum(file, item, std::string(name) + " item", kCapabilityNames);
    if (!capability) {
      ok = false;
    } else if (std::find(capabilities.begin(), capabilities.end(), *capability) !=
               capabilities.end()) {
      file.Error(item, std::string(name) + " lists '" + item.Scalar() + "' twice");
      ok = false;
    } else {
      capabilities.push_back(*capability);
    }
  }
  if (!ok) return std::nullopt;
  return capabilities;
}

bool Covers(const std::vector<Capability>& provided, const std::vector<Capability>& needs) {
  return std::all_of(needs.begin(), needs.end(), [&](Capability need) {
    return std::find(provided.begin(), provided.end(), need) != provided.end();
  });
}

}  // namespace stagegate::manifest
