#include "telemetry/series.h"

namespace stagegate::telemetry {

const std::vector<VendorName>& VendorNames() {
  static const std::vector<VendorName> names = {
      {Series::kWaiting, "vLLM", "vllm:num_requests_waiting", 1},
      {Series::kWaiting, "SGLang", "sglang:num_queue_reqs", 1},
      {Series::kWaiting, "TGI", "tgi_queue_size", 1},
      {Series::kWaiting, "NIM", "num_requests_waiting", 1},
      {Series::kRunning, "vLLM", "vllm:num_requests_running", 1},
      {Series::kRunning, "SGLang", "sglang:num_running_reqs", 1},
      {Series::kRunning, "TGI", "tgi_batch_current_size", 1},
      {Series::kRunning, "NIM", "num_requests_running", 1},
      {Series::kKvCache, "vLLM", "vllm:kv_cache_usage_perc", 1},
      {Series::kKvCache, "vLLM", "vllm:gpu_cache_usage_perc", 1},
      {Series::kKvCache, "SGLang", "sglang:token_usage", 1},
      {Series::kKvCache, "NIM", "gpu_cache_usage_perc", 1},
      {Series::kGpuUtilization, "DCGM exporter", "DCGM_FI_DEV_GPU_UTIL", 0.01},
      {Series::kGpuUtilization, "NVML", "gpu_utilization_ratio", 1},
      {Series::kGpuMemory, "DCGM exporter", "DCGM_FI_DEV_FB_USED", 1048576},
      {Series::kGpuMemory, "NVML", "gpu_memory_used_bytes", 1},
      {Series::kGpuPower, "DCGM exporter", "DCGM_FI_DEV_POWER_USAGE", 1},
      {Series::kGpuPower, "NVML", "gpu_power_watts", 1},
      {Series::kGpuEnergy, "DCGM exporter", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 0.001},
      {Series::kGpuEnergy, "NVML", "gpu_energy_joules_total", 1},
  };
  return names;
}

std::optional<VendorName> Recognise(std::string_view name) {
  for (const VendorName& v : VendorNames())
    if (name == v.name) return v;
  return std::nullopt;
}

std::vector<std::string> NamesOf(Series series) {
  std::vector<std::string> out;
  for (const VendorName& v : VendorNames())
    if (v.series == series) out.push_back(v.name);
  return out;
}

std::string_view Name(Series series) {
  switch (series) {
    case Series::kWaiting:
      return "waiting";
    case Series::kRunning:
      return "running";
    case Series::kKvCache:
      return "kv cache";
    case Series::kGpuUtilization:
      return "gpu utilization";
    case Series::kGpuMemory:
      return "gpu memory";
    case Series::kGpuPower:
      return "gpu power";
    case Series::kGpuEnergy:
      break;
  }
  return "gpu energy";
}

bool Adds(Series series) {
  return series != Series::kKvCache && series != Series::kGpuUtilization;
}

}  // namespace stagegate::telemetry
