// `stagegate run` as a process, on tests/testdata/run/run.yaml: a sim that runs two requests at a
// time and sheds what does not fit, so that the sweep finds a limit, overload sheds and latency
// recovers. What it writes, the failure policy, --only-stage, SIGINT, bad input and secrets.

#include <catch2/catch.hpp>

#include <asio.hpp>

#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "http_test_server.h"
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
  for (const char* profile : {"small-sim.yaml", "leak-sim.yaml", "tools-sim.yaml",
                              "hang-on-tool-outage.yaml", "fabricate-tool-success.yaml"})
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

// The requests a running steady phase has measured so far, in the store.
constexpr const char* kRunningSteadyRequests =
    "SELECT COUNT(*) FROM requests JOIN phases ON phases.id = requests.phase_id "
    "WHERE phases.status = 'running' AND phases.phase = 'steady'";

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
  // sweep one level past its first failure (100), then one bisection level (54).
  CHECK(PhasesOf(run["stages"][0]) == std::vector<std::string>{"warmup", "steady"});
  CHECK(PhasesOf(run["stages"][1]) == std::vector<std::string>{"warmup", "steady", "burst",
                                                               "sweep 8", "sweep 100", "sweep 200",
                                                               "sweep 54", "overload", "recovery"});
  const json& retrieval = run["stages"][1];
  CHECK(retrieval["passed"] == true);
  // Arrivals were stamped with the kernel's receive times, and the client's read delay is kept.
  const json& steady = retrieval["steps"][1];
  CHECK(steady["kernel_stamped_reads"].get<int64_t>() > 0);
  CHECK(steady["client_stamped_reads"].get<int64_t>() <= 2);
  CHECK(steady["client_read_delay_p99_us"].is_number());
  CHECK(retrieval["added_over_previous_stage"]["over"] == "bare");
  CHECK(retrieval["capacity"]["holds_up_to"] == 8);
  CHECK(retrieval["capacity"]["fails_at"] == 54);
  CHECK(retrieval["capacity"]["inconclusive"] == false);
  // The sim completes what 8 req/s offers: the sustained rate is the offered one.
  CHECK(retrieval["capacity"]["sustained_rate"].get<double>() == Approx(8).epsilon(0.05));
  const std::string finding = retrieval["capacity"]["finding"];
  CHECK(finding.rfind("sustained ", 0) == 0);
  CHECK(finding.find("; thresholds hold up to 8 req/s and fail at 54 req/s (") !=
        std::string::npos);
  // Each sweep level says how it was judged.
  for (const json& step : retrieval["steps"])
    if (step["phase"] == "sweep")
      CHECK(step["judgement"]["verdict"] == (step["level"] == 8 ? "pass" : "fail"));

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
  CHECK(csv.find("retrieval,sweep,54,req/s,") != std::string::npos);
  const std::string lines = testing::ReadText(dir / "out/requests.jsonl");
  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  store::Database& db = (*store)->TEST_database();
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
  CHECK(ran.out.find("capacity (retrieval): sustained ") != std::string::npos);
  CHECK(ran.out.find("thresholds hold up to 8 req/s and fail at 54 req/s") != std::string::npos);
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
      Run(dir, Scenario(dir, {{"rates: [8, 100, 200]", "rates: [8]"}}), {"--only-stage", "bare"});
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
  // Once the steady phase has measured a request.
  Ran ran = Run(dir, scenario, {},
                testing::SignalWhen(dir / "store.db", kRunningSteadyRequests, 1, SIGINT));
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
  CHECK(Count((*store)->TEST_database(),
              "SELECT COUNT(*) FROM phases WHERE status = 'interrupted'") == 1);
  CHECK(Count((*store)->TEST_database(), "SELECT COUNT(*) FROM requests") ==
        std::count(lines.begin(), lines.end(), '\n'));
}

