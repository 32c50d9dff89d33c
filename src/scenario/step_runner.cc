#include "scenario/step_runner.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "load/progress.h"

namespace stagegate::scenario {

Result<StepRunner::Ran> StepRunner::Run(const Step& step) {
  Ran ran;
  Result<int64_t> phase_id = context_.store.AddPhase(
      {.run_id = context_.run_id,
       .ordinal = context_.next_ordinal++,
       .stage = step.stage,
       .phase = step.phase,
       .at_rest = step.at_rest,
       .level = step.level,
       .config_json = step.config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
       .status = store::PhaseStatus::kRunning});
  if (!phase_id.ok()) return phase_id.status();
  ran.phase_id = *phase_id;

  std::atomic<bool> end_schedule{false};
  load::RunControl control{.clock = &context_.clock,
                           .origin_ns = context_.origin_ns,
                           .stop = &context_.stop,
                           .end_schedule = &end_schedule,
                           .transport = context_.transport,
                           .ticks_on_clock = context_.ticks_on_clock};
  const auto progress = load::ProgressLine(context_.console, context_.clock, step.label);
  // Every record finished so far, in the order they ended, for `end_early`.
  std::vector<load::RequestRecord> finished;
  control.on_tick = [&](const load::LiveSnapshot& snapshot) {
    progress(snapshot);
    if (step.end_early && !end_schedule.load() &&
        step.end_early(finished, snapshot.phase_start_ns, snapshot.now_ns))
      end_schedule.store(true);
  };
  // Records go to the store as they finish, so a killed process loses little more than the
  // requests in flight.
  std::set<int64_t> stored;
  Status storing = Status::Ok();
  control.on_records = [&](std::vector<load::RequestRecord> records) {
    for (load::RequestRecord& record : records) {
      record.run_id = context_.run_id;
      record.phase_id = ran.phase_id;
      stored.insert(record.sequence);
    }
    if (storing.ok()) storing = context_.store.AddRequestsInBatches(records);
    if (step.end_early) finished.insert(finished.end(), records.begin(), records.end());
  };
  if (step.start_ns) {
    // Wait in short sleeps, so a stop is heard; the engine's own lead covers the last moments.
    // Wake well ahead: the engine sets up before the planned start and waits for it, and a shard
    // that starts its step late sends every arrival of it late. A clock the transport moves (a
    // test's) moves only while the engine waits on it.
    constexpr int64_t kWakeBeforeNs = 500'000'000;
    while (!context_.stop.load() && !context_.ticks_on_clock) {
      const int64_t left =
          context_.origin_ns + *step.start_ns - kWakeBeforeNs - context_.clock.NowNs();
      if (left <= 0) break;
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(left, 100'000'000)));
    }
    control.start_ns = step.start_ns;
  }
  Result<load::LoadResult> load = load::RunLoad(step.options, step.source, control);
  context_.console.EndProgress();
  if (!load.ok()) return load.status();
  SG_RETURN_IF_ERROR(storing);
  std::vector<load::RequestRecord> rest;
  for (load::RequestRecord& record : load->records) {
    record.run_id = context_.run_id;
    record.phase_id = ran.phase_id;
    if (!stored.contains(record.sequence)) rest.push_back(record);
  }
  SG_RETURN_IF_ERROR(context_.store.AddRequestsInBatches(rest));
  SG_RETURN_IF_ERROR(context_.store.FinishPhase(
      ran.phase_id, load->started_ns, load->ended_ns,
      load->interrupted ? store::PhaseStatus::kInterrupted : store::PhaseStatus::kComplete));
  ran.ended_early = end_schedule.load();
  ran.load = std::move(*load);
  return ran;
}

}  // namespace stagegate::scenario
