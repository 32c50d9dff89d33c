#pragma once

#include <vector>

#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// What a stage of the application adds, and what a task needs: the bare model needs none.
enum class Capability { kRetrieval, kIdentity, kTools };

inline constexpr EnumName<Capability> kCapabilityNames[] = {
    {Capability::kRetrieval, "retrieval"},
    {Capability::kIdentity, "identity"},
    {Capability::kTools, "tools"},
};

/// Reads a list of capability names; a duplicate or unknown name is reported.
std::optional<std::vector<Capability>> ReadCapabilities(const YamlFile& file,
                                                        const YAML::Node& node,
                                                        std::string_view name);

/// True when every capability in `needs` is in `provided`.
bool Covers(const std::vector<Capability>& provided, const std::vector<Capability>& needs);

}  // namespace stagegate::manifest
