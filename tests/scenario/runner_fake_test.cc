// A whole scenario through scenario::Runner on a fake clock and a scripted application
// (RunSeam): warmup, steady, burst, the capacity search with its live controller, overload and
// recovery, the quality samples and an access-denial probe, every verdict and figure exact, in
// the time the records take to compute. The real-time witnesses of the same pipeline are the run
// command's tests against the reference application and the demo.

#include "scenario/runner.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "http/scripted_transport.h"
#include "manifest/bundle.h"
#include "scenario/scripted_app.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::scenario {
namespace {

using manifest::PhaseKind;
using testing::ScriptedApp;

constexpr int64_t kMs = ScriptedApp::kMs;

// The scenario: the service-desk corpus, one stage with every capability; the sweep searches
// from 2 req/s; overload at four times capacity.
std::string Scenario() {
  const std::string source = testing::SourcePath("");
  return R"(name: fake-run
manifest: {model: sim-assistant, model_version: "t", hardware: "t", serving_stack: "scripted",
           sampling: {temperature: 0, max_tokens: 400}}
seed: 19
corpus: )" +
         source +
         R"(corpus/service-desk
rubric: )" +
         source +
         R"(rubrics/service-desk.yaml
target:
  kind: sim
  sim_profile: )" +
         testing::Testdata("run/report-sim.yaml") + R"(
  endpoint: chat
  stream: true
  timeouts: {connect_ms: 2000, first_token_ms: 5000, total_ms: 10000}
stages:
  - name: full
    capabilities: [retrieval, identity, tools]
    persona_credentials: true
    tools: true
input:
  source: corpus
phases:
  warmup:   {concurrency: 1, requests: 2}
  steady:   {rate: 4, arrival: constant, duration_s: 10}
  burst:    {rate: 4, arrival: constant, duration_s: 10, spikes: [{at_s: 4, duration_s: 1, rate: 8}]}
  sweep:    {search: auto, rate: 2, resolution: 0.1, arrival: constant, duration_s: 30, grace_s: 2,
             min_completed: 20}
  overload: {rate: 40, arrival: constant, duration_s: 2, grace_s: 2}
  recovery: {rate: 5, arrival: constant, duration_s: 6, window_s: 1}
thresholds:
  latency:
    - {metric: ttft, percentile: 95, max_ms: 500}
  completion_rate: 0.95
quality:
  samples: {at_rest: 6, under_load: 4}
  min_scored_answers: 8
recovery:
  shed_statuses: [429, 503]
  require_retry_after: true
  max_shed_latency_ms: 500
  max_recovery_s: 3
faults:
  access_denial:
    - name: contractor-reads-salary-bands
      persona: contractor
      task: hr-salary-band-l4
      expect_status: [403]
      expect_answer: "not (authori[sz]ed|permitted)|cannot share"
      positive_control: hr-partner
on_stage_failure: continue
telemetry:
  scrape_interval_ms: 0
  gpu: off
)";
}

struct FakeRun {
  RunReport report;
  std::vector<load::RequestRecord> records;
  std::string console;
};

FakeRun RunOn(ScriptedApp& app) {
  testing::TempDir dir;
  const manifest::Bundle bundle = testing::LoadScenarioBundle(dir, "fake.yaml", Scenario());
  std::unique_ptr<store::Store> store = testing::Ok(store::Store::OpenInMemory());
  std::ostringstream out, err;
  console::Console console(out, err, false);
  const std::atomic<bool> stop{false};
  FakeClock clock;
  Runner runner(bundle, {.target_url = "http://scripted.invalid", .workers = 1}, *store, console,
                stop, RunSeam::Scripted(clock, app.Script()));
  Result<RunReport> report = runner.Run("fake-run", [&] {
    return store->CreateRun({.id = "fake-run", .scenario_name = "fake-run"});
  });
  INFO(out.str() << err.str());
  REQUIRE(report.ok());
  return {std::move(*report), runner.records(), out.str() + err.str()};
}

