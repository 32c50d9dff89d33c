#pragma once

// The server and GPU series stagegate draws and reasons on, whatever the serving stack calls them:
// one table maps each vendor's metric name onto a canonical series and the factor that brings it
// to the canonical unit. docs/metrics.md prints the same table.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagegate::telemetry {

enum class Series {
  kWaiting,         // requests queued, not yet scheduled (count)
  kRunning,         // requests being generated (count)
  kKvCache,         // share of the KV cache in use (0 to 1)
  kGpuUtilization,  // share of time a kernel ran (0 to 1)
  kGpuMemory,       // framebuffer in use (bytes)
  kGpuPower,        // power draw (watts)
  kGpuEnergy,       // energy since the driver loaded (joules; a counter)
};
inline constexpr Series kAllSeries[] = {
    Series::kWaiting,   Series::kRunning,  Series::kKvCache,  Series::kGpuUtilization,
    Series::kGpuMemory, Series::kGpuPower, Series::kGpuEnergy};

/// One vendor's name for a series, and the factor from its unit to the canonical one.
struct VendorName {
  Series series;
  const char* vendor;  // "vLLM", "SGLang", "TGI", "NIM", "DCGM exporter", "NVML"
  const char* name;    // the metric name as exposed
  double scale;        // canonical value = exposed value * scale
};

/// Every name stagegate recognises, in the order docs/metrics.md lists them.
const std::vector<VendorName>& VendorNames();

/// The canonical series of a metric name, if the table has it.
std::optional<VendorName> Recognise(std::string_view name);

/// Every metric name of a series (for a store query).
std::vector<std::string> NamesOf(Series series);

/// "waiting", "running", "kv cache", "gpu utilization", "gpu memory", "gpu power", "gpu energy".
std::string_view Name(Series series);

/// Whether values of one series from several label sets (GPUs, engines) at one time add up
/// (counts, bytes, watts, joules) or average (shares).
bool Adds(Series series);

}  // namespace stagegate::telemetry
