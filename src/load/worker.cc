#include "load/worker.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace stagegate::load {

struct Worker::Slot {
  Slot(std::vector<Exchange*>* finished, ReceiveStats* receive_stats, ReceiveTimes receive_times,
       ResponseBudget* budget)
      : exchange(finished, receive_stats, receive_times, budget) {}
  RequestSpec spec;
  Exchange exchange;
};

namespace {

// How often requests waiting for their first token are checked against the timeout, and the
// longest sleep (so a stop is seen quickly).
constexpr int64_t kFirstTokenScanNs = 5'000'000;
constexpr int kMaxWaitMs = 20;
// Sends per pass of the loop: between passes the transport reads what arrived, so a burst of
// sends (a thousand closed-loop slots freed at once, each opening a connection) delays noticing a
// token by one pass's sends, not by the whole burst. Fewer would slow the opening of many
// streams: each pass also reads every socket that is ready.
constexpr int kMaxSendsPerPass = 8;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

Worker::Worker(WorkerPlan plan, const LoadOptions& options, const RequestSource& source,
               const RunControl& control, LiveCounters& counters)
    : plan_(std::move(plan)),
      options_(options),
      source_(source),
      control_(control),
      counters_(counters),
      trace_rng_(std::random_device{}() ^ (static_cast<uint64_t>(plan_.index) << 32)) {
  if (plan_.closed_loop) free_since_.assign(plan_.slots, plan_.phase_start_ns);
}

Worker::~Worker() {
  // An exchange must leave the multi handle before its easy handle is cleaned up.
  if (transport_)
    for (Slot* slot : in_flight_)
      transport_->Remove(&slot->exchange);
}

void TickGate::Reach() {
  std::unique_lock lock(mutex_);
  const int64_t generation = generation_;
  ++waiting_;
  changed_.notify_all();
  changed_.wait(lock, [&] { return generation_ != generation; });
}

void TickGate::Leave() {
  std::lock_guard lock(mutex_);
  --active_;
  changed_.notify_all();
}

bool TickGate::AwaitTick() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return waiting_ == active_; });
  return active_ > 0;
}

void TickGate::Release() {
  std::lock_guard lock(mutex_);
  waiting_ = 0;
  ++generation_;
  changed_.notify_all();
}

Status Worker::Run() {
  const double cpu_start = ThreadCpuSeconds();
  if (control_.transport) {
    Result<std::unique_ptr<http::Transport>> transport = control_.transport();
    if (!transport.ok()) return transport.status();
    transport_ = std::move(*transport);
  } else {
    Result<std::unique_ptr<http::MultiTransport>> transport = http::MultiTransport::Create();
    if (!transport.ok()) return transport.status();
    transport_ = std::move(*transport);
  }
  if (options_.busy_poll) transport_->set_busy_poll();
  // Every worker starts the schedule at the same moment, after all of them are set up.
  while (Now() < plan_.phase_start_ns)
    transport_->WaitAndDrive(plan_.phase_start_ns + control_.origin_ns, kMaxWaitMs);

  std::optional<int64_t> grace_end;
  int64_t next_scan = 0;
  int64_t next_tick = plan_.phase_start_ns + plan_.tick_ns;
  while (true) {
    int64_t now = Now();
    if (plan_.ticks && now >= next_tick) {
      // The clock stands at the tick (the wait below goes no further) until it has run.
      plan_.ticks->Reach();
      while (next_tick <= now)
        next_tick += plan_.tick_ns;
    }
    if (!stopping_ && control_.stop != nullptr && control_.stop->load(std::memory_order_relaxed)) {
      stopping_ = true;
      for (const Arrival& waiting : queue_)
        Drop(waiting, "cancelled: queued when the run stopped", false);
      queue_.clear();
    }
    if (!stopping_ && !ending_ && control_.end_schedule != nullptr &&
        control_.end_schedule->load(std::memory_order_relaxed)) {
      ending_ = true;
      for (const Arrival& waiting : queue_)
        Drop(waiting, "cancelled: queued when the level ended early", false);
      queue_.clear();
    }
    if (!stopping_ && !ending_) Dispatch(now);
    if (!MoreToSend()) {
      if (!grace_end) grace_end = now + static_cast<int64_t>(options_.grace_s * 1e9);
      if (in_flight_.empty()) break;
      if (now >= *grace_end) {
        char why[96];
        std::snprintf(why, sizeof why, "cancelled: still in flight %g s after the %s",
                      options_.grace_s, stopping_ ? "stop" : "phase ended");
        CancelAll(why);
        break;
      }
    }
    if (now >= next_scan) {
      TimeOutFirstTokens(now);
      next_scan = now + kFirstTokenScanNs;
    }
    Reap();

    int64_t deadline = send_budget_spent_ ? now : next_scan;
    if (!stopping_ && !ending_ && !plan_.closed_loop && next_arrival_ < plan_.arrivals.size())
      deadline = std::min(deadline, plan_.arrivals[next_arrival_].intended_ns);
    // A turn due while a capped open loop has no room waits for a request to end, which wakes
    // the transport anyway.
    if (!stopping_ && !ending_ && !due_turns_.empty() && HasRoom())
      deadline = std::min(deadline, due_turns_.begin()->first);
    if (grace_end) deadline = std::min(deadline, *grace_end);
    if (plan_.ticks) deadline = std::min(deadline, next_tick);
    transport_->WaitAndDrive(deadline + control_.origin_ns, kMaxWaitMs);
    Reap();
  }
  cpu_s_ = ThreadCpuSeconds() - cpu_start;
  idle_poll_s_ = static_cast<double>(transport_->idle_spin_ns()) / 1e9;
  return Status::Ok();
}

