#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <vector>

#include "sim/engine.h"

namespace stagegate::sim {
namespace {

using Clock = std::chrono::steady_clock;

SimProfile Timed(int64_t max_running, double step_ms, double per_seq_ms = 0) {
  SimProfile profile;
  profile.prefill_tokens_per_s = 1e9;
  profile.decode_step_ms = step_ms;
  profile.decode_step_per_seq_ms = per_seq_ms;
  profile.max_running = max_running;
  return profile;
}

// Records what the engine told one sequence.
struct Log {
  std::vector<int64_t> tokens;
  int done = 0;
  int64_t rejected = 0;
  bool admitted = false;
  Clock::time_point finished;

  SequenceEvents Events(std::function<void()> on_token_extra = {}) {
    return {.on_admitted = [this] { admitted = true; },
            .on_token =
                [this, on_token_extra](int64_t index) {
                  tokens.push_back(index);
                  if (on_token_extra) on_token_extra();
                },
            .on_done =
                [this] {
                  ++done;
                  finished = Clock::now();
                },
            .on_rejected = [this](int64_t status) { rejected = status; }};
  }
};

TEST_CASE("with no model delay every token comes at once, in order", "[sim][engine]") {
  asio::io_context io;
  Metrics metrics;
  SimProfile profile = SimProfile::Fast();
  BatchEngine engine(io, profile, metrics);
  Log log;
  engine.Submit(10, 5, log.Events());
  CHECK(log.tokens == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(log.done == 1);
  CHECK(log.admitted);
}

TEST_CASE("no more sequences run than the cap; the rest wait their turn", "[sim][engine]") {
  asio::io_context io;
  Metrics metrics;
  SimProfile profile = Timed(2, 1);
  BatchEngine engine(io, profile, metrics);
  std::vector<Log> logs(5);
  int64_t most_running = 0;
  for (Log& log : logs)
    engine.Submit(4, 3,
                  log.Events([&] { most_running = std::max(most_running, engine.running()); }));
  // The first is admitted at once; the others join at the next step boundary, two at a time.
  CHECK(engine.running() == 1);
  CHECK(engine.waiting() == 4);
  io.run();
  CHECK(most_running == 2);
  for (const Log& log : logs) {
    CHECK(log.tokens == std::vector<int64_t>{0, 1, 2});
    CHECK(log.done == 1);
  }
  // First come, first served.
  CHECK(logs[0].finished <= logs[2].finished);
  CHECK(logs[2].finished <= logs[4].finished);
  CHECK(engine.running() == 0);
  CHECK(engine.waiting() == 0);
}

TEST_CASE("the KV budget limits admission as well as the cap", "[sim][engine]") {
  asio::io_context io;
  Metrics metrics;
  SimProfile profile = Timed(8, 1);
  profile.kv_budget_tokens = 100;
  BatchEngine engine(io, profile, metrics);
  std::vector<Log> logs(3);
  for (Log& log : logs)
    engine.Submit(50, 10, log.Events());  // 60 tokens of KV each
  CHECK(engine.running() == 1);
  CHECK(engine.waiting() == 2);
  io.run();
  for (const Log& log : logs)
    CHECK(log.done == 1);
}

TEST_CASE("a full queue sheds at once with the profile's status", "[sim][engine]") {
  asio::io_context io;
  Metrics metrics;
  SimProfile profile = Timed(1, 1);
  profile.queue_limit = 1;
  profile.shed_status = 503;
  BatchEngine engine(io, profile, metrics);
  Log running, waiting, shed;
  CHECK(engine.Submit(1, 5, running.Events()) != 0);
  CHECK(engine.Submit(1, 5, waiting.Events()) != 0);
  CHECK(engine.Submit(1, 5, shed.Events()) == 0);
  CHECK(shed.rejected == 503);
  CHECK_FALSE(shed.admitted);
  io.run();
  CHECK(running.done == 1);
  CHECK(waiting.done == 1);
  CHECK(shed.tokens.empty());
}

TEST_CASE("a request that waits past the queue timeout gets 503", "[sim][engine]") {
  asio::io_context io;
  Metrics metrics;
  SimProfile profile = Timed(1, 2);
  profile.queue_timeout_ms = 20;
  BatchEngine engine(io, profile, metrics);
  Log first, second;
  engine.Submit(1, 50, first.Events());  // about 100 ms
  engine.Submit(1, 5, second.Events());
  io.run();
  CHECK(first.done == 1);
  CHECK(second.rejected == 503);
  CHECK(second.tokens.empty());
}

TEST_CASE("a cancelled sequence hears nothing more and frees its place", "[sim][engine]") {
  asio::io_context io;
  Metrics metrics;
  SimProfile profile = Timed(1, 1);
  BatchEngine engine(io, profile, metrics);
  Log cancelled, next;
  uint64_t id = 0;
  id = engine.Submit(1, 100, cancelled.Events([&] {
    if (cancelled.tokens.size() == 3) engine.Cancel(id);
  }));
  engine.Submit(1, 4, next.Events());
  io.run();
  CHECK(cancelled.tokens.size() == 3);
  CHECK(cancelled.done == 0);
  CHECK(next.done == 1);
}

// What a sequence's owner keeps alive through its events: a response, say. Counts are static so
// that the test reads them without touching the callback that may already be gone.
struct OwnerState {
  static inline bool in_token_event = false;
  static inline int destroyed_in_event = 0;
  static inline int destroyed = 0;
  ~OwnerState() {
    ++destroyed;
    if (in_token_event) ++destroyed_in_event;
  }
};

TEST_CASE("a sequence cancelled from its own token event lives until the event returns",
          "[sim][engine]") {
  asio::io_context io;
  Metrics metrics;
  SimProfile profile = Timed(1, 1);
  BatchEngine engine(io, profile, metrics);
  OwnerState::destroyed = OwnerState::destroyed_in_event = 0;
  uint64_t id = 0;
  {
    auto owner = std::make_shared<OwnerState>();
    SequenceEvents events{
        .on_admitted = [owner] {},
        .on_token =
            [owner, &engine, &id](int64_t) {
              OwnerState::in_token_event = true;
              engine.Cancel(id);  // what a response does when its client has gone away
              OwnerState::in_token_event = false;
            },
        .on_done = [owner] {},
        .on_rejected = [owner](int64_t) {}};
    id = engine.Submit(1, 10, std::move(events));
  }  // the events hold the only references now
  io.run();
  CHECK(OwnerState::destroyed_in_event == 0);
  CHECK(OwnerState::destroyed == 1);  // released after the event, not leaked
  CHECK(engine.running() == 0);
}

TEST_CASE("a step takes longer the more sequences run", "[sim][engine]") {
  auto time_for = [](int sequences) {
    asio::io_context io;
    Metrics metrics;
    SimProfile profile = Timed(64, 0.1, 1.0);  // 0.1 ms + 1 ms per running sequence
    BatchEngine engine(io, profile, metrics);
    std::vector<Log> logs(static_cast<size_t>(sequences));
    auto start = Clock::now();
    for (Log& log : logs)
      engine.Submit(1, 20, log.Events());
    io.run();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  // Timers never fire early, so each bound holds however busy the machine is (a ratio of the
  // two does not: a late wake-up in the short run shrinks it). Were the step time not to grow
  // with the sequences, eight would take about as long as one (~22 ms), under its bound.
  double one = time_for(1);    // 20 steps of at least 1.1 ms
  double eight = time_for(8);  // 20 steps of at least 8.1 ms
  CHECK(one >= 20);
  CHECK(eight >= 160);
}

}  // namespace
}  // namespace stagegate::sim
