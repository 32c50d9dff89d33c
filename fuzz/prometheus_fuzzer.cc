// The Prometheus text parser on any text. A parse either gives samples or every problem, each
// "line L, column C: ..."; a sample found by its own name and labels must be found.

#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "telemetry/prometheus.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stagegate::fuzz::Fail;
  namespace telemetry = stagegate::telemetry;

  const auto parsed = telemetry::ParsePrometheusText(stagegate::fuzz::AsText(data, size));
  if (!parsed.ok()) {
    if (!parsed.status().message().starts_with("line "))
      Fail("an error that names no line: " + parsed.status().message());
    return 0;
  }
  for (const telemetry::Sample& sample : parsed->samples)
    if (!telemetry::FindValue(*parsed, sample.name, sample.labels))
      Fail("sample " + sample.name + " is not found by its own name and labels");
  return 0;
}
