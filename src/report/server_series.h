#pragma once

// The server's and the GPUs' own view of a run, read from its stored telemetry in canonical units
// (telemetry/series.h), and what saturated first as the sweep's load rose.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "store/findings.h"
#include "store/store.h"
#include "telemetry/series.h"

namespace stagegate::report {

/// (t_ns, value in the canonical unit), oldest first.
using SeriesValues = std::vector<std::pair<int64_t, double>>;

/// The canonical series of a run's telemetry in [from_ns, to_ns]. Each comes from the first name
/// of the vendor table that has samples there (a server that exposes an old and a new name is
/// read once), in its canonical unit, summed over label sets (GPUs, engines) at each time, or
/// averaged for shares. A series without samples is absent. `chosen`, when given, receives the
/// table entry each series was read from.
Result<std::map<telemetry::Series, SeriesValues>> ReadServerSeries(
    store::Store& store, const std::string& run_id, int64_t from_ns, int64_t to_ns,
    std::map<telemetry::Series, telemetry::VendorName>* chosen = nullptr);

/// What saturated first as the final stage's sweep rose, from the telemetry of each level.
struct Saturation {
  std::optional<telemetry::Series> series;  // none: nothing saturated, or not known
  std::optional<double> level;              // the lowest level at which it saturated
  std::string unit;                         // "req/s" or "concurrency"
  std::optional<double> value;              // its peak (shares) or mean (waiting) there
  std::string sentence;                     // "KV cache at 98% from 14 req/s", or why not known
};

/// A level saturates a series when, over the level's window: the KV cache's or the GPUs'
/// utilisation peak reaches 95%, or requests wait (a mean of at least 1 waiting). The series that
/// saturates at the lowest level is named (ties: KV cache, GPU utilisation, then waiting).
Result<Saturation> FindSaturation(store::Store& store, const store::RunInfo& run,
                                  const std::vector<store::PhaseInfo>& phases,
                                  const std::string& final_stage, const std::string& unit);

nlohmann::json SaturationJson(const Saturation& saturation);

/// A sweep level as the report names it: "14 req/s", "concurrency 8".
std::string LevelText(double level, const std::string& unit);

}  // namespace stagegate::report