TEST_CASE("run --resume continues an interrupted run with the phases it did not complete",
          "[cli][run]") {
  testing::TempDir dir;
  const std::string scenario = Scenario(dir);
  // Interrupted in the second stage, once the first stage's two phases have completed.
  Ran first =
      Run(dir, scenario, {},
          testing::SignalWhen(dir / "store.db",
                              "SELECT COUNT(*) FROM phases WHERE status = 'complete'", 2, SIGINT));
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
        std::vector<std::string>{"warmup", "steady", "burst", "sweep 8", "sweep 100", "sweep 200",
                                 "sweep 54", "overload", "recovery"});
  CHECK(after["stages"][1]["capacity"]["fails_at"] == 54);
  CHECK(after["stages"][1]["recovery"]["recovered_after_s"].is_number());

  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  store::Database& db = (*store)->TEST_database();
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
  // In the first stage's steady phase, once it has measured four requests.
  Ran killed = Run(dir, scenario, {},
                   testing::SignalWhen(dir / "store.db", kRunningSteadyRequests, 4, SIGKILL));
  REQUIRE(killed.exit_code == -1);  // killed by the signal: no exit status
  {
    auto store = store::Store::Open(dir / "store.db");
    REQUIRE(store.ok());
    store::Database& db = (*store)->TEST_database();
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
  CHECK(Count((*store)->TEST_database(),
              "SELECT COUNT(*) FROM phases WHERE status = 'superseded'") == 1);
  // The steps taken from the store were not client-checked now, and say nothing of it; those
  // measured again were.
  int checked = 0, unchecked = 0;
  const json run_json = json::parse(testing::ReadText(dir / "out/run.json"));
  for (const json& stage : run_json["stages"])
    for (const json& step : stage["steps"])
      ++(step.contains("client_warnings") ? checked : unchecked);
  CHECK(checked > 0);
  CHECK(unchecked > 0);
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
  CHECK(Count((*store)->TEST_database(),
              "SELECT COUNT(*) FROM fault_results WHERE kind = 'access_denial' AND verdict = "
              "'pass' AND request_id IS NULL") == 2);
  // A row for each request, pointing at it: two attempts and the control, then one attempt.
  CHECK(Count((*store)->TEST_database(),
              "SELECT COUNT(*) FROM fault_results f JOIN requests r ON r.id = f.request_id "
              "WHERE f.kind = 'access_denial' AND f.verdict = 'pass'") == 4);
  CHECK(probes[0]["requests"][0]["denied_by"] == "status");
  CHECK(probes[0]["requests"][2]["part"] == "control");
  CHECK(probes[0]["requests"][2]["canaries"] == json::array({"CANARY-SB26-R8M3"}));
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

// The tool-outage scenario (outage.yaml): three probes through the fault proxy.
std::string OutageScenario(const testing::TempDir& dir, const Edits& edits = {}) {
  return Fixture(dir, "outage.yaml", edits);
}

json OutageRun(const testing::TempDir& dir, const std::string& scenario,
               std::vector<std::string> more = {}) {
  Ran ran = Run(dir, scenario, more);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  return run["faults"]["tool_outage"];
}

TEST_CASE("tool-outage probes pass on a sim that fails clearly and recovers, and are stored",
          "[cli][run][faults]") {
  testing::TempDir dir;
  Ran ran = Run(dir, OutageScenario(dir));
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json probes = json::parse(testing::ReadText(dir / "out/run.json"))["faults"]["tool_outage"];
  REQUIRE(probes.size() == 3);
  const std::vector<std::string> actuators = {"proxy refuse", "proxy status 503", "proxy hang"};
  for (size_t i = 0; i < probes.size(); ++i) {
    INFO(probes[i].dump(2));
    CHECK(probes[i]["verdict"] == "pass");
    CHECK(probes[i]["actuator"] == actuators[i]);
    CHECK(probes[i]["proxy_connections_before"].get<int64_t>() >= 1);
    CHECK(probes[i]["recovered_s"].get<double>() <= 5);
  }
  // Evidence per request: the ticket number before, the acknowledgement during.
  const json& requests = probes[0]["requests"];
  REQUIRE(requests.size() == 4);
  CHECK(requests[0]["part"] == "before");
  CHECK(requests[0]["tool_calls"].is_array());
  CHECK(requests[1]["part"] == "during");
  CHECK(requests[1]["acknowledged"] == "unavailable");
  CHECK(requests[3]["part"] == "after");
  CHECK(requests[3]["worked"] == true);
  CHECK(ran.out.find("tool outage tickets-refused (proxy refuse): pass (before: 1 of 1 worked; "
                     "during: 2 of 2 answered in time, 2 said the tool was unavailable, 0 "
                     "claimed success;") != std::string::npos);

  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  store::Database& db = (*store)->TEST_database();
  CHECK(Count(db,
              "SELECT COUNT(*) FROM fault_results WHERE kind = 'tool_outage' AND "
              "request_id IS NULL AND verdict = 'pass'") == 3);
  // One row a request, each pointing at its request: 4 + 3 + 3.
  CHECK(Count(db,
              "SELECT COUNT(*) FROM fault_results f JOIN requests r ON r.id = f.request_id "
              "WHERE f.kind = 'tool_outage' AND f.verdict = 'pass'") == 10);
  CHECK(Count(db,
              "SELECT COUNT(*) FROM fault_results WHERE step = 'during' AND "
              "json_extract(evidence_json, '$.acknowledged') IS NOT NULL") == 4);
}

TEST_CASE("a tool-outage probe fails on a sim that hangs when its tool is down",
          "[cli][run][faults]") {
  testing::TempDir dir;
  const json probes = OutageRun(
      dir,
      OutageScenario(dir, {{"sim_profile: tools-sim.yaml", "sim_profile: hang-on-tool-outage.yaml"},
                           {"answer_within_ms: 3000", "answer_within_ms: 500"}}));
  REQUIRE(probes.size() == 3);
  for (const json& probe : probes) {
    INFO(probe.dump(2));
    CHECK(probe["verdict"] == "fail");
    REQUIRE_FALSE(probe["reasons"].empty());
    CHECK(probe["reasons"][0].get<std::string>().rfind(
              "during request 1: no answer within 500 ms (timeout", 0) == 0);
  }
  // It recovered: only the outage failed.
  CHECK(probes[0]["recovered_s"].is_number());
}

TEST_CASE("a tool-outage probe fails on a sim that claims success while the tool is down",
          "[cli][run][faults]") {
  testing::TempDir dir;
  const json probes = OutageRun(
      dir, OutageScenario(
               dir, {{"sim_profile: tools-sim.yaml", "sim_profile: fabricate-tool-success.yaml"}}));
  REQUIRE(probes.size() == 3);
  for (const json& probe : probes) {
    INFO(probe.dump(2));
    CHECK(probe["verdict"] == "fail");
    REQUIRE_FALSE(probe["reasons"].empty());
    CHECK(probe["reasons"][0].get<std::string>().find("claims what did not happen: \"INC-") !=
          std::string::npos);
  }
}

TEST_CASE("an interrupted tool-outage probe still restores the tool", "[cli][run][faults]") {
  testing::TempDir dir;
  // The inject command interrupts stagegate itself, as a user's Ctrl-C would mid-probe.
  const std::string marks = dir / "actuator.log";
  const std::string scenario = OutageScenario(
      dir, {{"actuator: {kind: proxy, mode: refuse}",
             "actuator: {kind: command, inject: 'echo inject >> " + marks +
                 "; kill -INT $PPID; sleep 1', restore: 'echo restore $STAGEGATE_PROBE >> " +
                 marks + "'}"}});
  Ran ran = Run(dir, scenario);
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 130);
  CHECK(testing::ReadText(marks) == "inject\nrestore tickets-refused\n");
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  CHECK(run["status"] == "interrupted");
  REQUIRE(run["faults"]["tool_outage"].size() == 1);  // the later probes never started
  CHECK(run["faults"]["tool_outage"][0]["verdict"] == "interrupted");
}

