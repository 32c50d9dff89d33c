#include "scenario/capacity_search.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "base/fake_clock.h"
#include "http/scripted_transport.h"
#include "load/engine.h"
#include "load/metrics.h"
#include "load/schedule.h"
#include "scenario/findings.h"
#include "scenario/level_judge.h"

namespace stagegate::scenario {
namespace {

// A fake application whose levels pass up to `ceiling` and fail above it.
struct Fake {
  double ceiling = 0;
  std::optional<double> inconclusive_at;
  std::vector<double> ran;
  RunLevel Runner() {
    return [this](double level) -> Result<stats::LevelOutcome> {
      ran.push_back(level);
      const bool unsure = inconclusive_at && level == *inconclusive_at;
      return stats::LevelOutcome{.level = level,
                                 .passed = !unsure && level <= ceiling,
                                 .inconclusive = unsure,
                                 .failed = unsure || level <= ceiling ? "" : "not sustained",
                                 .sustained_rate = level};
    };
  }
};

TEST_CASE("A search doubles until a level misses, then bisects to its resolution", "[scenario]") {
  Fake app{.ceiling = 11.8};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.search = true, .start = 2, .resolution = 0.1}, app.Runner(), stop);
  REQUIRE(result.ok());
  // 2, 4, 8 pass, 16 misses; then 12 (miss), 10 (pass), 11 (pass): 12 <= 11 x 1.1.
  CHECK(app.ran == std::vector<double>{2, 4, 8, 16, 12, 10, 11});
  CHECK(result->finding.holds_up_to == 11);
  CHECK(result->finding.fails_at == 12);
  CHECK(*result->finding.fails_at <= *result->finding.holds_up_to * 1.1);
  CHECK(result->finding.sustained_rate == 11);
  CHECK(result->finding.failed == "not sustained");
  CHECK(result->outcomes.size() == 7);
}

TEST_CASE("A search stops at its ceiling when every level holds", "[scenario]") {
  Fake app{.ceiling = 1000};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.search = true, .start = 3, .max_level = 20}, app.Runner(), stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{3, 6, 12, 20});
  CHECK(result->finding.holds_up_to == 20);
  CHECK_FALSE(result->finding.fails_at);
}

TEST_CASE("A search of concurrencies bisects in whole numbers", "[scenario]") {
  Fake app{.ceiling = 5};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result = RunSweep(
      {.search = true, .start = 1, .resolution = 0.01, .integer = true}, app.Runner(), stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{1, 2, 4, 8, 6, 5});
  CHECK(result->finding.holds_up_to == 5);
  CHECK(result->finding.fails_at == 6);
}

TEST_CASE("A level too short to tell stops the search upward and marks the finding", "[scenario]") {
  Fake app{.ceiling = 100, .inconclusive_at = 8};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.search = true, .start = 2, .resolution = 0.5}, app.Runner(), stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{2, 4, 8, 6});
  CHECK(result->finding.holds_up_to == 6);
  CHECK(result->finding.fails_at == 8);
  CHECK(result->finding.inconclusive);
  CHECK(stats::DescribeCapacity(result->finding, result->outcomes, "req/s") ==
        "inconclusive: sustained 6 req/s; thresholds hold up to 6 req/s and 8 req/s was too "
        "short to tell");
}

TEST_CASE("A fixed sweep runs one level past the first miss, then its bisections", "[scenario]") {
  Fake app{.ceiling = 13};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.levels = {4, 8, 12, 16, 20, 24}, .bisect = 1}, app.Runner(), stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{4, 8, 12, 16, 20, 14});
  CHECK(result->finding.holds_up_to == 12);
  CHECK(result->finding.fails_at == 14);
}

TEST_CASE("A stop ends the sweep after the level in flight", "[scenario]") {
  Fake app{.ceiling = 100};
  std::atomic<bool> stop{false};
  RunLevel inner = app.Runner();
  Result<SweepResult> result = RunSweep(
      {.search = true, .start = 1},
      [&](double level) {
        if (level >= 4) stop = true;
        return inner(level);
      },
      stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{1, 2, 4});
}

TEST_CASE("A failing level is an error of the sweep", "[scenario]") {
  const std::atomic<bool> stop{false};
  Result<SweepResult> result = RunSweep(
      {.levels = {1, 2}},
      [](double) -> Result<stats::LevelOutcome> { return Status::IoError("store full"); }, stop);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().message() == "store full");
}

