#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

#include "http/transport.h"
#include "load/engine.h"

namespace stagegate::load {

/// Where a phase's workers meet the thread that runs its ticks, when the ticks are on a clock the
/// workers move (RunControl::ticks_on_clock): a worker that reaches a tick waits there until the
/// tick has run, so the clock stands still while it does.
class TickGate {
 public:
  explicit TickGate(int workers) : active_(workers) {}
  /// A worker at a tick: returns once the tick has run.
  void Reach();
  /// A worker that has finished: no tick waits for it.
  void Leave();
  /// The tick thread: waits until every worker still running is at the tick; false once none is.
  bool AwaitTick();
  /// The tick thread, once the tick has run: the workers go on.
  void Release();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int active_;
  int waiting_ = 0;
  int64_t generation_ = 0;
};

/// One worker's share of a phase.
struct WorkerPlan {
  int index = 0;
  int count = 1;  // workers in the phase
  /// Open loop: this worker's arrivals, intended times already in run time, sorted.
  std::vector<Arrival> arrivals;
  /// Closed loop: requests kept in flight. Open loop: the cap (0 = none).
  int64_t slots = 0;
  bool closed_loop = false;
  int64_t phase_start_ns = 0;                 // run time
  int64_t end_ns = INT64_MAX;                 // closed loop: no send at or after this
  ResponseBudget* response_budget = nullptr;  // shared by the phase's workers; outlives them
  TickGate* ticks = nullptr;  // RunControl::ticks_on_clock: the phase's; outlives the workers
  int64_t tick_ns = 0;        // with `ticks`: the time between ticks
};

/// Sends one worker's share of a phase on the calling thread, with its own transport, exchanges
/// and records. Reads LoadOptions, the request source and RunControl (all shared read-only);
/// writes only its own members and its LiveCounters.
class Worker {
 public:
  Worker(WorkerPlan plan, const LoadOptions& options, const RequestSource& source,
         const RunControl& control, LiveCounters& counters);
  ~Worker();

  /// Runs to the end of the plan (or the stop, plus the grace period).
  Status Run();

  /// Every record, once Run has returned.
  std::vector<RequestRecord>& records() { return records_; }
  /// Appends copies of the records finished since the last call to `out`. Thread-safe: called
  /// by the engine's thread while this worker runs (only when RunControl::on_records is set).
  void CopyNewRecords(std::vector<RequestRecord>& out);
  /// CPU time this thread used in Run, in seconds.
  double cpu_s() const { return cpu_s_; }
  /// Of cpu_s, the time spent polling sockets and finding none ready.
  double idle_poll_s() const { return idle_poll_s_; }
  /// How the worker's reads were stamped (after Run).
  const ReceiveStats& receive_stats() const { return receive_stats_; }

 private:
  struct Slot;  // an exchange and the spec it sends

  int64_t Now() const { return control_.clock->NowNs() - control_.origin_ns; }
  bool MoreToSend() const;
  /// Whether a request may start now: always in a closed loop; under an open loop's cap, while
  /// fewer than it are in flight.
  bool HasRoom() const;
  void Dispatch(int64_t now);
  void Send(const Arrival& arrival, std::optional<int64_t> queue_ns);
  void Send(const Arrival& arrival, std::optional<int64_t> queue_ns, RequestSpec spec,
            std::optional<int64_t> session, std::optional<int64_t> turn);
  /// Open loop: sends the request of an arrival, or with sessions the first turn of the session
  /// it starts.
  void Start(const Arrival& arrival, std::optional<int64_t> queue_ns);
  /// Sessions: the turns due by `now`, while there is room.
  void SendDueTurns(int64_t now, const std::function<bool()>& spend);
  /// Sessions in a closed loop: the turns due by `now`, then new sessions on free slots.
  void DispatchSessions(int64_t now, const std::function<bool()>& spend);
  /// Sessions: what follows a finished turn (its next turn, or a free slot).
  void AfterTurn(const RequestRecord& record);
  /// Records an arrival that is never sent; `refused_by_cap` counts it as dropped.
  void Drop(const Arrival& arrival, const std::string& why, bool refused_by_cap);
  void Reap();
  void CancelAll(const std::string& why);
  void TimeOutFirstTokens(int64_t now);
  std::optional<int64_t> NextClosedLoopSequence();

  WorkerPlan plan_;
  const LoadOptions& options_;
  const RequestSource& source_;
  const RunControl& control_;
  LiveCounters& counters_;
  std::unique_ptr<http::Transport> transport_;
  std::mt19937_64 trace_rng_;
  std::vector<std::unique_ptr<Slot>> slots_;  // every exchange made; reused across requests
  std::vector<Slot*> pool_;                   // the idle ones
  std::vector<Slot*> in_flight_;
  std::vector<Exchange*> finished_;
  void Keep(RequestRecord record);
  std::vector<RequestRecord> records_;
  std::mutex records_mutex_;        // records_, when its records are copied out while it runs
  size_t copied_ = 0;               // records_ before this were handed to CopyNewRecords
  std::deque<Arrival> queue_;       // open loop, capped, kQueue: arrivals waiting for a slot
  std::deque<int64_t> free_since_;  // closed loop: when each free slot became free
  struct Session {
    int64_t turn = 0;                 // the turn in flight or due
    nlohmann::json conversation;      // what the turn in flight sent
    std::optional<TurnRequest> next;  // the turn due, built when its predecessor ended
  };
  std::map<int64_t, Session> sessions_;        // in progress on this worker
  std::multimap<int64_t, int64_t> due_turns_;  // when each session's next turn is due
  size_t next_arrival_ = 0;
  int64_t next_round_ = 0;  // closed loop: the next round of sequences for this worker
  bool stopping_ = false;
  bool ending_ = false;             // the schedule was ended early (RunControl::end_schedule)
  bool send_budget_spent_ = false;  // Dispatch stopped with sends still due
  double cpu_s_ = 0;
  double idle_poll_s_ = 0;
  ReceiveStats receive_stats_;
};

}  // namespace stagegate::load
