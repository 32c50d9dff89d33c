// `stagegate run` as a process, on tests/testdata/run/run.yaml: a sim that runs two requests at a
// time and sheds what does not fit, so that the sweep finds a limit, overload sheds and latency
// recovers. What it writes, the failure policy, --only-stage, SIGINT, bad input and secrets.

#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "store/sqlite.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

using Edits = std::vector<std::pair<std::string, std::string>>;

// The scenario tests/testdata/run/`name`, edited by `edits` (from, to), written into `dir` beside
// the sim profiles it may name.
std::string Fixture(const testing::TempDir& dir, const std::string& name, const Edits& edits) {
  std::string text = testing::ReadText(testing::Testdata("run/" + name));
  for (const auto& [from, to] : edits) {
    REQUIRE(text.find(from) != std::string::npos);
    text = testing::ReplaceAll(text, from, to);
  }
  text = testing::ReplaceAll(text, "../../../", testing::SourcePath(""));
  for (const char* profile : {"small-sim.yaml", "leak-sim.yaml"})
    testing::WriteText(dir / profile,
                       testing::ReadText(testing::Testdata(std::string("run/") + profile)));
  testing::WriteText(dir / name, text);
  return dir / name;
}

// The stages-and-phases scenario (run.yaml), on a sim that sheds what it cannot run at once.
std::string Scenario(const testing::TempDir& dir, const Edits& edits = {}) {
  return Fixture(dir, "run.yaml", edits);
}

Ran Run(const testing::TempDir& dir, const std::string& scenario,
        std::vector<std::string> more = {},
        const std::function<void(pid_t)>& on_started = nullptr) {
  std::vector<std::string> args = {"--quiet", "run", scenario, "--out", dir / "out"};
  args.insert(args.end(), more.begin(), more.end());
  return testing::RunStagegate(dir, args, on_started);
}

int64_t Count(store::Database& db, const std::string& sql) {
  Result<store::Statement> query = store::Statement::Prepare(db, sql);
  REQUIRE(query.ok());
  REQUIRE(query->Step());
  return query->Int(0);
}

std::vector<std::string> PhasesOf(const json& stage) {
  std::vector<std::string> phases;
  for (const json& step : stage["steps"])
    phases.push_back(step["phase"].get<std::string>() +
                     (step["phase"] == "sweep"
                          ? " " + std::to_string(static_cast<int>(step["level"].get<double>()))
                          : ""));
  return phases;
}

