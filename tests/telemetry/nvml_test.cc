#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "telemetry/nvml.h"
#include "telemetry/scraper.h"
#include "test_paths.h"

namespace stagegate::telemetry {
namespace {

TEST_CASE("NvmlSampler reads power, utilisation and memory of every GPU", "[telemetry]") {
  // tests/telemetry/fake_nvml.cc: two GPUs; the second cannot report its power.
  Result<std::unique_ptr<NvmlSampler>> nvml = NvmlSampler::Open(testing::FakeNvmlLibrary());
  INFO(nvml.status().message());
  REQUIRE(nvml.ok());
  CHECK((*nvml)->devices() == 2);
  Result<std::vector<Sample>> samples = (*nvml)->Read();
  REQUIRE(samples.ok());
  Exposition exposition{.samples = *samples};
  CHECK(FindValue(exposition, "gpu_power_watts", {{"gpu", "0"}}) == 287.5);
  CHECK_FALSE(FindValue(exposition, "gpu_power_watts", {{"gpu", "1"}}).has_value());
  CHECK(FindValue(exposition, "gpu_utilization_ratio", {{"gpu", "0"}}) == Approx(0.93));
  CHECK(FindValue(exposition, "gpu_utilization_ratio", {{"gpu", "1"}}) == Approx(0.07));
  CHECK(FindValue(exposition, "gpu_memory_used_bytes", {{"gpu", "0"}}) == 64424509440.0);
  CHECK(FindValue(exposition, "gpu_memory_total_bytes", {{"gpu", "1"}}) == 85899345920.0);
  // The first GPU's energy counter (250 W from the fake's start, offset by 1 MJ); the second
  // has none.
  const std::optional<double> joules =
      FindValue(exposition, "gpu_energy_joules_total", {{"gpu", "0"}});
  REQUIRE(joules.has_value());
  CHECK(*joules >= 1e6);
  CHECK_FALSE(FindValue(exposition, "gpu_energy_joules_total", {{"gpu", "1"}}).has_value());
  CHECK(samples->size() == 8);
}

TEST_CASE("NvmlSampler says what is missing, never crashes, on a machine without NVML",
          "[telemetry]") {
  Result<std::unique_ptr<NvmlSampler>> absent = NvmlSampler::Open("libnvidia-ml-absent.so.1");
  REQUIRE_FALSE(absent.ok());
  CHECK(absent.status().code() == Status::Code::kNotFound);
  CHECK(absent.status().message().find("libnvidia-ml-absent.so.1: not present") == 0);
  // A library that is not NVML lacks its functions.
  Result<std::unique_ptr<NvmlSampler>> other = NvmlSampler::Open("libm.so.6");
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message().find("libm.so.6 lacks nvmlInit_v2") == 0);
}

TEST_CASE("a Scraper samples NVML on its own thread like an endpoint", "[telemetry]") {
  Result<std::unique_ptr<NvmlSampler>> nvml = NvmlSampler::Open(testing::FakeNvmlLibrary());
  REQUIRE(nvml.ok());
  NvmlSampler& sampler = **nvml;
  Scraper scraper(
      "nvml",
      [&sampler](int64_t& arrived_ns) {
        arrived_ns = 42;
        return sampler.Read();
      },
      "gpu", 10, 40);
  scraper.Start();
  while (scraper.stats().scrapes < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  scraper.Stop();
  const std::vector<TimedSample> samples = scraper.TakeSamples();
  REQUIRE(samples.size() >= 14);
  CHECK(samples[0].t_ns == 2);  // arrival minus the origin
  CHECK(samples[0].source == "gpu");
  CHECK(scraper.stats().failures == 0);
}

}  // namespace
}  // namespace stagegate::telemetry
