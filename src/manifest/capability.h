#pragma once

#include <vector>

#include "manifest/enum_name.h"

namespace stagegate::manifest {

/// What a stage of the application adds, and what a task needs: the bare model needs none.
enum class Capability { kRetrieval, kIdentity, kTools };

inline constexpr EnumName<Capability> kCapabilityNames[] = {
    {Capability::kRetrieval, "retrieval"},
    {Capability::kIdentity, "identity"},
    {Capability::kTools, "tools"},
};

/// True when every capability in `needs` is in `provided`.
bool Covers(const std::vector<Capability>& provided, const std::vector<Capability>& needs);

}  // namespace stagegate::manifest