TEST_CASE("run goes through every stage and phase and writes its findings", "[cli][run]") {
  testing::TempDir dir;
  Ran ran = Run(dir, Scenario(dir));
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(run["schema_version"] == 1);
  CHECK(run["status"] == "complete");
  CHECK(run["corpus_version"] == "2026.11.2");
  REQUIRE(run["stages"].size() == 2);

  // bare runs the phases it lists; retrieval, listing none, runs all of them in order, the
  // sweep one level past its first failure (100), then one bisection level (51).
  CHECK(PhasesOf(run["stages"][0]) == std::vector<std::string>{"warmup", "steady"});
  CHECK(PhasesOf(run["stages"][1]) == std::vector<std::string>{"warmup", "steady", "burst",
                                                               "sweep 2", "sweep 100", "sweep 200",
                                                               "sweep 51", "overload", "recovery"});
  const json& retrieval = run["stages"][1];
  CHECK(retrieval["passed"] == true);
  CHECK(retrieval["added_over_previous_stage"]["over"] == "bare");
  CHECK(retrieval["capacity"]["holds_up_to"] == 2);
  CHECK(retrieval["capacity"]["fails_at"] == 51);
  CHECK(retrieval["capacity"]["finding"] == "thresholds hold up to 2 req/s and fail at 51 req/s");

  const json& overload = retrieval["overload"];
  CHECK(overload["shed"].get<int>() > 0);
  CHECK(overload["shed_with_retry_after"] == overload["shed"]);
  CHECK(overload["failed_statuses"]["429"] == overload["shed"]);
  CHECK(overload["hung_until_timeout"] == 0);
  CHECK(overload["passed"] == true);
  const json& recovery = retrieval["recovery"];
  REQUIRE(recovery["recovered_after_s"].is_number());
  CHECK(recovery["recovered_after_s"].get<double>() <= 3);
  CHECK(recovery["passed"] == true);

  CHECK(run["quality_samples"]["at_rest"] == 3);
  CHECK(run["quality_samples"]["under_load"] == 2);
  REQUIRE(run["telemetry"].size() == 1);
  CHECK(run["telemetry"][0]["source"] == "metrics");
  CHECK(run["telemetry"][0]["samples"].get<int>() > 0);
  CHECK(run["telemetry"][0]["failures"] == 0);

  // One CSV row a step, one JSON line a request, and the same in the store.
  const std::string csv = testing::ReadText(dir / "out/stages.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 + 9);
  CHECK(csv.find("retrieval,sweep,51,req/s,") != std::string::npos);
  const std::string lines = testing::ReadText(dir / "out/requests.jsonl");
  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  store::Database& db = (*store)->database();
  const std::string id = run["run_id"];
  CHECK(Count(db, "SELECT COUNT(*) FROM requests WHERE run_id = '" + id + "'") ==
        std::count(lines.begin(), lines.end(), '\n'));
  // Every step, and the samples at rest.
  CHECK(Count(db, "SELECT COUNT(*) FROM phases WHERE run_id = '" + id + "'") == 2 + 9 + 1);
  CHECK(Count(db, "SELECT COUNT(*) FROM phases WHERE status != 'complete'") == 0);
  CHECK(Count(db, "SELECT COUNT(*) FROM answers WHERE condition = 'at_rest'") == 3);
  CHECK(Count(db, "SELECT COUNT(*) FROM answers WHERE condition = 'under_load'") == 2);
  // The answers under load come from the final stage's steady phase.
  CHECK(Count(db,
              "SELECT COUNT(*) FROM answers JOIN requests ON requests.id = answers.request_id "
              "JOIN phases ON phases.id = requests.phase_id WHERE condition = 'under_load' AND "
              "phases.stage = 'retrieval' AND phases.phase = 'steady'") == 2);
  CHECK(Count(db, "SELECT COUNT(*) FROM telemetry_samples WHERE run_id = '" + id + "'") ==
        run["telemetry"][0]["samples"].get<int64_t>());
  auto runs = (*store)->ListRuns();
  REQUIRE(runs.ok());
  CHECK((*runs)[0].status == store::RunStatus::kComplete);
  CHECK(ran.out.find("capacity (retrieval): thresholds hold up to 2 req/s and fail at 51 req/s") !=
        std::string::npos);
  CHECK(ran.out.find("recovery (retrieval): recovered ") != std::string::npos);
}

TEST_CASE("a stage that fails its thresholds stops the run when the policy says stop",
          "[cli][run]") {
  testing::TempDir dir;
  Ran ran = Run(dir, Scenario(dir, {{"max_ms: 2000", "max_ms: 0.001"},
                                    {"on_stage_failure: continue", "on_stage_failure: stop"}}));
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(run["stages"][0]["passed"] == false);
  CHECK(run["stages"][0]["steps"][1]["checks"][0]["check"] == "ttft p95 <= 0.001 ms");
  CHECK(run["stages"][0]["steps"][1]["checks"][0]["passed"] == false);
  CHECK(run["stages"][1]["skipped"] == true);
  CHECK(run["stages"][1]["steps"].empty());
  CHECK(run["notes"].dump().find("failure policy stops the run") != std::string::npos);
}

TEST_CASE("run --only-stage runs one stage and marks the others skipped", "[cli][run]") {
  testing::TempDir dir;
  Ran ran =
      Run(dir, Scenario(dir, {{"rates: [2, 100, 200]", "rates: [2]"}}), {"--only-stage", "bare"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(run["stages"][0]["skipped"] == false);
  CHECK(PhasesOf(run["stages"][0]) == std::vector<std::string>{"warmup", "steady"});
  CHECK(run["stages"][1]["skipped"] == true);
  // The samples at rest come from the stage that ran.
  CHECK(run["quality_samples"]["at_rest"] == 3);
}

TEST_CASE("run sends synthetic prompts of the scenario's lengths instead of the corpus",
          "[cli][run]") {
  testing::TempDir dir;
  Ran ran = Run(
      dir,
      Scenario(dir, {{"input:\n  source: corpus",
                      "input:\n  source: synthetic\n  input_tokens: {mean: 40}\n"
                      "  output_tokens: {mean: 6}"},
                     {"sampling: {temperature: 0, max_tokens: 16}", "sampling: {temperature: 0}"}}),
      {"--only-stage", "bare"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
  int64_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    const json r = json::parse(line);
    INFO(line.substr(0, 300));
    CHECK(r["input"]["synthetic_input_tokens"] == 40);
    CHECK(r["input"]["requested_output_tokens"] == 6);
    CHECK_FALSE(r["input"].contains("task_id"));
    if (r["outcome"] == "ok") CHECK(r["tokens"]["output"] == 6);
  }
  CHECK(count == 2 + 4);  // warmup and steady: synthetic prompts have no answers to review
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(run["quality_samples"]["at_rest"] == 0);
  CHECK(run["notes"].dump().find("no quality samples: the input is synthetic") !=
        std::string::npos);
}

TEST_CASE("SIGINT ends run with exit 130, marked interrupted, keeping what was measured",
          "[cli][run]") {
  testing::TempDir dir;
  const std::string scenario =
      Scenario(dir, {{"steady:   {rate: 4, arrival: constant, duration_s: 1}",
                      "steady:   {rate: 4, arrival: constant, duration_s: 60, grace_s: 1}"}});
  Ran ran = Run(dir, scenario, {}, [](pid_t pid) {
    usleep(2'000'000);
    kill(pid, SIGINT);
  });
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 130);
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(run["status"] == "interrupted");
  REQUIRE(run["stages"][0]["steps"].size() == 2);
  CHECK(run["stages"][0]["steps"][1]["interrupted"] == true);
  CHECK(run["stages"][1]["skipped"] == true);
  const std::string lines = testing::ReadText(dir / "out/requests.jsonl");
  CHECK(std::count(lines.begin(), lines.end(), '\n') > 2);
  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  auto runs = (*store)->ListRuns();
  REQUIRE(runs.ok());
  CHECK((*runs)[0].status == store::RunStatus::kInterrupted);
  CHECK(Count((*store)->database(), "SELECT COUNT(*) FROM phases WHERE status = 'interrupted'") ==
        1);
  CHECK(Count((*store)->database(), "SELECT COUNT(*) FROM requests") ==
        std::count(lines.begin(), lines.end(), '\n'));
}

TEST_CASE("run --resume continues an interrupted run with the phases it did not complete",
          "[cli][run]") {
  testing::TempDir dir;
  const std::string scenario = Scenario(dir);
  // Interrupted in the second stage: the first has completed by then (about 1.5 s).
  Ran first = Run(dir, scenario, {}, [](pid_t pid) {
    usleep(4'000'000);
    kill(pid, SIGINT);
  });
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 130);
  const json before = json::parse(testing::ReadText(dir / "out/run.json"));
  REQUIRE(before["status"] == "interrupted");
  const std::string id = before["run_id"];
  const int64_t bare_steady = before["stages"][0]["steps"][1]["phase_id"];

  Ran second = testing::RunStagegate(dir, {"--quiet", "run", "--resume", id, "--out", dir / "out"});
  INFO(second.out << second.err);
  REQUIRE(second.exit_code == 0);
  const json after = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(after["run_id"] == id);
  CHECK(after["status"] == "complete");
  // The first stage was not measured again: the same phase, from the store.
  CHECK(after["stages"][0]["steps"][1]["phase_id"] == bare_steady);
  CHECK(PhasesOf(after["stages"][1]) ==
        std::vector<std::string>{"warmup", "steady", "burst", "sweep 2", "sweep 100", "sweep 200",
                                 "sweep 51", "overload", "recovery"});
  CHECK(after["stages"][1]["capacity"]["fails_at"] == 51);
  CHECK(after["stages"][1]["recovery"]["recovered_after_s"].is_number());

  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  store::Database& db = (*store)->database();
  // What the interruption cut short is kept, marked superseded; nothing is left interrupted.
  CHECK(Count(db, "SELECT COUNT(*) FROM phases WHERE status = 'interrupted'") == 0);
  CHECK(Count(db, "SELECT COUNT(*) FROM phases WHERE status = 'superseded'") <= 2);
  CHECK(Count(db, "SELECT COUNT(*) FROM phases WHERE status = 'complete'") == 2 + 9 + 1);
  auto runs = (*store)->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  CHECK((*runs)[0].status == store::RunStatus::kComplete);
  // requests.jsonl holds the requests of the complete phases, old and new.
  const std::string lines = testing::ReadText(dir / "out/requests.jsonl");
  CHECK(Count(db,
              "SELECT COUNT(*) FROM requests JOIN phases ON phases.id = requests.phase_id "
              "WHERE phases.status = 'complete'") == std::count(lines.begin(), lines.end(), '\n'));

  // A complete run has nothing to resume.
  Ran third = testing::RunStagegate(dir, {"--quiet", "run", "--resume", id});
  CHECK(third.exit_code == 2);
  CHECK(third.err.find("is complete: nothing to resume") != std::string::npos);
}

TEST_CASE("a killed run leaves a consistent store with what finished, and can be resumed",
          "[cli][run]") {
  testing::TempDir dir;
  const std::string scenario =
      Scenario(dir, {{"steady:   {rate: 4, arrival: constant, duration_s: 1}",
                      "steady:   {rate: 4, arrival: constant, duration_s: 4}"},
                     {"  - name: retrieval\n    capabilities: [retrieval]",
                      "  - name: retrieval\n    phases: [warmup]\n    capabilities: [retrieval]"}});
  Ran killed = Run(dir, scenario, {}, [](pid_t pid) {
    usleep(3'000'000);  // in the first stage's steady phase (warmup takes about 0.2 s)
    kill(pid, SIGKILL);
  });
  REQUIRE(killed.exit_code == -1);  // killed by the signal: no exit status
  {
    auto store = store::Store::Open(dir / "store.db");
    REQUIRE(store.ok());
    store::Database& db = (*store)->database();
    Result<store::Statement> check = store::Statement::Prepare(db, "PRAGMA integrity_check");
    REQUIRE(check.ok());
    REQUIRE(check->Step());
    CHECK(check->Text(0) == "ok");
    // The steady phase was running: what had finished of it is in the store already.
    CHECK(Count(db, "SELECT COUNT(*) FROM phases WHERE status = 'running'") == 1);
    CHECK(Count(db,
                "SELECT COUNT(*) FROM requests JOIN phases ON phases.id = requests.phase_id "
                "WHERE phases.status = 'running'") >= 4);
    // Telemetry scraped before the phase began is stored too.
    CHECK(Count(db, "SELECT COUNT(*) FROM telemetry_samples") > 0);
    auto runs = (*store)->ListRuns();
    REQUIRE(runs.ok());
    REQUIRE(runs->size() == 1);
    CHECK((*runs)[0].status == store::RunStatus::kRunning);
  }
  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  const std::string id = (*(*store)->ListRuns())[0].id;
  Ran resumed =
      testing::RunStagegate(dir, {"--quiet", "run", "--resume", id, "--out", dir / "out"});
  INFO(resumed.out << resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(Count((*store)->database(), "SELECT COUNT(*) FROM phases WHERE status = 'superseded'") ==
        1);
}

// The access-denial scenario (denial.yaml).
std::string DenialScenario(const testing::TempDir& dir, const Edits& edits = {}) {
  return Fixture(dir, "denial.yaml", edits);
}

json DenialRun(const testing::TempDir& dir, const std::string& scenario) {
  Ran ran = Run(dir, scenario);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  REQUIRE(run["faults"]["access_denial"].size() == 2);
  return run["faults"]["access_denial"];
}

TEST_CASE("access-denial probes pass on a sim that denies, and the store keeps their results",
          "[cli][run][faults]") {
  testing::TempDir dir;
  const json probes = DenialRun(dir, DenialScenario(dir));
  CHECK(probes[0]["probe"] == "contractor-reads-salary-bands");
  CHECK(probes[0]["verdict"] == "pass");
  CHECK(probes[0]["attempts"] == 2);
  CHECK(probes[0]["denied"] == 2);
  CHECK(probes[0]["positive_control_saw_canary"] == true);
  CHECK(probes[1]["probe"] == "no-credentials");
  CHECK(probes[1]["verdict"] == "pass");
  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  CHECK(Count((*store)->database(),
              "SELECT COUNT(*) FROM fault_results WHERE kind = 'access_denial' AND verdict = "
              "'pass'") == 2);
}

TEST_CASE("an access-denial probe fails on a sim that leaks canaries", "[cli][run][faults]") {
  testing::TempDir dir;
  const json probes =
      DenialRun(dir, DenialScenario(dir, {{"sim_profile: fast", "sim_profile: leak-sim.yaml"}}));
  CHECK(probes[0]["verdict"] == "fail");
  REQUIRE_FALSE(probes[0]["leaks"].empty());
  CHECK(probes[0]["leaks"][0] == "CANARY-SB26-R8M3 in the answer of attempt 1");
}

TEST_CASE("a positive control that cannot see the canary makes the probe inconclusive",
          "[cli][run][faults]") {
  testing::TempDir dir;
  const json probes = DenialRun(
      dir, DenialScenario(dir, {{"positive_control: hr-partner", "positive_control: employee"}}));
  CHECK(probes[0]["verdict"] == "inconclusive");
  CHECK(probes[0]["positive_control_saw_canary"] == false);
}

TEST_CASE("run refuses bad input before sending anything", "[cli][run]") {
  testing::TempDir dir;
  SECTION("an unknown stage") {
    Ran ran = Run(dir, Scenario(dir), {"--only-stage", "tools"});
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find("--only-stage: the scenario has no stage 'tools'") != std::string::npos);
  }
  SECTION("a broken scenario names file, line and column") {
    Ran ran = Run(dir, Scenario(dir, {{"rate: 8, arrival", "rate: -8, arrival"}}));
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find("run.yaml:") != std::string::npos);
    CHECK(ran.err.find("'rate' must be greater than 0, got -8") != std::string::npos);
  }
  SECTION("persona credentials against a real target need their variables") {
    unsetenv("SD_TOKEN_EMPLOYEE");
    Ran ran =
        Run(dir,
            Scenario(dir, {{"kind: sim\n  sim_profile: small-sim.yaml",
                            "kind: openai\n  base_url: http://127.0.0.1:9"},
                           {"headers: {X-Sim-Retrieval: \"on\"}",
                            "headers: {X-Sim-Retrieval: \"on\"}\n    persona_credentials: true"}}));
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find("sends persona credentials, but these variables are unset: "
                       "SD_TOKEN_") != std::string::npos);
  }
  // Nothing was run: no run in the store.
  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  auto runs = (*store)->ListRuns();
  REQUIRE(runs.ok());
  CHECK(runs->empty());
}

