// Energy per completed request: the GPUs' energy counters read on each side of a phase's
// boundaries (NVML through the fake library, a DCGM exporter served over HTTP), against a hand
// computation from the phase's window and the fixtures' known power; and the arithmetic of
// counters and of integrated power.

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "http_test_server.h"
#include "report/energy.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

constexpr const char* kScenario = R"(name: energy-test
manifest: {model: sim-assistant, model_version: "test", hardware: test, serving_stack: sim}
seed: 3
target:
  kind: sim
  endpoint: chat
  stream: true
  timeouts: {connect_ms: 2000, first_token_ms: 5000, total_ms: 10000}
stages:
  - name: bare
    phases: [warmup, steady]
input: {source: synthetic, input_tokens: {mean: 50}, output_tokens: {mean: 20}}
phases:
  warmup: {concurrency: 1, requests: 2}
  steady: {rate: 10, arrival: constant, duration_s: 4}
thresholds:
  completion_rate: 0.5
telemetry: {scrape_interval_ms: 100, GPU}
)";

struct Measured {
  json energy;      // report.json's energy.phases[0]
  double window_s;  // the steady phase's window, from the store
  int64_t completed;
};

// Runs the scenario with `gpu` in its telemetry and reports it; the steady phase's energy as the
// report gives it, and its window as the store has it.
Measured RunAndReport(const testing::TempDir& dir, const std::string& gpu) {
  testing::WriteText(dir / "energy.yaml", testing::ReplaceAll(kScenario, "GPU", gpu));
  testing::Ran ran =
      testing::RunStagegate(dir, {"--quiet", "run", dir / "energy.yaml", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const std::string run_id = json::parse(testing::ReadText(dir / "out/run.json"))["run_id"];
  testing::Ran reported = testing::RunStagegate(dir, {"report", run_id, "--out", dir / "report"});
  INFO(reported.out << reported.err);
  REQUIRE(reported.exit_code == 0);
  const json report = json::parse(testing::ReadText(dir / "report/report.json"));
  REQUIRE(report["energy"]["phases"].size() == 1);
  Measured m{.energy = report["energy"]["phases"][0]};
  auto store = testing::Ok(store::Store::Open(dir / "store.db"));
  for (const store::PhaseInfo& p : testing::Ok(store->ListPhases(run_id)))
    if (p.phase == "steady") m.window_s = static_cast<double>(*p.ended_ns - *p.started_ns) / 1e9;
  m.completed = m.energy["completed"];
  REQUIRE(m.window_s > 1.5);
  REQUIRE(m.completed > 10);
  return m;
}

// [serial]: the energy counter is read on the scraper's 100 ms schedule and matched with the
// phase's wall-clock window to 1% (40 ms of a 4 s phase); a read that another test's load delays
// moves it.
TEST_CASE("joules per request from the fake NVML's counter match 250 W over the phase",
          "[report][telemetry][serial]") {
  // tests/telemetry/fake_nvml.cc: GPU 0's counter grows at 250 W; GPU 1 has none.
  REQUIRE(setenv("STAGEGATE_NVML_LIBRARY", testing::FakeNvmlLibrary(), 1) == 0);
  testing::TempDir dir;
  const Measured m = RunAndReport(dir, "gpu: auto");
  unsetenv("STAGEGATE_NVML_LIBRARY");
  INFO(m.energy.dump());
  CHECK(m.energy["method"] == "counter");
  CHECK(m.energy["source"] == "gpu_energy_joules_total");
  CHECK(m.energy["covered_share"].get<double>() == Approx(1.0));
  const double joules = 250.0 * m.window_s;  // by hand: power times time
  CHECK(m.energy["joules"].get<double>() == Approx(joules).epsilon(0.01));
  CHECK(m.energy["joules_per_request"].get<double>() ==
        Approx(joules / static_cast<double>(m.completed)).epsilon(0.01));
  CHECK(m.energy["joules_per_output_token"].get<double>() ==
        Approx(joules / m.energy["output_tokens"].get<double>()).epsilon(0.01));
  CHECK(m.energy["joules_per_accepted_answer"].is_null());  // nobody has scored
}

// [serial]: as above, the exporter scraped every 100 ms and matched with the wall-clock window.
TEST_CASE("joules per request from a DCGM exporter's counters match 400 W over the phase",
          "[report][telemetry][serial]") {
  // Two GPUs at 300 W and 100 W, their counters in millijoules from when the exporter started,
  // computed at each scrape; the power gauges say the same, for the fallback.
  const auto started = std::chrono::steady_clock::now();
  testing::FixedResponseServer dcgm([started](const std::string&) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::string body =
        "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-a\"} " +
        std::to_string(static_cast<long long>(5e9 + 300e3 * s)) +
        "\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\",UUID=\"GPU-b\"} " +
        std::to_string(static_cast<long long>(7e9 + 100e3 * s)) +
        "\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
        "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 300\n"
        "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-b\"} 100\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\"} 90\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\"} 40\n";
    return testing::HttpResponse("200 OK", body);
  });
  testing::TempDir dir;
  const Measured m = RunAndReport(dir, "gpu: dcgm, dcgm_url: \"" + dcgm.url() + "\"");
  INFO(m.energy.dump());
  CHECK(m.energy["method"] == "counter");
  CHECK(m.energy["source"] == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  const double joules = 400.0 * m.window_s;
  CHECK(m.energy["joules"].get<double>() == Approx(joules).epsilon(0.01));
  CHECK(m.energy["joules_per_request"].get<double>() ==
        Approx(joules / static_cast<double>(m.completed)).epsilon(0.01));
}

TEST_CASE("server series: the first vendor name wins, GPUs add or average, and junk is left out",
          "[report][telemetry]") {
  auto store = testing::Ok(store::Store::OpenInMemory());
  REQUIRE(store
              ->CreateRun({.id = "r",
                           .scenario_name = "s",
                           .fingerprint = "f",
                           .scenario_json = "{}",
                           .started_unix_ms = 1})
              .ok());
  const auto sample = [](int64_t t, std::string name, std::string gpu, double value) {
    return telemetry::TimedSample{
        .t_ns = t,
        .source = "x",
        .sample = {.name = name, .labels = {{"gpu", gpu}}, .value = value}};
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<telemetry::TimedSample> samples = {
      // vLLM v1 exposes the new KV-cache name and the deprecated one: the new one is read.
      sample(100, "vllm:kv_cache_usage_perc", "", 0.5),
      sample(100, "vllm:gpu_cache_usage_perc", "", 0.9),
      // Two GPUs: utilisation (percent) averages, power adds.
      sample(100, "DCGM_FI_DEV_GPU_UTIL", "0", 90), sample(100, "DCGM_FI_DEV_GPU_UTIL", "1", 40),
      sample(100, "DCGM_FI_DEV_POWER_USAGE", "0", 300),
      sample(100, "DCGM_FI_DEV_POWER_USAGE", "1", 100),
      // A server's junk: an infinite counter and a NaN gauge are not stored.
      sample(200, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "0", inf),
      sample(200, "vllm:num_requests_waiting", "", std::nan(""))};
  CHECK(testing::Ok(store->AddTelemetry("r", samples)) == 2);
  const auto series = testing::Ok(ReadServerSeries(*store, "r", 0, 1000));
  CHECK(series.at(telemetry::Series::kKvCache) == SeriesValues{{100, 0.5}});
  CHECK(series.at(telemetry::Series::kGpuUtilization)[0].second == Approx(0.65));
  CHECK(series.at(telemetry::Series::kGpuPower) == SeriesValues{{100, 400}});
  CHECK_FALSE(series.contains(telemetry::Series::kGpuEnergy));
  CHECK_FALSE(series.contains(telemetry::Series::kWaiting));
}

TEST_CASE("a counter's joules are interpolated at the boundaries and survive a reset", "[report]") {
  // 0 s: 100 J, 1 s: 300 J, 2 s: 50 J (reset: 50 J since), 3 s: 250 J.
  const SeriesValues counter = {
      {0, 100}, {1'000'000'000, 300}, {2'000'000'000, 50}, {3'000'000'000, 250}};
  // From 0.5 s to 2.5 s: 100 J (0.5-1) + 50 J (1-2) + 100 J (2-2.5).
  auto whole = CounterEnergy(counter, 500'000'000, 2'500'000'000);
  REQUIRE(whole.has_value());
  CHECK(whole->first == Approx(250));
  CHECK(whole->second == Approx(1.0));
  // A phase that runs on past the last sample is covered in part: 2.5 s to 3 s of 2.5 s to 4 s.
  auto part = CounterEnergy(counter, 2'500'000'000, 4'000'000'000);
  REQUIRE(part.has_value());
  CHECK(part->first == Approx(100));
  CHECK(part->second == Approx(1.0 / 3.0));
  CHECK_FALSE(CounterEnergy(counter, 4'000'000'000, 5'000'000'000).has_value());
  CHECK_FALSE(CounterEnergy({{0, 1}}, 0, 1'000'000'000).has_value());
}

TEST_CASE("power samples are integrated by the trapezoid rule over the phase", "[report]") {
  // 100 W at 0 s, 300 W at 2 s, 300 W at 4 s; integrated from 1 s to 3 s.
  const SeriesValues power = {{0, 100}, {2'000'000'000, 300}, {4'000'000'000, 300}};
  auto energy = IntegratedEnergy(power, 1'000'000'000, 3'000'000'000);
  REQUIRE(energy.has_value());
  // 1 s to 2 s: mean of 200 W and 300 W for 1 s = 250 J; 2 s to 3 s: 300 J.
  CHECK(energy->first == Approx(550));
  CHECK(energy->second == Approx(1.0));
}

TEST_CASE("the energy at the sustained capacity is its rate window's, not the whole level's",
          "[report][telemetry]") {
  // A sweep level from 10 s to 16 s of run time whose rate window is its first 4 s: 100 W in
  // the window, 500 W in the drain after it. The window's 400 J over its 20 answers is 20 J
  // each; the whole level would give (400 + 1000) J over them.
  auto store = testing::Ok(store::Store::OpenInMemory());
  const store::RunInfo run{.id = "r",
                           .scenario_name = "s",
                           .fingerprint = "f",
                           .scenario_json = "{}",
                           .started_unix_ms = 1};
  REQUIRE(store->CreateRun(run).ok());
  constexpr int64_t kS = 1'000'000'000;
  const int64_t phase = testing::Ok(store->AddPhase(
      {.run_id = "r", .ordinal = 1, .stage = "full", .phase = "sweep", .level = 10}));
  REQUIRE(store->FinishPhase(phase, 10 * kS, 16 * kS, store::PhaseStatus::kComplete).ok());
  std::vector<telemetry::TimedSample> samples;
  double joules = 0;
  for (int64_t t = 9 * kS; t <= 17 * kS; t += kS / 10) {
    samples.push_back(
        {.t_ns = t,
         .source = "gpu",
         .sample = {.name = "gpu_energy_joules_total", .labels = {{"gpu", "0"}}, .value = joules}});
    joules += (t < 14 * kS ? 100.0 : 500.0) / 10;
  }
  REQUIRE(testing::Ok(store->AddTelemetry("r", samples)) == 0);
  const json window = {{"counts", "arrivals"}, {"from_s", 0},         {"to_s", 4},
                       {"arrived", 22},        {"completed", 22},     {"answered", 20},
                       {"met_slos", 20},       {"output_tokens", 600}};
  const json findings = {{"schema_version", store::kFindingsSchemaVersion},
                         {"stages",
                          {{{"name", "full"},
                            {"skipped", false},
                            {"steps",
                             {{{"phase", "sweep"},
                               {"phase_id", phase},
                               {"level", 10},
                               {"level_unit", "req/s"},
                               {"requests", {{"completed", 30}}},
                               {"throughput", {{"window_s", 6}}},
                               {"metrics", json::object()}}}},
                            {"capacity",
                             {{"holds_up_to", 10},
                              {"fails_at", 12},
                              {"sustained_rate", 5.5},
                              {"inconclusive", false},
                              {"unit", "req/s"},
                              {"finding", "f"},
                              {"window", window}}}}}}};
  const EnergyFigures energy =
      testing::Ok(ComputeEnergy(*store, run, testing::Ok(store->ListPhases("r")),
                                store::ParseFindings(findings.dump()), std::nullopt));
  REQUIRE(energy.phases.size() == 1);
  const PhaseEnergy& p = energy.phases[0];
  INFO(p.basis);
  CHECK(p.at == "sustained capacity");
  CHECK(p.window_s == Approx(4));
  CHECK(p.completed == 20);
  REQUIRE(p.joules);
  CHECK(*p.joules == Approx(400).epsilon(1e-9));
  REQUIRE(p.per_request);
  CHECK(*p.per_request == Approx(20).epsilon(1e-9));
  REQUIRE(p.per_output_token);
  CHECK(*p.per_output_token == Approx(400.0 / 600).epsilon(1e-9));
}

}  // namespace
}  // namespace stagegate::report