// A port nothing listens on at the moment of asking.
uint16_t FreePort() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

// The sim as a separate application (`stagegate sim`) whose tool calls go to `tool_url`, with its
// own tool service on `tool_port`; `body` runs while it listens on `port`.
void WithExternalSim(uint16_t port, uint16_t tool_port, const std::string& tool_url,
                     const std::function<void()>& body) {
  testing::TempDir sim_dir;
  testing::WriteText(sim_dir / "tools-sim.yaml",
                     testing::ReadText(testing::Testdata("run/tools-sim.yaml")));
  testing::RunStagegate(
      sim_dir,
      {"sim", "--port", std::to_string(port), "--tool-port", std::to_string(tool_port),
       "--tool-url", tool_url, "--profile", sim_dir / "tools-sim.yaml", "--corpus",
       testing::SourcePath("corpus/service-desk")},
      [&](pid_t pid) {
        bool listening = false;
        for (int i = 0; i < 200 && !listening; ++i) {
          asio::io_context io;
          asio::ip::tcp::socket socket(io);
          asio::error_code error;
          socket.connect({asio::ip::make_address("127.0.0.1"), port}, error);
          listening = !error;
          if (!listening) usleep(20000);
        }
        REQUIRE(listening);
        body();
        kill(pid, SIGINT);
      });
}

