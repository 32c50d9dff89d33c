#include "stats/sustain.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

namespace stagegate::stats {
namespace {

// A level of `seconds` at `rate` arrivals a second (evenly spaced) against a server that serves
// one request at a time, each in 1 / `capacity` s after a fixed `base_s`: under its capacity
// every request waits `base_s`; over it, a queue grows.
std::vector<LevelRequest> Level(double rate, double seconds, double capacity, double base_s) {
  std::vector<LevelRequest> requests;
  double free_at = 0;
  for (double t = 0; t < seconds - 1e-9; t += 1 / rate) {
    const double start = std::max(t, free_at);
    free_at = start + 1 / capacity;
    requests.push_back({.intended_s = t,
                        .done_s = free_at + base_s,
                        .completed = true,
                        .wait_s = start - t + base_s});
  }
  return requests;
}

double WindowOf(const std::vector<LevelRequest>& requests) {
  double window = 0;
  for (const LevelRequest& r : requests)
    window = std::max(window, r.intended_s);
  return window;
}

TEST_CASE("A level under capacity is sustained: completions keep pace, latency flat", "[stats]") {
  const std::vector<LevelRequest> requests = Level(10, 20, 20, 0.3);
  const SustainFinding f = JudgeSustained(requests, {}, {.window_s = WindowOf(requests)});
  CHECK(f.verdict == Sustained::kYes);
  REQUIRE(f.pace);
  CHECK(f.pace->decided);
  CHECK(f.pace->share == Approx(1.0).epsilon(0.01));
  CHECK(f.pace->completed_rate == Approx(10).epsilon(0.02));
  CHECK(f.latency.state == TrendState::kSettled);
  CHECK(f.failures.empty());
  CHECK(f.unknowns.empty());
}

TEST_CASE("A level over capacity is not sustained: completions fall behind, TTFT rises",
          "[stats]") {
  // 10 req/s offered, 8 req/s served: the queue grows by 2 requests, 0.25 s of waiting, a second.
  const std::vector<LevelRequest> requests = Level(10, 20, 8, 0.05);
  const SustainFinding f = JudgeSustained(requests, {}, {.window_s = WindowOf(requests)});
  CHECK(f.verdict == Sustained::kNo);
  REQUIRE(f.pace);
  CHECK(f.pace->decided);
  CHECK_FALSE(f.pace->kept_pace);
  // Of the arrivals it had time to finish, it finished about what it serves a second.
  CHECK(f.pace->completed_rate == Approx(8).epsilon(0.1));
  CHECK(f.pace->share < 0.9);
  CHECK(f.latency.state == TrendState::kRising);
  REQUIRE(f.latency.trend);
  CHECK(f.latency.trend->slope == Approx(0.25).epsilon(0.05));
  REQUIRE(f.failures.size() == 2);
  CHECK(f.failures[0].rfind("completed 8.", 0) == 0);
  CHECK(f.failures[0].find(" of 10 req/s") != std::string::npos);
  CHECK(f.failures[1] == "TTFT rising 250 ms/s");
}

TEST_CASE("Completions that fall behind fail a level whose latency stays flat", "[stats]") {
  // Every fifth request is shed at once: what is answered is as fast as ever.
  std::vector<LevelRequest> requests = Level(10, 20, 20, 0.3);
  for (size_t i = 0; i < requests.size(); i += 5) {
    requests[i].completed = false;
    requests[i].done_s = requests[i].intended_s + 0.001;
    requests[i].wait_s.reset();
  }
  const SustainFinding f = JudgeSustained(requests, {}, {.window_s = WindowOf(requests)});
  CHECK(f.verdict == Sustained::kNo);
  CHECK(f.latency.state == TrendState::kSettled);
  REQUIRE(f.failures.size() == 1);
  CHECK(f.failures[0] == "completed 8 of 10 req/s");
  // A lower share passes it.
  CHECK(JudgeSustained(requests, {}, {.window_s = WindowOf(requests), .min_share = 0.75}).verdict ==
        Sustained::kYes);
}

TEST_CASE("A level too short to tell is undecided, never sustained", "[stats]") {
  const std::vector<LevelRequest> requests = Level(10, 3, 20, 0.3);
  const SustainFinding f = JudgeSustained(requests, {}, {.window_s = WindowOf(requests)});
  CHECK(f.verdict == Sustained::kUndecided);
  CHECK(f.latency.state == TrendState::kUndecided);
  REQUIRE_FALSE(f.unknowns.empty());
  CHECK(f.unknowns[0] ==
        "too short to tell whether TTFT settles (5 intervals with requests, 8 "
        "needed)");
  // Too few completed requests alone make it undecided too.
  const std::vector<LevelRequest> slow = Level(1, 20, 20, 0.3);
  const SustainFinding few = JudgeSustained(slow, {}, {.window_s = WindowOf(slow)});
  CHECK(few.verdict == Sustained::kUndecided);
  CHECK(few.unknowns.back() == "too short to tell: 20 of the 30 completed requests a level needs");
}

TEST_CASE("The server's queue depth is a second witness of a queue that grows", "[stats]") {
  const std::vector<LevelRequest> requests = Level(10, 20, 20, 0.3);
  std::vector<QueueSample> queue;
  for (double t = 0; t < 20; t += 0.5)
    queue.push_back({.t_s = t, .waiting = 2 * t});
  const SustainFinding f = JudgeSustained(requests, queue, {.window_s = WindowOf(requests)});
  CHECK(f.verdict == Sustained::kNo);
  REQUIRE(f.queue);
  CHECK(f.queue->state == TrendState::kRising);
  CHECK(f.failures == std::vector<std::string>{"server queue rising 2 requests/s"});
  // A queue that stays where it is says nothing against the level.
  for (QueueSample& s : queue)
    s.waiting = 3 + (static_cast<int>(s.t_s * 2) % 3);
  CHECK(JudgeSustained(requests, queue, {.window_s = WindowOf(requests)}).verdict ==
        Sustained::kYes);
}

TEST_CASE("A closed loop has no pace to keep; its latency trend still counts", "[stats]") {
  const std::vector<LevelRequest> requests = Level(10, 20, 8, 0.05);
  const SustainFinding f =
      JudgeSustained(requests, {}, {.open_loop = false, .window_s = WindowOf(requests)});
  CHECK_FALSE(f.pace);
  CHECK(f.verdict == Sustained::kNo);
  REQUIRE(f.failures.size() == 1);
  CHECK(f.failures[0].rfind("TTFT rising 25", 0) == 0);
}

}  // namespace
}  // namespace stagegate::stats
