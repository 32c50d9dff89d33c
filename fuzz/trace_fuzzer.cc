// The trace reader on any file, then the replay schedule of what it read, sharded two ways.

#include <algorithm>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "load/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stagegate::fuzz::Fail;
  namespace load = stagegate::load;

  const std::string path =
      stagegate::fuzz::WriteScratchFile("trace.jsonl", stagegate::fuzz::AsText(data, size));
  const auto trace = load::LoadTrace(path);
  if (!trace.ok()) {
    if (trace.status().message().empty()) Fail("an error without a message");
    return 0;
  }
  if (trace->empty()) Fail("a trace with no entry loaded");
  if (!std::is_sorted(trace->begin(), trace->end(),
                      [](const auto& a, const auto& b) { return a.timestamp_ms < b.timestamp_ms; }))
    Fail("entries are not sorted by timestamp");

  for (const load::TraceScheduleOptions& options :
       {load::TraceScheduleOptions{}, load::TraceScheduleOptions{
                                          .speedup = 2.5,
               .requests = 3,
               .duration_s = 0.5,
               .shard = {.index = 1, .count = 2},
                                      }}) {
    const auto schedule = load::BuildTraceSchedule(*trace, options);
    // The one refusal a sorted trace and valid options may meet: times a schedule cannot hold.
    if (!schedule.ok() && schedule.status().message().find("raise 'speedup'") == std::string::npos)
      Fail("no schedule for a loaded trace: " + schedule.status().message());
  }
  return 0;
}
