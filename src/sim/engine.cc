#include "sim/engine.h"

#include <algorithm>
#include <vector>

namespace stagegate::sim {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

BatchEngine::BatchEngine(asio::io_context& io, const SimProfile& profile, Metrics& metrics)
    : profile_(profile), metrics_(metrics), timer_(io) {}

uint64_t BatchEngine::Submit(int64_t prompt_tokens, int64_t output_tokens, SequenceEvents events,
                             int64_t cached_tokens) {
  if (profile_.zero_delay()) {
    // No model time at all: generate everything now, in order, on this thread.
    metrics_.ObserveQueueTime(0);
    if (events.on_admitted) events.on_admitted();
    for (int64_t i = 0; i < output_tokens; ++i)
      events.on_token(i);
    metrics_.AddPromptTokens(prompt_tokens);
    metrics_.AddGenerationTokens(output_tokens);
    events.on_done();
    return next_id_++;
  }
  if (waiting() >= profile_.queue_limit) {
    metrics_.CountShed(profile_.shed_status);
    events.on_rejected(profile_.shed_status);
    return 0;
  }
  uint64_t id = next_id_++;
  waiting_.push_back(Sequence{.id = id,
                              .prompt_tokens = prompt_tokens,
                              .output_tokens = std::max<int64_t>(output_tokens, 1),
                              .cached_tokens = cached_tokens,
                              .queued_at = Clock::now(),
                              .events = std::move(events)});
  Publish();
  if (!stepping_) Step();
  return id;
}

void BatchEngine::Cancel(uint64_t id) {
  auto queued = std::find_if(waiting_.begin(), waiting_.end(),
                             [id](const Sequence& s) { return s.id == id; });
  if (queued != waiting_.end()) {
    waiting_.erase(queued);
  } else if (auto it = running_.find(id); it != running_.end()) {
    kv_used_ -= KvNeed(it->second);
    // A response cancels from its own on_token, whose closure holds the last reference to the
    // response: destroying the sequence here would free the caller while it runs.
    if (notifying_ > 0) {
      cancelled_.push_back(running_.extract(it));
    } else {
      running_.erase(it);
    }
    metrics_.CountFinished("abort");
  }
  Publish();
}

template <typename Event, typename... Args>
void BatchEngine::Notify(const Event& event, Args... args) {
  ++notifying_;
  event(args...);
  if (--notifying_ == 0) cancelled_.clear();
}

void BatchEngine::Step() {
  // Requests that waited past the queue timeout are turned away rather than served late.
  const auto timeout = std::chrono::duration<double, std::milli>(profile_.queue_timeout_ms);
  while (!waiting_.empty() && Clock::now() - waiting_.front().queued_at > timeout) {
    Sequence expired = std::move(waiting_.front());
    waiting_.pop_front();
    metrics_.CountShed(503);
    expired.events.on_rejected(503);
  }
  int64_t prefill_tokens = 0;
  while (!waiting_.empty() && running() < profile_.max_running &&
         (running_.empty() || kv_used_ + KvNeed(waiting_.front()) <= profile_.kv_budget_tokens)) {
    Sequence next = std::move(waiting_.front());
    waiting_.pop_front();
    kv_used_ += KvNeed(next);
    prefill_tokens += next.prompt_tokens - next.cached_tokens;
    metrics_.ObserveQueueTime(SecondsSince(next.queued_at));
    metrics_.AddPromptTokens(next.prompt_tokens);
    uint64_t id = next.id;
    auto [it, inserted] = running_.emplace(id, std::move(next));
    if (it->second.events.on_admitted) Notify(it->second.events.on_admitted);
  }
  Publish();
  if (running_.empty()) {
    stepping_ = false;
    return;
  }
  stepping_ = true;
  double step_ms = profile_.decode_step_ms +
                   profile_.decode_step_per_seq_ms * static_cast<double>(running_.size());
  if (profile_.prefill_tokens_per_s > 0)
    step_ms += 1000.0 * static_cast<double>(prefill_tokens) / profile_.prefill_tokens_per_s;
  timer_.expires_after(std::chrono::microseconds(static_cast<int64_t>(step_ms * 1000)));
  timer_.async_wait([this](asio::error_code error) {
    if (error) {
      stepping_ = false;
      return;
    }
    FinishStep();
  });
}

void BatchEngine::FinishStep() {
  // Events may cancel sequences (a client went away), so walk a snapshot of the ids.
  std::vector<uint64_t> ids;
  ids.reserve(running_.size());
  for (const auto& [id, sequence] : running_)
    ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = running_.find(id);
    if (it == running_.end()) continue;
    Sequence& sequence = it->second;
    int64_t index = sequence.generated++;
    metrics_.AddGenerationTokens(1);
    Notify(sequence.events.on_token, index);
    it = running_.find(id);
    if (it == running_.end()) continue;
    if (it->second.generated >= it->second.output_tokens) {
      SequenceEvents events = std::move(it->second.events);
      kv_used_ -= KvNeed(it->second);
      running_.erase(it);
      events.on_done();
    }
  }
  Step();
}

void BatchEngine::Publish() {
  metrics_.SetRunning(running());
  metrics_.SetWaiting(waiting());
  metrics_.SetKvCacheUsage(profile_.kv_budget_tokens > 0
                               ? static_cast<double>(kv_used_) /
                                     static_cast<double>(profile_.kv_budget_tokens)
                               : 0);
}

}  // namespace stagegate::sim