bool Worker::HasRoom() const {
  return plan_.closed_loop || plan_.slots == 0 ||
         static_cast<int64_t>(in_flight_.size()) < plan_.slots;
}

bool Worker::MoreToSend() const {
  if (stopping_ || ending_) return false;
  if (!plan_.closed_loop)
    return next_arrival_ < plan_.arrivals.size() || !queue_.empty() || !sessions_.empty();
  if (plan_.slots == 0) return false;  // a shard with no share of the concurrency
  if (Now() >= plan_.end_ns) return false;
  if (options_.sessions && !sessions_.empty()) return true;
  const int64_t sequence =
      options_.shard.index +
      options_.shard.count * (plan_.index + int64_t{plan_.count} * next_round_);
  return !options_.requests || sequence < *options_.requests;
}

std::optional<int64_t> Worker::NextClosedLoopSequence() {
  // Sequences are dealt to shards, then workers, round by round, so the union over shards and
  // workers is 0, 1, 2, ... with no gaps or repeats.
  const int64_t sequence =
      options_.shard.index +
      options_.shard.count * (plan_.index + int64_t{plan_.count} * next_round_);
  if (options_.requests && sequence >= *options_.requests) return std::nullopt;
  ++next_round_;
  return sequence;
}

void Worker::Dispatch(int64_t now) {
  int budget = kMaxSendsPerPass;
  send_budget_spent_ = false;
  const auto spend = [&] {
    if (budget == 0) {
      send_budget_spent_ = true;
      return false;
    }
    --budget;
    return true;
  };
  if (plan_.closed_loop && options_.sessions) return DispatchSessions(now, spend);
  if (plan_.closed_loop) {
    while (!free_since_.empty() && now < plan_.end_ns && spend()) {
      std::optional<int64_t> sequence = NextClosedLoopSequence();
      if (!sequence) break;
      // The intended send of a closed-loop request is the moment its slot became free.
      Send(Arrival{.sequence = *sequence, .intended_ns = free_since_.front()}, std::nullopt);
      free_since_.pop_front();
    }
    return;
  }
  if (options_.sessions) SendDueTurns(now, spend);
  while (!queue_.empty() && HasRoom() && spend()) {
    const Arrival waiting = queue_.front();
    queue_.pop_front();
    Start(waiting, now - waiting.intended_ns);
  }
  while (next_arrival_ < plan_.arrivals.size() &&
         plan_.arrivals[next_arrival_].intended_ns <= now && spend()) {
    const Arrival& arrival = plan_.arrivals[next_arrival_++];
    if (HasRoom()) {
      Start(arrival, std::nullopt);
    } else if (options_.when_full == WhenFull::kQueue) {
      queue_.push_back(arrival);
    } else {
      Drop(arrival,
           "dropped: " + std::to_string(plan_.slots) +
               " requests in flight on this worker (max_concurrency)",
           true);
    }
  }
}