TEST_CASE("against another application, the fault proxy stands where its tool URL points",
          "[cli][run][faults]") {
  testing::TempDir dir;
  const uint16_t port = FreePort(), tools = FreePort(), proxy = FreePort();
  const std::string target = "http://127.0.0.1:" + std::to_string(port);
  // Every probe's proxy listens where the application's tool URL points.
  const std::string listen = ", listen_port: " + std::to_string(proxy) +
                             ", upstream: \"127.0.0.1:" + std::to_string(tools) + "\"}";
  const Edits through_proxy = {{"mode: refuse}", "mode: refuse" + listen},
                               {"status: 503}", "status: 503" + listen},
                               {"mode: hang}", "mode: hang" + listen}};
  SECTION("its tool URL names the proxy: the outage reaches it") {
    WithExternalSim(port, tools, "http://127.0.0.1:" + std::to_string(proxy), [&] {
      const json probes =
          OutageRun(dir, OutageScenario(dir, through_proxy), {"--target-url", target});
      REQUIRE(probes.size() == 3);
      for (const json& probe : probes) {
        INFO(probe.dump(2));
        CHECK(probe["verdict"] == "pass");
        CHECK(probe["proxy_connections_before"] == 1);
      }
    });
  }
  SECTION("its tool URL goes around the proxy: inconclusive, not pass") {
    WithExternalSim(port, tools, "http://127.0.0.1:" + std::to_string(tools), [&] {
      const json probes =
          OutageRun(dir, OutageScenario(dir, through_proxy), {"--target-url", target});
      REQUIRE(probes.size() == 3);
      INFO(probes[0].dump(2));
      CHECK(probes[0]["verdict"] == "inconclusive");
      CHECK(probes[0]["proxy_connections_before"] == 0);
    });
  }
  SECTION("without listen_port and upstream it refuses to start") {
    Ran ran = Run(dir, OutageScenario(dir), {"--target-url", target});
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find("outage.yaml:38:7: tool-outage probe 'tickets-refused': a proxy actuator "
                       "needs 'listen_port' and 'upstream' when the target is not the built-in "
                       "sim") != std::string::npos);
  }
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
    CHECK(ran.err.find("'rate' must be greater than 0 and at most 100000, got -8") !=
          std::string::npos);
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

