#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "manifest/scenario.h"
#include "manifest/yaml_reader.h"

namespace stagegate::manifest {

/// Bounds of load: far above what one load generator sends, and small enough that nothing
/// computed from them (a schedule, a deadline in nanoseconds) overflows.
inline constexpr int64_t kMaxConcurrency = 10'000;
inline constexpr double kMaxRate = 100'000;          // requests per second
inline constexpr double kMaxPhaseSeconds = 604'800;  // one week
inline constexpr int64_t kMaxRequests = 10'000'000;  // in one phase, or one level
inline constexpr Range kConcurrencyRange{.min = 1, .max = kMaxConcurrency};
inline constexpr Range kRateRange{.min = 0, .max = kMaxRate, .min_exclusive = true};
inline constexpr Range kSecondsRange{.min = 0, .max = kMaxPhaseSeconds, .min_exclusive = true};

/// Reads the `phases` mapping of a scenario: each known phase name to its load pattern, returned
/// in run order. Problems go to the file's diagnostics.
std::vector<LoadPhase> ReadPhases(const YamlFile& file, const YAML::Node& node);

}  // namespace stagegate::manifest
