#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "console/console.h"
#include "http/transport.h"
#include "load/engine.h"
#include "store/store.h"

namespace stagegate::scenario {

/// Runs the load steps of one run into the store, for `run` and `profile` alike: each step is a
/// row of the run's phases, and its records go to the store as they finish (every tick), so a
/// killed process loses no more than the requests in flight. Not thread-safe; the references
/// must outlive it.
class StepRunner {
 public:
  struct Context {
    std::string run_id;
    store::Store& store;
    console::Console& console;
    const Clock& clock;
    int64_t origin_ns = 0;          // the run's time zero on `clock`
    const std::atomic<bool>& stop;  // SIGINT: ends the step after its grace period
    int64_t next_ordinal = 0;       // the phase ordinal the next step gets
    /// Each worker's transport: empty for curl over sockets; a test's ScriptedTransport on the
    /// FakeClock that `clock` is (load::RunControl::transport).
    http::TransportFactory transport;
    bool ticks_on_clock = false;  // load::RunControl::ticks_on_clock
  };

  /// Looks at the records finished so far (in the order they ended; run times: every record
  /// that ended before `now_ns`, but for one ending in the moment between), with
  /// `phase_start_ns` the schedule's time zero; true ends the schedule early
  /// (RunControl::end_schedule). Called on the runner's thread about every tick.
  using EndEarly = std::function<bool(std::span<const load::RequestRecord> finished,
                                      int64_t phase_start_ns, int64_t now_ns)>;

  struct Step {
    std::string stage;            // "profile" for a profile's levels
    std::string phase;            // the stored phase name
    bool at_rest = false;         // the answers sampled one at a time for review
    std::optional<double> level;  // its rate or concurrency
    std::string label;            // the progress line's name for it
    nlohmann::json config = nlohmann::json::object();
    const load::LoadOptions& options;
    const load::RequestSource& source;
    EndEarly end_early;  // may be empty
    /// When its schedule starts, from the origin (a sharded run's planned offset): the runner
    /// waits for it, and a start it missed moves the schedule later (LoadResult::start_lag_ns).
    std::optional<int64_t> start_ns;
  };

  struct Ran {
    int64_t phase_id = 0;
    load::LoadResult load;  // records carry run_id and phase_id
    bool ended_early = false;
  };

  explicit StepRunner(Context context) : context_(std::move(context)) {}

  /// Adds the phase, runs the load, stores every record and finishes the phase (complete, or
  /// interrupted after a stop). Fails only when the store or the engine's setup fails.
  Result<Ran> Run(const Step& step);

  int64_t next_ordinal() const { return context_.next_ordinal; }
  const Context& context() const { return context_; }

 private:
  Context context_;
};

}  // namespace stagegate::scenario