TEST_CASE(
    "a scenario's API key is sent once and, echoed back, stored nowhere; nor its URL's "
    "password",
    "[cli][run][redact]") {
  std::atomic<int> count = 0;
  testing::FixedResponseServer server([&count](const std::string& request) {
    std::string echoed;
    for (const std::string& line : Split(request.substr(0, request.find("\r\n\r\n")), '\n'))
      if (line.rfind("Authorization:", 0) == 0) echoed += std::string(Trim(line.substr(14)));
    const json error = {{"error", {{"message", "not valid: " + echoed}}}};
    const json answer = {{"choices",
                          {{{"message", {{"role", "assistant"}, {"content", "key " + echoed}}},
                            {"finish_reason", "stop"}}}}};
    return count++ == 0
               ? testing::HttpResponse("401 Unauthorized", error.dump(), "application/json")
               : testing::HttpResponse("200 OK", answer.dump(), "application/json");
  });
  testing::TempDir dir;
  testing::WriteText(dir / "echo.yaml",
                     "name: echo\nmanifest: {model: m, model_version: \"1\"}\nseed: 1\n"
                     "target:\n  kind: openai\n  base_url: \"http://alice:pw-Zq81url@" +
                         server.base().substr(7) +
                         "\"\n  api_key_env: STAGEGATE_TEST_KEY\n  stream: false\n"
                         "stages:\n  - name: bare\n"
                         "input: {source: synthetic, input_tokens: {mean: 10}, "
                         "output_tokens: {mean: 10}}\n"
                         "phases:\n  steady: {concurrency: 1, requests: 4}\n"
                         "thresholds: {completion_rate: 0.5}\n"
                         "telemetry: {scrape_interval_ms: 0, gpu: \"off\"}\n");
  setenv("STAGEGATE_TEST_KEY", "sk-run-Zq81secret", 1);
  Ran ran = Run(dir, dir / "echo.yaml");
  unsetenv("STAGEGATE_TEST_KEY");
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code != 2);
  REQUIRE(server.requests().size() == 4);
  for (const std::string& request : server.requests()) {
    const std::string head = request.substr(0, request.find("\r\n\r\n"));
    CHECK(head.find("Authorization: Bearer sk-run-Zq81secret") != std::string::npos);
    CHECK(head.find("Authorization:") == head.rfind("Authorization:"));
  }
  const std::string jsonl = testing::ReadText(dir / "out/requests.jsonl");
  CHECK(jsonl.find("\"error\":\"HTTP 401: not valid: Bearer [redacted]\"") != std::string::npos);
  CHECK(jsonl.find("\"answer\":\"key Bearer [redacted]\"") != std::string::npos);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    if (!entry.is_regular_file() || entry.path().filename() == "echo.yaml") continue;
    INFO(entry.path());
    const std::string text = testing::ReadText(entry.path());
    CHECK(text.find("sk-run-Zq81secret") == std::string::npos);
    CHECK(text.find("pw-Zq81url") == std::string::npos);
  }
}

TEST_CASE("persona tokens reach the target but no output of the run", "[cli][run]") {
  testing::TempDir dir;
  const std::string secret = "tok-7f3a9c2e51-do-not-store";
  for (const char* persona : {"EMPLOYEE", "HR_PARTNER", "CONTRACTOR", "IT_ADMIN", "LINE_MANAGER"})
    setenv((std::string("SD_TOKEN_") + persona).c_str(), (secret + "-" + persona).c_str(), 1);
  Ran ran =
      Run(dir, Scenario(dir, {{"headers: {X-Sim-Retrieval: \"on\"}",
                               "headers: {X-Sim-Retrieval: \"on\", X-Sim-Identity: \"on\"}\n"
                               "    persona_credentials: true"},
                              {"capabilities: [retrieval]", "capabilities: [retrieval, identity]"},
                              {"rates: [8, 100, 200]", "rates: [8]"}}));
  for (const char* persona : {"EMPLOYEE", "HR_PARTNER", "CONTRACTOR", "IT_ADMIN", "LINE_MANAGER"})
    unsetenv((std::string("SD_TOKEN_") + persona).c_str());
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  // The sim accepted the tokens: the identity stage answered (it would deny them otherwise).
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  const json& steady = run["stages"][1]["steps"][1];
  CHECK(steady["requests"]["completed"].get<int>() > 0);
  // Restricted tasks were denied, as the corpus expects: they complete their requests in the
  // check, in run.json and in stages.csv alike.
  const int64_t expected = steady["requests"]["expected_denials"];
  CHECK(expected > 0);
  const double measured = steady["checks"].back()["measured"];
  CHECK(steady["checks"].back()["check"] == "completion rate >= 0.99");
  CHECK(measured == Approx(1.0));
  CHECK(steady["throughput"]["completion_rate"].get<double>() == measured);
  const std::string csv = testing::ReadText(dir / "out/stages.csv");
  const size_t row = csv.find("\nretrieval,steady,");
  REQUIRE(row != std::string::npos);
  const std::vector<std::string> cells =
      Split(csv.substr(row + 1, csv.find('\n', row + 1) - row - 1), ',');
  REQUIRE(cells.size() > 16);
  CHECK(cells[6] == "1");                        // completion_rate
  CHECK(cells[16] == std::to_string(expected));  // expected_denials
  for (const std::string& file :
       {dir / "out/run.json", dir / "out/requests.jsonl", dir / "out/stages.csv", dir / "store.db",
        dir / "store.db-wal", dir / "stdout.txt", dir / "stderr.txt"}) {
    INFO(file);
    CHECK(testing::ReadText(file).find(secret) == std::string::npos);
  }
}

}  // namespace
}  // namespace stagegate::cli
