#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "http/transport.h"
#include "load/exchange.h"
#include "load/request_record.h"
#include "load/response_budget.h"
#include "load/schedule.h"

namespace stagegate::load {

/// One turn of a multi-turn session, and how long its user thinks before sending it.
struct TurnRequest {
  RequestSpec spec;
  int64_t think_ns = 0;  // after the previous turn's end; 0 for a session's first turn
  /// The conversation `spec` sends (OpenAI chat messages, this turn's user message last), which
  /// the next turn extends with the answer and its own message.
  nlohmann::json messages = nlohmann::json::array();
};

/// The most turns a session may have: a turn's record has sequence session * kMaxTurns + turn.
inline constexpr int64_t kMaxTurns = 1000;

/// Turn `turn` (from 0) of session `session`, given the conversation so far: an empty array for
/// the first turn, else the previous turn's `messages` and the answer to it, as the assistant's
/// message. The request carries it and this turn's user message, so building a turn costs its
/// own message, not the session's. nullopt when the session has no more turns. Called from every
/// worker: thread-safe, deterministic in its arguments.
using SessionSource = std::function<std::optional<TurnRequest>(int64_t session, int64_t turn,
                                                               const nlohmann::json& conversation)>;

/// What a request that finds every slot taken does under a concurrency cap.
enum class WhenFull { kQueue, kDrop };

/// One load phase. Exactly one of `arrivals` (open loop: a schedule from BuildOpenLoop or
/// BuildTraceSchedule, already sharded) and `concurrency` (closed loop) is used.
struct LoadOptions {
  std::vector<Arrival> arrivals;
  /// Closed loop: this many requests in flight at all times (before sharding: the engine takes
  /// this shard's part). Ends at `requests` sent or `duration_s`, whichever first.
  std::optional<int64_t> concurrency;
  std::optional<int64_t> requests;
  std::optional<double> duration_s;
  /// Open loop: at most this many in flight; an arrival beyond it waits or is dropped.
  std::optional<int64_t> max_concurrency;
  WhenFull when_full = WhenFull::kQueue;
  /// Schedule positions below this are warmup: sent and recorded, left out of statistics.
  int64_t warmup_requests = 0;
  /// How long requests still in flight at the end may finish before they are cancelled.
  double grace_s = 5;
  /// Worker threads; 0 means one per hardware thread.
  int workers = 0;
  /// Workers poll without ever sleeping (a core each), so that they read what arrived without a
  /// wake-up's delay (which reaches the timestamps only of reads stamped when read). By default
  /// they poll for 100 µs after a socket was ready, then sleep.
  bool busy_poll = false;
  /// Whose clock stamps the arrival of response bytes: the kernel's (by default) or the
  /// client's when it read them.
  ReceiveTimes receive_times = ReceiveTimes::kKernel;
  Shard shard;
  Timeouts timeouts;
  /// What the responses in flight may keep between them (ResponseBudget); a response past it is
  /// cut (kMemoryLimit). 0: no limit beyond each response's own cap.
  int64_t response_memory_bytes = ResponseBudget::kDefaultLimitBytes;
  /// Multi-turn sessions instead of single requests. Closed loop: each of the `concurrency`
  /// users runs sessions one after another, and `requests` counts sessions. Open loop: each
  /// arrival starts a session (its sequence is the session's id), and the phase lasts until
  /// every session started has ended. Either way a session's next turn is sent its think time
  /// after the previous answer ended (that is its intended time, so a late send counts in
  /// corrected latency) and carries the answers so far; a failed turn ends its session;
  /// `warmup_requests` counts sessions; each turn's record has `session`, `turn` and sequence
  /// session * kMaxTurns + turn. A closed loop sends no turn at or after the duration's end; an
  /// open loop's cap holds a due turn until a request ends, whatever `when_full` says. The
  /// RequestSource is not used.
  SessionSource sessions;
};

/// Builds the request for a schedule position. Called concurrently from every worker: it must be
/// thread-safe, and deterministic in `sequence`. The spec it returns is owned by the worker.
using RequestSource = std::function<RequestSpec(int64_t sequence)>;

/// Counters a worker updates as it goes (relaxed atomics on the worker's own cache lines) and the
/// progress display reads. Approximate by design: the records are the truth.
struct alignas(64) LiveCounters {
  static constexpr int kTtftBuckets = 96;  // 100 µs · 1.15^i
  std::atomic<int64_t> sent{0};
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int64_t> dropped{0};
  std::array<std::atomic<int64_t>, kTtftBuckets> ttft{};
  static int TtftBucket(int64_t ttft_ns);
  static double TtftBucketUpperMs(int bucket);
};

/// A snapshot for the progress line.
struct LiveSnapshot {
  int64_t sent = 0, done = 0, failed = 0, dropped = 0, offered = 0;
  double elapsed_s = 0;
  int64_t phase_start_ns = 0, now_ns = 0;  // run time: the schedule's time zero, and now
  std::optional<double> ttft_p50_ms, ttft_p95_ms;
};

/// What one phase produced.
struct LoadResult {
  std::vector<RequestRecord> records;  // sorted by sequence; every offered request, sent or not
  int64_t started_ns = 0;              // from the origin
  int64_t ended_ns = 0;
  int64_t start_lag_ns = 0;  // how much later than RunControl::start_ns the schedule started
  int64_t dropped = 0;       // refused under a concurrency cap (also in records, as cancelled)
  bool interrupted = false;
  int workers = 0;
  double client_cpu_s = 0;  // process CPU time over the phase
  double idle_poll_s = 0;   // of which the workers spent polling and finding nothing
  /// Each worker's CPU time doing work (idle polling left out) / phase wall time.
  std::vector<double> worker_busy;
  /// How the workers' reads were stamped, and their read delays.
  ReceiveStats receive;
  /// The most the responses in flight kept at once (ResponseBudget::peak), in bytes.
  int64_t response_memory_peak = 0;
};

struct RunControl {
  const Clock* clock = &SteadyClock::Get();
  int64_t origin_ns = 0;  // the run's time zero on `clock`; record times are relative to it
  /// Set (from any thread, or a signal handler) to stop sending: requests in flight get the
  /// grace period, then are cancelled.
  const std::atomic<bool>* stop = nullptr;
  /// Set (from on_records or on_tick) to end the schedule early, as if it had run out: nothing
  /// more is sent, arrivals queued under a cap are recorded as cancelled, and requests in flight
  /// get the grace period. Unlike `stop`, the phase is not interrupted.
  const std::atomic<bool>* end_schedule = nullptr;
  /// When the schedule starts, from the origin (a sharded run's planned phase start). A start
  /// already past (or too close to set the workers up in time) is not caught up on: the whole
  /// schedule moves later by the difference, which LoadResult::start_lag_ns keeps. Unset: a few
  /// ms from now.
  std::optional<int64_t> start_ns;
  /// Called on the calling thread about every `tick_ms` while the phase runs, after on_records.
  std::function<void(const LiveSnapshot&)> on_tick;
  /// When set, called on the calling thread about every `tick_ms` with copies of the records
  /// finished since the last call, so they can be kept (in the store) before the phase ends.
  /// Records finished after the last call are only in LoadResult, which has every record.
  std::function<void(std::vector<RequestRecord>)> on_records;
  int tick_ms = 250;
  /// Makes each worker's transport: empty for curl over sockets (MultiTransport); a test's
  /// ScriptedTransport::Factory, on the FakeClock that `clock` also is, answers without one.
  http::TransportFactory transport;
  /// The workers' transports move `clock` (a FakeClock under ScriptedTransport): ticks are then
  /// every `tick_ms` of that clock from the schedule's start, and each worker waits at every
  /// tick until on_records and on_tick have run, so they see the phase at exact times. False:
  /// ticks are every `tick_ms` of real time, and nothing waits for them.
  bool ticks_on_clock = false;
};

/// Runs one phase: starts the workers (each with its own curl multi handle, connections and
/// records; arrivals are dealt to workers round-robin, so nothing is shared while sending), waits
/// for them, and merges their records. A failing request is a record, never an error; the Status
/// is for setup failures (no curl, no timerfd).
Result<LoadResult> RunLoad(const LoadOptions& options, const RequestSource& source,
                           const RunControl& control);

/// Raises the open-files limit to its hard maximum, so that thousands of streams fit. Returns the
/// limit now in force.
int64_t RaiseOpenFileLimit();

}  // namespace stagegate::load
