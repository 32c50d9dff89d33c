// Real-time witnesses of the client check (scenario::CheckClient, whose rules the fake-clock tests
// in tests/scenario/client_check_test.cc pin exactly): a run whose client cannot keep up warns on
// the console, in the store and in the report; a run with a comfortable client does not.

#include <sched.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace stagegate {
namespace {

using json = nlohmann::json;

// The reference application in the run's own process (the fast profile: every token at once), a
// steady phase given by `steady`.
std::string Scenario(const std::string& steady) {
  return R"(name: client-check
manifest: {model: sim-assistant, model_version: "test"}
seed: 5
target:
  kind: sim
  sim_profile: fast
  endpoint: chat
  stream: true
  timeouts: {connect_ms: 5000, first_token_ms: 20000, total_ms: 30000}
stages:
  - name: bare
    phases: [steady]
input: {source: synthetic, input_tokens: {mean: 20}, output_tokens: {mean: 256}}
phases:
  steady: )" +
         steady +
         R"(
thresholds:
  completion_rate: 0.5
telemetry: {scrape_interval_ms: 0, gpu: "off"}
)";
}

// `stagegate run` of `scenario`, its whole process on CPU 0 when `pinned` (the spawning thread's
// affinity is what the child starts with, and every thread it makes inherits it).
testing::Ran Run(const testing::TempDir& dir, const std::string& scenario, bool pinned) {
  testing::WriteText(dir / "client.yaml", scenario);
  cpu_set_t before;
  REQUIRE(sched_getaffinity(0, sizeof(before), &before) == 0);
  if (pinned) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
  }
  testing::Ran ran =
      testing::RunStagegate(dir, {"run", dir / "client.yaml", "--out", dir / "out"},
                            [&](pid_t) { sched_setaffinity(0, sizeof(before), &before); });
  return ran;
}

std::vector<std::string> StoredWarnings(const testing::TempDir& dir) {
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  return run["stages"][0]["steps"][0]["client_warnings"].get<std::vector<std::string>>();
}

// 20,000 requests a second of 256-token streams is about 5 million streamed chunks a second,
// several times what one core reads (docs/performance.md: 1.66 million a CPU-second), and here
// that core also serves them.
TEST_CASE("a run whose client cannot keep up says so on the console, in the store and the report",
          "[cli][run][client_check]") {
  testing::TempDir dir;
  const testing::Ran ran =
      Run(dir, Scenario("{rate: 20000, arrival: constant, requests: 4000}"), true);
  INFO(ran.out << ran.err);
  REQUIRE((ran.exit_code == 0 || ran.exit_code == 1));
  CHECK(ran.out.find("client check (bare, steady): ") != std::string::npos);
  const std::vector<std::string> warnings = StoredWarnings(dir);
  REQUIRE(!warnings.empty());
  CHECK(ran.out.find("client check (bare, steady): " + warnings[0]) != std::string::npos);

  const std::string run_id = json::parse(testing::ReadText(dir / "out/run.json"))["run_id"];
  const testing::Ran reported =
      testing::RunStagegate(dir, {"report", run_id, "--out", dir / "report"});
  INFO(reported.err);
  const std::string md = testing::ReadText(dir / "report/report.md");
  CHECK(md.find("Client check: the load generator may have limited 1 of the 1 steps checked") !=
        std::string::npos);
  CHECK(md.find("| bare | steady 20000 req/s | 4000 |") != std::string::npos);
}

// One request at a time, short answers: the client is idle nearly all the time. A closed loop,
// so that nothing here depends on how promptly a busy machine wakes the client for a send (the
// open loop's rules are pinned on a fake clock in tests/scenario/client_check_test.cc).
TEST_CASE("a run with a comfortable client shows no client warning", "[cli][run]") {
  testing::TempDir dir;
  std::string scenario = Scenario("{concurrency: 1, requests: 20}");
  scenario = testing::ReplaceAll(scenario, "mean: 256", "mean: 8");
  const testing::Ran ran = Run(dir, scenario, false);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("client check") == std::string::npos);
  CHECK(StoredWarnings(dir).empty());
  const std::string run_id = json::parse(testing::ReadText(dir / "out/run.json"))["run_id"];
  REQUIRE(testing::RunStagegate(dir, {"report", run_id, "--out", dir / "report"}).exit_code == 0);
  CHECK(testing::ReadText(dir / "report/report.md")
            .find("Client check: the load generator kept up in every step (1 checked)") !=
        std::string::npos);
}

}  // namespace
}  // namespace stagegate