void Worker::Start(const Arrival& arrival, std::optional<int64_t> queue_ns) {
  if (!options_.sessions) return Send(arrival, queue_ns);
  // Open loop: an arrival starts a session, and its sequence is the session's id.
  std::optional<TurnRequest> first =
      options_.sessions(arrival.sequence, 0, nlohmann::json::array());
  if (!first) return;  // a session of no turns
  sessions_[arrival.sequence] = Session{.conversation = std::move(first->messages)};
  Send(Arrival{.sequence = arrival.sequence * kMaxTurns, .intended_ns = arrival.intended_ns},
       queue_ns, std::move(first->spec), arrival.sequence, 0);
}

void Worker::SendDueTurns(int64_t now, const std::function<bool()>& spend) {
  while (!due_turns_.empty() && due_turns_.begin()->first <= now && now < plan_.end_ns &&
         HasRoom() && spend()) {
    const auto [due, id] = *due_turns_.begin();
    due_turns_.erase(due_turns_.begin());
    Session& session = sessions_.at(id);
    RequestSpec spec = std::move(session.next->spec);
    session.next.reset();
    Send(Arrival{.sequence = id * kMaxTurns + session.turn, .intended_ns = due}, std::nullopt,
         std::move(spec), id, session.turn);
  }
}

void Worker::DispatchSessions(int64_t now, const std::function<bool()>& spend) {
  SendDueTurns(now, spend);
  while (!free_since_.empty() && now < plan_.end_ns && spend()) {
    const std::optional<int64_t> id = NextClosedLoopSequence();
    if (!id) break;
    std::optional<TurnRequest> first = options_.sessions(*id, 0, nlohmann::json::array());
    if (!first) continue;  // a session of no turns: the slot starts the next one
    sessions_[*id] = Session{.conversation = std::move(first->messages)};
    // The intended send of a session's first turn is the moment its user's slot became free.
    Send(Arrival{.sequence = *id * kMaxTurns, .intended_ns = free_since_.front()}, std::nullopt,
         std::move(first->spec), *id, 0);
    free_since_.pop_front();
  }
}

void Worker::AfterTurn(const RequestRecord& record) {
  const int64_t end = record.end_ns.value_or(Now());
  // A closed loop's user slot is free again when its session ends; an open loop has none.
  const auto session_ended = [&] {
    if (plan_.closed_loop) free_since_.push_back(end);
  };
  auto found = sessions_.find(*record.session);
  if (found == sessions_.end()) return session_ended();
  Session& session = found->second;
  std::optional<TurnRequest> next;
  // A failed turn ends its session: the conversation cannot go on without its answer.
  if (record.outcome == Outcome::kOk && !stopping_ && !ending_ && session.turn + 1 < kMaxTurns) {
    session.conversation.push_back({{"role", "assistant"}, {"content", record.answer_text}});
    next = options_.sessions(*record.session, session.turn + 1, session.conversation);
  }
  if (!next) {
    sessions_.erase(found);
    return session_ended();
  }
  ++session.turn;
  due_turns_.emplace(end + std::max<int64_t>(0, next->think_ns), *record.session);
  session.conversation = std::move(next->messages);
  session.next = std::move(next);
}

void Worker::Send(const Arrival& arrival, std::optional<int64_t> queue_ns) {
  Send(arrival, queue_ns, source_(arrival.sequence), std::nullopt, std::nullopt);
}

