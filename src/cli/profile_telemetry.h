#pragma once

// `stagegate profile --metrics-url URL --gpu auto|off|dcgm URL`: the target's own metrics and the
// GPUs', scraped on the profile's clock through every level, then stored with the run and written
// beside the requests as server_metrics.csv and profile.json's "server_metrics".

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "scenario/telemetry_scrapers.h"
#include "store/store.h"
#include "telemetry/scraper.h"

namespace stagegate::cli {

/// What to scrape, as the options gave it.
struct ProfileTelemetryOptions {
  std::string metrics_url;       // "": the target's metrics are not scraped
  std::vector<std::string> gpu;  // {"auto"}, {"off"} or {"dcgm", URL}
  int64_t interval_ms = 1000;
};

/// A level's window on the profile's clock, for the per-level summaries.
struct LevelWindow {
  std::string kind;
  double value = 0;
  int64_t started_ns = 0, ended_ns = 0;
};

/// The options' problems ("--gpu: ..."), each a line; none when they are good.
std::vector<std::string> CheckTelemetryOptions(const ProfileTelemetryOptions& options);

/// profile.json's "server_metrics": each source with its scrapes and failures, and per level
/// the canonical series' mean and peak over its window, read from the run's stored telemetry by
/// the report's one rule (report::ReadServerSeries, docs/metrics.md).
Result<nlohmann::json> ServerMetricsJson(const std::vector<scenario::TelemetrySource>& sources,
                                         const std::vector<LevelWindow>& levels,
                                         store::Store& store, const std::string& run_id);
/// server_metrics.csv: a row a sample (`samples` oldest first), its time in ns on the clock of
/// requests.jsonl's times_ns, the level it fell in, the series as exposed and in its canonical
/// unit.
std::string ServerMetricsCsv(const std::vector<telemetry::TimedSample>& samples,
                             const std::vector<LevelWindow>& levels);

}  // namespace stagegate::cli