// An application with `servers` that each take `service_ms` per request, first come first
// served: its capacity is servers / service time, and above it the queue grows without end. A
// request waits for the first free server; its first token comes 50 ms after its service starts.
http::Script QueueingServer(int servers, int64_t service_ms) {
  constexpr int64_t kMs = 1'000'000;
  auto free_at = std::make_shared<std::vector<int64_t>>(servers, 0);
  return [=](const http::ScriptedRequest& request) {
    auto first_free = std::min_element(free_at->begin(), free_at->end());
    const int64_t start = std::max(request.sent_ns, *first_free);
    *first_free = start + service_ms * kMs;
    const int64_t wait = start - request.sent_ns;
    return http::ScriptedResponse::StreamedAnswer({"a ", "b ", "c "}, wait + 50 * kMs,
                                                  (service_ms - 50) / 2 * kMs);
  };
}

TEST_CASE("A capacity search on a scripted application finds the rate where its queue grows",
          "[scenario][fake]") {
  // Two servers of 200 ms each: 10 requests a second, exactly. The rules decide on every level
  // (sustained load, the TTFT threshold, the bisection) with no real time in any of them.
  const LevelCriteria criteria{.thresholds = {.latency = {{.metric = manifest::LatencyMetric::kTtft,
                                                           .percentile = 95,
                                                           .max_ms = 500}},
                                              .completion_rate = 0.95},
                               .min_completed = 20,
                               .duration_s = 30};
  std::vector<double> ran;
  std::vector<std::string> reasons;
  const RunLevel run_level = [&](double rate) -> Result<stats::LevelOutcome> {
    ran.push_back(rate);
    FakeClock clock;  // each level on a fresh application and clock
    Result<std::vector<load::Arrival>> arrivals =
        load::BuildOpenLoop({.rate = rate, .duration_s = criteria.duration_s});
    if (!arrivals.ok()) return arrivals.status();
    const load::LoadOptions options{.arrivals = *arrivals, .workers = 1};
    const load::RequestSpec spec{.url = "http://scripted.invalid/v1/chat/completions",
                                 .body = "{}"};
    const load::RequestSource source = [&spec](int64_t) { return spec; };
    const load::RunControl control{
        .clock = &clock,
        .origin_ns = clock.NowNs(),
        .transport = http::ScriptedTransport::Factory(clock, QueueingServer(2, 200))};
    Result<load::LoadResult> load = load::RunLoad(options, source, control);
    if (!load.ok()) return load.status();
    const load::PhaseMetrics metrics =
        load::ComputeMetrics(load->records, SlosOf(criteria.thresholds));
    const LevelJudgement judgement =
        JudgeLevel(load->records, metrics, {}, criteria, true, load->started_ns);
    reasons.push_back(judgement.reason);
    return OutcomeOf(rate, judgement);
  };
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.search = true, .start = 2, .resolution = 0.1}, run_level, stop);
  REQUIRE(result.ok());
  for (const stats::LevelOutcome& outcome : result->outcomes)
    UNSCOPED_INFO(outcome.level << ": " << (outcome.passed ? "pass" : outcome.failed)
                                << (outcome.inconclusive ? " (inconclusive)" : ""));
  for (const std::string& reason : reasons)
    UNSCOPED_INFO(reason);
  // 2, 4 and 8 hold; 16 and 12 overflow the queue; 10 is exactly the capacity and holds; 11,
  // within 10% of it, overflows and ends the search.
  CHECK(ran == std::vector<double>{2, 4, 8, 16, 12, 10, 11});
  CHECK(result->finding.holds_up_to == 10);
  CHECK(result->finding.fails_at == 11);
  REQUIRE(result->outcomes.size() == 7);
  // At capacity no request waited: every one that arrived in the window was answered within the
  // threshold, and the sustained rate is those answers over the window.
  const stats::LevelOutcome& at_ten = result->outcomes[5];
  CHECK(at_ten.level == 10);
  CHECK(at_ten.passed);
  REQUIRE(at_ten.window);
  REQUIRE(at_ten.sustained_rate);
  CHECK(at_ten.window->arrived > 250);
  CHECK(at_ten.window->completed == at_ten.window->arrived);
  CHECK(at_ten.window->met_slos == at_ten.window->arrived);
  CHECK(*at_ten.sustained_rate == at_ten.window->Rate(at_ten.window->completed));
  CHECK(at_ten.goodput == *at_ten.sustained_rate);
  CHECK(at_ten.output_tokens_per_s == Approx(3 * *at_ten.sustained_rate).epsilon(1e-12));
  CHECK_FALSE(result->outcomes[6].passed);
  CHECK(result->outcomes[6].failed ==
        "ttft p95 <= 500 ms");  // its queue, a request longer a second
}

}  // namespace
}  // namespace stagegate::scenario