void Worker::Send(const Arrival& arrival, std::optional<int64_t> queue_ns, RequestSpec spec,
                  std::optional<int64_t> session, std::optional<int64_t> turn) {
  Slot* slot = nullptr;
  if (pool_.empty()) {
    // Kernel receive stamps convert to the run's time only through the steady clock.
    const bool steady = control_.clock == &SteadyClock::Get();
    slots_.push_back(std::make_unique<Slot>(&finished_, steady ? &receive_stats_ : nullptr,
                                            options_.receive_times, plan_.response_budget));
    slot = slots_.back().get();
  } else {
    slot = pool_.back();
    pool_.pop_back();
  }
  slot->spec = std::move(spec);
  RequestRecord record;
  record.sequence = arrival.sequence;
  record.intended_ns = arrival.intended_ns;
  record.worker = plan_.index;
  record.warmup = session.value_or(arrival.sequence) < options_.warmup_requests;
  record.session = session;
  record.turn = turn;
  record.queue_ns = queue_ns;
  slot->exchange.Begin(slot->spec, std::move(record), http::NewTraceContext(trace_rng_),
                       options_.timeouts, *control_.clock, control_.origin_ns);
  counters_.sent.fetch_add(1, std::memory_order_relaxed);
  slot->exchange.in_flight_slot = in_flight_.size();
  in_flight_.push_back(slot);
  if (!transport_->Add(&slot->exchange))
    slot->exchange.Abort(Outcome::kTransportError, "curl refused to start the transfer");
}

void Worker::Drop(const Arrival& arrival, const std::string& why, bool refused_by_cap) {
  RequestRecord record;
  record.sequence = arrival.sequence;
  record.intended_ns = arrival.intended_ns;
  record.worker = plan_.index;
  record.warmup = arrival.sequence < options_.warmup_requests;
  if (options_.sessions) {  // the session the arrival would have started: its first turn
    record.sequence = arrival.sequence * kMaxTurns;
    record.session = arrival.sequence;
    record.turn = 0;
  }
  record.outcome = Outcome::kCancelled;
  record.error_message = why;
  Keep(std::move(record));
  if (refused_by_cap) counters_.dropped.fetch_add(1, std::memory_order_relaxed);
}

void Worker::Keep(RequestRecord record) {
  if (!control_.on_records) {
    records_.push_back(std::move(record));
    return;
  }
  std::lock_guard lock(records_mutex_);
  records_.push_back(std::move(record));
}

void Worker::CopyNewRecords(std::vector<RequestRecord>& out) {
  std::lock_guard lock(records_mutex_);
  out.insert(out.end(), records_.begin() + static_cast<std::ptrdiff_t>(copied_), records_.end());
  copied_ = records_.size();
}

void Worker::Reap() {
  for (Exchange* exchange : finished_) {
    Slot* slot = in_flight_[exchange->in_flight_slot];
    in_flight_[exchange->in_flight_slot] = in_flight_.back();
    in_flight_[exchange->in_flight_slot]->exchange.in_flight_slot = exchange->in_flight_slot;
    in_flight_.pop_back();
    RequestRecord record = exchange->TakeRecord();
    counters_.done.fetch_add(1, std::memory_order_relaxed);
    if (record.outcome != Outcome::kOk) counters_.failed.fetch_add(1, std::memory_order_relaxed);
    if (record.first_token_ns && record.sent_ns)
      counters_.ttft[LiveCounters::TtftBucket(*record.first_token_ns - *record.sent_ns)].fetch_add(
          1, std::memory_order_relaxed);
    if (record.session) {
      AfterTurn(record);
    } else if (plan_.closed_loop) {
      free_since_.push_back(record.end_ns.value_or(Now()));
    }
    Keep(std::move(record));
    pool_.push_back(slot);
  }
  finished_.clear();
}

void Worker::CancelAll(const std::string& why) {
  Reap();  // an exchange that already ended (e.g. curl refused to start it) must not end twice
  for (Slot* slot : in_flight_) {
    transport_->Remove(&slot->exchange);
    slot->exchange.Abort(Outcome::kCancelled, why);
  }
  Reap();
}

void Worker::TimeOutFirstTokens(int64_t now) {
  if (options_.timeouts.first_token_ms <= 0) return;
  for (Slot* slot : in_flight_) {
    if (!slot->exchange.FirstTokenOverdue(now)) continue;
    transport_->Remove(&slot->exchange);
    slot->exchange.Abort(
        Outcome::kTimeout,
        "first token timeout after " + std::to_string(options_.timeouts.first_token_ms) + " ms");
  }
}

}  // namespace stagegate::load