const StepResult& StepOf(const StageResult& stage, PhaseKind kind) {
  const StepResult* step = stage.Find(kind);
  REQUIRE(step != nullptr);
  return *step;
}

// The records of one step.
std::span<const load::RequestRecord> RecordsOf(const FakeRun& run, const StepResult& step) {
  return std::span(run.records).subspan(step.first_record, step.record_count);
}

TEST_CASE("a whole scenario on a scripted application: every verdict and figure exact",
          "[scenario][fake]") {
  ScriptedApp app;
  const FakeRun run = RunOn(app);
  INFO(run.console);
  REQUIRE(run.report.stages.size() == 1);
  const StageResult& stage = run.report.stages[0];

  // Steady: 4 a second for 10 s; none waits, so every first token is 50 ms after its send. The
  // contractor's question on salary bands is refused, as the corpus expects: it counts as done.
  const StepResult& steady = StepOf(stage, PhaseKind::kSteady);
  CHECK(steady.passed());
  CHECK(steady.metrics.completed == 39);
  CHECK(steady.expected_denials == 1);
  CHECK(steady.completion_rate() == 1);
  CHECK(steady.metrics.ttft_ms.Percentile(95) == 50);
  CHECK(steady.metrics.ttft_ms.max == 50);
  for (const load::RequestRecord& r : RecordsOf(run, steady))
    if (r.outcome == load::Outcome::kOk) CHECK(*r.first_token_ns - *r.sent_ns == 50 * kMs);

  // The burst's second at 8 a second is still under capacity: 44 sent, none waits.
  const StepResult& burst = StepOf(stage, PhaseKind::kBurst);
  CHECK(burst.passed());
  CHECK(burst.metrics.completed + burst.expected_denials == 44);
  CHECK(burst.metrics.ttft_ms.max == 50);

  // The search: 2, 4 and 8 hold; 16 and 12 shed; 10 is the capacity to the request and holds;
  // 11, within the resolution's 10 %, does not, and ends it.
  REQUIRE(stage.capacity);
  CHECK(stage.capacity->holds_up_to == 10);
  CHECK(stage.capacity->fails_at == 11);
  CHECK(stage.capacity->failed == "ttft p95 <= 500 ms");
  std::vector<double> levels;
  for (const stats::LevelOutcome& outcome : stage.sweep_levels)
    levels.push_back(outcome.level);
  CHECK(levels == std::vector<double>{2, 4, 8, 16, 12, 10, 11});

  // The live controller, on ticks of the fake clock: the levels that hold run their 30 s
  // whole; each that fails is ended as soon as it is certain. At 16 and 12 req/s, once more
  // answers are over 500 ms than the p95 allows of the level's planned requests (26 of 480, 20
  // of 360); at 11, whose queue grows by one a second, once its TTFT is clearly rising.
  std::map<double, const StepResult*> sweep;
  for (const StepResult& step : stage.steps)
    if (step.step.kind == PhaseKind::kSweep) sweep[*step.step.level] = &step;
  REQUIRE(sweep.size() == 7);
  for (double level : {2.0, 4.0, 8.0, 10.0}) {
    CHECK(sweep[level]->ended_early.empty());
    CHECK(sweep[level]->record_count == static_cast<size_t>(30 * level));
  }
  CHECK(sweep[16]->ended_early ==
        "thresholds: ttft p95 <= 500 ms cannot hold (28 of at most 480 requests already over it)");
  CHECK(sweep[16]->record_count == 84);  // the arrivals of its first 5.25 s, to the tick
  CHECK(sweep[12]->ended_early ==
        "thresholds: ttft p95 <= 500 ms cannot hold (21 of at most 360 requests already over it)");
  CHECK(sweep[12]->record_count == 84);
  CHECK(sweep[11]->ended_early.rfind("not sustained: TTFT rising", 0) == 0);
  CHECK(sweep[11]->record_count == 110);

  // Overload at 40 a second for 2 s: 80 offered. The server takes a request while the wait for
  // it is at most 500 ms: 25 in the 2 s (the 25th arriving at 1.975 s waits 500 ms); two HR
  // questions on salary bands are answered at once and two of the contractor's are refused, so
  // 27 are answered and the other 51 shed at once, each with Retry-After.
  REQUIRE(stage.overload);
  const OverloadFinding& overload = *stage.overload;
  CHECK(overload.offered == 80);
  CHECK(overload.ok == 27);
  CHECK(overload.expected_denials == 2);
  CHECK(overload.shed == 51);
  CHECK(overload.shed_with_retry_after == 51);
  CHECK(overload.timeouts == 0);
  CHECK(overload.other_failures == 0);
  CHECK(overload.shed_latency_ms.max == 2);
  CHECK(!overload.checks.empty());
  CHECK(AllPassed(overload.checks));
  // Recovery: the queue is empty when the recovery phase starts, so its first full window is
  // within limits.
  REQUIRE(stage.recovery);
  REQUIRE(stage.recovery->recovered_after_s);
  CHECK(*stage.recovery->recovered_after_s == Approx(1.005).margin(1e-8));
  CHECK(stage.recovery->windows_checked == 3);
  CHECK(stage.recovery->ttft_p95_ms == 50);

  // Six answers at rest and four under load, for review; the denial probe held.
  CHECK(run.report.samples_at_rest == 6);
  CHECK(run.report.samples_under_load == 4);
  REQUIRE(run.report.denials.size() == 1);
  CHECK(run.report.denials[0].verdict == "pass");
  CHECK(run.report.denials[0].denied == 1);
  CHECK(run.report.denials[0].control_saw_canary == true);
  CHECK(run.report.denials[0].leaks.empty());
}

