#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "telemetry/prometheus.h"

namespace stagegate::telemetry {

/// The NVML library to load: $STAGEGATE_NVML_LIBRARY when set (a driver installed elsewhere),
/// else libnvidia-ml.so.1 from the loader's search path.
std::string NvmlLibrary();

/// GPU power, utilisation and memory from NVIDIA's management library (NVML), loaded at run time
/// with dlopen: stagegate neither links against it nor needs it, and a machine without it is
/// simply a machine without GPU figures.
class NvmlSampler {
 public:
  /// Loads `library`, finds the functions it needs and initialises NVML. NotFound when the
  /// library is absent or lacks a function; IoError when NVML does not initialise.
  static Result<std::unique_ptr<NvmlSampler>> Open(
      const std::string& library = "libnvidia-ml.so.1");
  ~NvmlSampler();  // nvmlShutdown, dlclose
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  int devices() const { return devices_; }
  /// For every GPU (label gpu="0", ...): gpu_power_watts, gpu_utilization_ratio (0 to 1),
  /// gpu_memory_used_bytes, gpu_memory_total_bytes and, where NVML has the counter (Volta and
  /// newer), gpu_energy_joules_total (since the driver loaded). A figure a GPU cannot give is left
  /// out; an error only when no GPU gave any.
  Result<std::vector<Sample>> Read();

 private:
  struct Api;
  NvmlSampler(void* library, std::unique_ptr<Api> api, int devices);
  void* library_;
  std::unique_ptr<Api> api_;
  int devices_;
};

}  // namespace stagegate::telemetry
