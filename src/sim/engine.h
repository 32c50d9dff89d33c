#pragma once

#include <asio.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "sim/metrics.h"
#include "sim/profile.h"

namespace stagegate::sim {

/// What the engine tells a sequence's owner. All are called on the io_context's thread.
struct SequenceEvents {
  std::function<void()> on_admitted;                // left the queue; prefill starts
  std::function<void(int64_t index)> on_token;      // token `index` (from 0) was generated
  std::function<void()> on_done;                    // the last token was generated
  std::function<void(int64_t status)> on_rejected;  // shed (queue full) or queue timeout
};

/// A discrete-event model of continuous batching on an inference server. Requests wait in a
/// queue; each engine step admits what fits under the running-sequence cap and the KV budget,
/// charges their prompt tokens at the prefill rate, and gives every running sequence one token.
/// The step grows with the batch, so throughput saturates and queueing delay appears: a knee.
/// Runs on one io_context thread; not thread-safe.
class BatchEngine {
 public:
  BatchEngine(asio::io_context& io, const SimProfile& profile, Metrics& metrics);

  /// Queues a sequence. When the queue is already at its limit the sequence is shed at once
  /// (on_rejected with the profile's shed status) and 0 is returned; otherwise its id.
  /// `cached_tokens` of the prompt came from the prefix cache: only the rest costs prefill.
  uint64_t Submit(int64_t prompt_tokens, int64_t output_tokens, SequenceEvents events,
                  int64_t cached_tokens = 0);
  /// Drops a queued or running sequence (its client went away); no further events for it. May be
  /// called from the sequence's own event: its SequenceEvents (and whatever they keep alive) are
  /// then destroyed after that event returns, never while it runs.
  void Cancel(uint64_t id);

  int64_t running() const { return static_cast<int64_t>(running_.size()); }
  int64_t waiting() const { return static_cast<int64_t>(waiting_.size()); }

 private:
  struct Sequence {
    uint64_t id;
    int64_t prompt_tokens;
    int64_t output_tokens;
    int64_t cached_tokens = 0;
    int64_t generated = 0;
    std::chrono::steady_clock::time_point queued_at;
    SequenceEvents events;
  };

  void Step();
  void FinishStep();
  void Publish();
  /// Calls one of a running sequence's events; sequences cancelled meanwhile outlive the call.
  template <typename Event, typename... Args>
  void Notify(const Event& event, Args... args);
  int64_t KvNeed(const Sequence& s) const { return s.prompt_tokens + s.output_tokens; }

  const SimProfile& profile_;
  Metrics& metrics_;
  asio::steady_timer timer_;
  bool stepping_ = false;
  uint64_t next_id_ = 1;
  int64_t kv_used_ = 0;
  std::deque<Sequence> waiting_;
  std::map<uint64_t, Sequence> running_;
  int notifying_ = 0;  // depth of Notify calls in progress
  /// Sequences Cancel took out of running_ during a Notify: kept, at the same addresses, until it
  /// returns, since the event running may be one of theirs.
  std::vector<std::map<uint64_t, Sequence>::node_type> cancelled_;
};

}  // namespace stagegate::sim