TEST_CASE("a scripted application that leaks and never sheds fails the rules it breaks, exactly",
          "[scenario][fake]") {
  ScriptedApp app{.leaky = true, .sheds = false};
  const FakeRun run = RunOn(app);
  INFO(run.console);
  REQUIRE(run.report.stages.size() == 1);
  const StageResult& stage = run.report.stages[0];

  // The contractor is given the salary band, canary and all.
  REQUIRE(run.report.denials.size() == 1);
  const faults::DenialFinding& denial = run.report.denials[0];
  CHECK(denial.verdict == "fail");
  CHECK(denial.denied == 0);
  REQUIRE(denial.leaks.size() == 1);
  CHECK(denial.leaks[0].find("CANARY-SB26-R8M3") != std::string::npos);

  // Overload, queued and never shed: the 76 requests the server queues need 7.6 s of it, past the
  // 2 s phase and its 2 s grace period. What is still queued then is cut, not shed: it hangs,
  // and the first rule fails on it (it used to pass, with nothing shed to judge).
  REQUIRE(stage.overload);
  const OverloadFinding& overload = *stage.overload;
  CHECK(overload.offered == 80);
  CHECK(overload.shed == 0);
  CHECK(overload.timeouts == 0);
  CHECK(overload.ok + overload.cut + overload.expected_denials == 80);
  CHECK(overload.cut == 37);
  REQUIRE(!overload.checks.empty());
  CHECK(overload.checks[0].name == "no request hangs (until a timeout, or past the grace period)");
  CHECK(overload.checks[0].measured == 37);
  CHECK_FALSE(overload.checks[0].passed);
  CHECK_FALSE(AllPassed(overload.checks));
  // Without shedding the capacity is the same 10 req/s: the levels above it fail on a queue that
  // grows instead.
  REQUIRE(stage.capacity);
  CHECK(stage.capacity->holds_up_to == 10);
  CHECK(stage.capacity->fails_at == 11);
}

}  // namespace
}  // namespace stagegate::scenario
