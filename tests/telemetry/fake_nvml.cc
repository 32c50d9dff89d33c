// A stand-in for NVIDIA's libnvidia-ml, built as a shared library for the tests of NvmlSampler:
// two GPUs with fixed figures, the second of which cannot report its power or its energy. The
// first one's energy counter grows at exactly 250 W on the monotonic clock from its first
// initialisation, so that a test can compute by hand the joules of any span of time.

#include <time.h>

extern "C" {

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
using nvmlDevice_t = void*;

static int initialised = 0;
static int devices[2];
static long long started_ns = -1;

static long long MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

int nvmlInit_v2() {
  if (started_ns < 0) started_ns = MonotonicNs();
  ++initialised;
  return 0;
}
int nvmlShutdown() {
  --initialised;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = 2;
  return initialised > 0 ? 0 : 1;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (index >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = &devices[index];
  return 0;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  if (device == &devices[1]) return 3;  // NVML_ERROR_NOT_SUPPORTED
  *milliwatts = 287500;
  return 0;
}
// 250 W is 250 mJ a millisecond: (ns / 1e6) * 250 millijoules, from an offset of 1 MJ as a
// driver loaded long ago would have.
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* millijoules) {
  if (device == &devices[1]) return 3;
  *millijoules =
      1000000000ULL + static_cast<unsigned long long>((MonotonicNs() - started_ns) / 4000);
  return 0;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  utilization->gpu = device == &devices[0] ? 93 : 7;
  utilization->memory = 40;
  return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  memory->total = 85899345920ULL;  // 80 GiB
  memory->used = device == &devices[0] ? 64424509440ULL : 1073741824ULL;
  memory->free = memory->total - memory->used;
  return 0;
}
}
