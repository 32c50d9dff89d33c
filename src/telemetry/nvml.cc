#include "telemetry/nvml.h"

#include <dlfcn.h>

#include <cstdlib>

namespace stagegate::telemetry {
namespace {

// The few NVML types used, as nvml.h declares them.
using NvmlReturn = int;  // nvmlReturn_t: 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlUtilization {
  unsigned int gpu;     // percent of time a kernel ran
  unsigned int memory;  // percent of time memory was read or written
};
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

}  // namespace

struct NvmlSampler::Api {
  NvmlReturn (*init)();
  NvmlReturn (*shutdown)();
  NvmlReturn (*count)(unsigned int*);
  NvmlReturn (*handle)(unsigned int, NvmlDevice*);
  NvmlReturn (*power_mw)(NvmlDevice, unsigned int*);
  NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*);
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*);
  // Optional: the energy counter (millijoules since the driver loaded; Volta and newer).
  NvmlReturn (*energy_mj)(NvmlDevice, unsigned long long*) = nullptr;
};

std::string NvmlLibrary() {
  const char* library = std::getenv("STAGEGATE_NVML_LIBRARY");
  return library && *library ? library : "libnvidia-ml.so.1";
}

Result<std::unique_ptr<NvmlSampler>> NvmlSampler::Open(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    // dlerror() starts with the library's name, already in the message.
    std::string why = dlerror();
    if (why.starts_with(library + ": ")) why.erase(0, library.size() + 2);
    return Status::NotFound(library + ": not present (" + why + ")");
  }
  auto api = std::make_unique<Api>();
  std::string missing;
  const auto find = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
    if (function == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  find(api->init, "nvmlInit_v2");
  find(api->shutdown, "nvmlShutdown");
  find(api->count, "nvmlDeviceGetCount_v2");
  find(api->handle, "nvmlDeviceGetHandleByIndex_v2");
  find(api->power_mw, "nvmlDeviceGetPowerUsage");
  find(api->utilization, "nvmlDeviceGetUtilizationRates");
  find(api->memory, "nvmlDeviceGetMemoryInfo");
  // Not every NVML has the energy counter: without it, energy is integrated from power.
  api->energy_mj = reinterpret_cast<decltype(api->energy_mj)>(
      dlsym(handle, "nvmlDeviceGetTotalEnergyConsumption"));
  if (!missing.empty()) {
    dlclose(handle);
    return Status::NotFound(library + " lacks " + missing);
  }
  if (NvmlReturn r = api->init(); r != 0) {
    dlclose(handle);
    return Status::IoError("nvmlInit failed with NVML error " + std::to_string(r));
  }
  unsigned int devices = 0;
  if (NvmlReturn r = api->count(&devices); r != 0) {
    api->shutdown();
    dlclose(handle);
    return Status::IoError("nvmlDeviceGetCount failed with NVML error " + std::to_string(r));
  }
  return std::unique_ptr<NvmlSampler>(
      new NvmlSampler(handle, std::move(api), static_cast<int>(devices)));
}

NvmlSampler::NvmlSampler(void* library, std::unique_ptr<Api> api, int devices)
    : library_(library), api_(std::move(api)), devices_(devices) {}

NvmlSampler::~NvmlSampler() {
  api_->shutdown();
  dlclose(library_);
}

Result<std::vector<Sample>> NvmlSampler::Read() {
  std::vector<Sample> samples;
  for (int i = 0; i < devices_; ++i) {
    NvmlDevice device = nullptr;
    if (api_->handle(static_cast<unsigned int>(i), &device) != 0) continue;
    const std::vector<std::pair<std::string, std::string>> labels = {{"gpu", std::to_string(i)}};
    const auto add = [&](const char* name, double value) {
      samples.push_back({.name = name, .labels = labels, .value = value});
    };
    if (unsigned int mw = 0; api_->power_mw(device, &mw) == 0) add("gpu_power_watts", mw / 1000.0);
    if (unsigned long long mj = 0; api_->energy_mj && api_->energy_mj(device, &mj) == 0)
      add("gpu_energy_joules_total", static_cast<double>(mj) / 1000.0);
    if (NvmlUtilization u{}; api_->utilization(device, &u) == 0)
      add("gpu_utilization_ratio", u.gpu / 100.0);
    if (NvmlMemory m{}; api_->memory(device, &m) == 0) {
      add("gpu_memory_used_bytes", static_cast<double>(m.used));
      add("gpu_memory_total_bytes", static_cast<double>(m.total));
    }
  }
  if (samples.empty() && devices_ > 0) return Status::IoError("NVML gave no figure for any GPU");
  return samples;
}

}  // namespace stagegate::telemetry
