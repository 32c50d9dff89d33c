// A stand-in for NVIDIA's libnvidia-ml, built as a shared library for the tests of NvmlSampler:
// two GPUs with fixed figures, the second of which cannot report its power.

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

int nvmlInit_v2() {
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