TEST_CASE("persona tokens reach the target but no output of the run", "[cli][run]") {
  testing::TempDir dir;
  const std::string secret = "tok-7f3a9c2e51-do-not-store";
  for (const char* persona : {"EMPLOYEE", "HR_PARTNER", "CONTRACTOR", "IT_ADMIN", "LINE_MANAGER"})
    setenv((std::string("SD_TOKEN_") + persona).c_str(), (secret + "-" + persona).c_str(), 1);
  Ran ran = Run(dir, Scenario(dir, {{"headers: {X-Sim-Retrieval: \"on\"}",
                                     "headers: {X-Sim-Retrieval: \"on\", X-Sim-Identity: \"on\"}\n"
                                     "    persona_credentials: true"},
                                    {"rates: [2, 100, 200]", "rates: [2]"}}));
  for (const char* persona : {"EMPLOYEE", "HR_PARTNER", "CONTRACTOR", "IT_ADMIN", "LINE_MANAGER"})
    unsetenv((std::string("SD_TOKEN_") + persona).c_str());
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  // The sim accepted the tokens: the identity stage answered (it would deny them otherwise).
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(run["stages"][1]["steps"][1]["requests"]["completed"].get<int>() > 0);
  for (const std::string& file :
       {dir / "out/run.json", dir / "out/requests.jsonl", dir / "out/stages.csv", dir / "store.db",
        dir / "store.db-wal", dir / "stdout.txt", dir / "stderr.txt"}) {
    INFO(file);
    CHECK(testing::ReadText(file).find(secret) == std::string::npos);
  }
}

}  // namespace
}  // namespace stagegate::cli
