// Thresholds per kind of task: a scenario whose scopes judge the requests of one corpus category
// each. On the sim, one scope passes, one fails and one has too few requests to judge; the
// report and JUnit show each, and `report --gate` exits 1 for the one that failed.

#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "manifest/corpus.h"
#include "scenario/findings.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// The scenario-wide limits hold easily; the scope "policy questions" asks for an end-to-end p95
// no request can meet (a microsecond); "restricted" needs more requests than the phase sends.
constexpr const char* kScenario = R"(name: scopes-test
manifest: {model: sim-assistant, model_version: "test", hardware: test, serving_stack: sim}
seed: 5
corpus: SRC/corpus/service-desk
target:
  kind: sim
  sim_profile: SRC/tests/testdata/run/report-sim.yaml
  endpoint: chat
  stream: true
  timeouts: {connect_ms: 2000, first_token_ms: 5000, total_ms: 10000}
stages:
  - name: full
    capabilities: [retrieval, identity, tools]
    headers: {X-Sim-Retrieval: "on", X-Sim-Identity: "on", X-Sim-Tools: "on"}
    persona_credentials: true
    tools: true
    phases: [warmup, steady]
input: {source: corpus}
phases:
  warmup: {concurrency: 1, requests: 2}
  steady: {rate: 10, arrival: constant, duration_s: 3}
thresholds:
  latency:
    - {metric: ttft, percentile: 95, max_ms: 5000}
  completion_rate: 0.5
  scopes:
    - category: action
      latency: [{metric: ttft, percentile: 95, max_ms: 5000}]
      min_requests: 3
    - name: policy questions
      category: policy
      latency: [{metric: e2e, percentile: 95, max_ms: 0.001}]
      min_requests: 3
    - {category: restricted, completion_rate: 0.5, min_requests: 1000}
telemetry: {scrape_interval_ms: 0, gpu: off}
slice_s: 1
)";

// The steady phase's requests in requests.jsonl, counted by their task's category.
std::map<std::string, int64_t> SteadyRequestsByCategory(const testing::TempDir& dir,
                                                        int64_t steady_phase_id) {
  manifest::Diagnostics diagnostics;
  const manifest::Corpus corpus =
      manifest::ReadCorpus(testing::SourcePath("corpus/service-desk"), diagnostics);
  REQUIRE(diagnostics.size() == 0);
  std::map<std::string, int64_t> counts;
  std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const json record = json::parse(line);
    if (record["phase_id"] != steady_phase_id || record.value("warmup", false)) continue;
    const manifest::Task* task = corpus.FindTask(record["input"]["task_id"]);
    REQUIRE(task != nullptr);
    ++counts[task->category];
  }
  return counts;
}

TEST_CASE("threshold scopes: one passes, one fails, one is pending, and the gate says not ready",
          "[cli][report]") {
  testing::TempDir dir;
  testing::WriteText(dir / "scopes.yaml",
                     testing::ReplaceAll(kScenario, "SRC/", testing::SourcePath("")));
  Ran validated = testing::RunStagegate(dir, {"validate", dir / "scopes.yaml"});
  INFO(validated.out << validated.err);
  REQUIRE(validated.exit_code == 0);
  // The console wraps long lines: compare with every run of blanks as one space.
  const auto words = [](const std::string& text) {
    std::istringstream in(text);
    std::string out, word;
    while (in >> word)
      out += word + " ";
    return out;
  };
  CHECK(words(validated.out)
            .find("scope policy questions (category policy, pending below 3 requests): e2e p95 "
                  "<= 0.001 ms; completion >= 50% ") != std::string::npos);

  Ran ran =
      testing::RunStagegate(dir, {"--quiet", "run", dir / "scopes.yaml", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  const json& steady = run["stages"][0]["steps"][1];
  REQUIRE(steady["phase"] == "steady");
  std::map<std::string, json> scoped;
  for (const json& check : steady["checks"])
    if (check.contains("scope")) scoped[check["check"]] = check;
  REQUIRE(scoped.size() == 5);  // two for action, two for policy, one for restricted

  // Each scope counts the requests of its own category, as requests.jsonl has them.
  const std::map<std::string, int64_t> by_category =
      SteadyRequestsByCategory(dir, steady["phase_id"]);
  const json& action = scoped["scope action: ttft p95 <= 5000 ms"];
  const json& policy = scoped["scope policy questions: e2e p95 <= 0.001 ms"];
  const json& restricted = scoped["scope restricted: completion rate >= 0.5"];
  CHECK(action["requests"] == by_category.at("action"));
  CHECK(policy["requests"] == by_category.at("policy"));
  CHECK(restricted["requests"] == by_category.at("restricted"));
  CHECK(action["requests"].get<int64_t>() >= 3);
  CHECK(policy["requests"].get<int64_t>() >= 3);
  CHECK(action["passed"] == true);
  CHECK(action["pending"] == false);
  CHECK(policy["passed"] == false);
  CHECK(policy["pending"] == false);
  CHECK(policy["measured"].get<double>() > 0.001);
  CHECK(restricted["pending"] == true);
  CHECK(restricted["passed"] == false);
  // The scenario-wide check judged every request and passed.
  CHECK(steady["checks"][0]["check"] == "ttft p95 <= 5000 ms");
  CHECK(steady["checks"][0]["passed"] == true);
  CHECK(steady["requests"]["offered"].get<int64_t>() > policy["requests"].get<int64_t>());

  // slice_s: the steady phase's figures second by second, every request in one slice.
  REQUIRE(steady["slices"].size() >= 3);
  int64_t sliced = 0;
  for (const json& slice : steady["slices"])
    sliced += slice["requests"]["offered"].get<int64_t>();
  CHECK(sliced == steady["requests"]["offered"]);
  CHECK(steady["slices"][1]["start_s"] == 1.0);
  // How the figures are cut is not part of what was measured: the same fingerprint without it.
  testing::WriteText(
      dir / "unsliced.yaml",
      testing::ReplaceAll(testing::ReadText(dir / "scopes.yaml"), "slice_s: 1\n", ""));
  Ran unsliced = testing::RunStagegate(dir, {"validate", dir / "unsliced.yaml"});
  REQUIRE(unsliced.exit_code == 0);
  CHECK(words(unsliced.out).find(run["fingerprint"].get<std::string>()) != std::string::npos);

  Ran report =
      testing::RunStagegate(dir, {"report", run["run_id"], "--out", dir / "report", "--gate"});
  INFO(report.out << report.err);
  CHECK(report.exit_code == 1);
  const json r = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(r["verdict"] == "not ready");
  std::map<std::string, std::string> status;
  for (const json& check : r["checks"])
    status[check["name"]] = check["status"];
  CHECK(status["full steady: ttft p95 <= 5000 ms"] == "pass");
  CHECK(status["full steady: scope action: ttft p95 <= 5000 ms"] == "pass");
  CHECK(status["full steady: scope policy questions: e2e p95 <= 0.001 ms"] == "fail");
  CHECK(status["full steady: scope restricted: completion rate >= 0.5"] == "pending");
  REQUIRE(r["verdict_reasons"].size() >= 1);
  CHECK(r["verdict_reasons"][0].get<std::string>().starts_with(
      "responsiveness: full steady: scope policy questions: e2e p95 <= 0.001 ms (measured "));
  REQUIRE(r["scopes"].size() == 5);
  std::map<std::string, std::string> rows;
  for (const json& row : r["scopes"])
    rows[row["scope"].get<std::string>() + " / " + row["check"].get<std::string>()] = row["status"];
  CHECK(rows["action / ttft p95 <= 5000 ms"] == "pass");
  CHECK(rows["policy questions / e2e p95 <= 0.001 ms"] == "fail");
  CHECK(rows["restricted / completion rate >= 0.5"] == "pending");

  const std::string md = testing::ReadText(dir / "report/report.md");
  CHECK(md.find("### Thresholds by kind of task (final stage)") != std::string::npos);
  CHECK(md.find("| restricted | steady | " + std::to_string(by_category.at("restricted")) +
                " | completion rate &gt;= 0.5 | 1 | 0.5 | pending |") != std::string::npos);
  const std::string junit = testing::ReadText(dir / "report/report.junit.xml");
  CHECK(
      junit.find("name=\"full steady: scope policy questions: e2e p95 &lt;= 0.001 ms\"><failure") !=
      std::string::npos);
  CHECK(junit.find("name=\"full steady: scope action: ttft p95 &lt;= 5000 ms\"></testcase>") !=
        std::string::npos);
  CHECK(junit.find("name=\"full steady: scope restricted: completion rate &gt;= 0.5\"><skipped") !=
        std::string::npos);
}

TEST_CASE("a scope selects its tasks by category or by tag", "[scenario]") {
  manifest::Corpus corpus;
  corpus.tasks.push_back({.id = "reset", .category = "account", .tags = {"short", "action"}});
  corpus.tasks.push_back({.id = "bands", .category = "policy", .tags = {"long"}});
  corpus.tasks.push_back({.id = "vpn", .category = "action", .tags = {"short"}});
  CHECK(scenario::ScopeTasks({.category = "action"}, corpus) == std::set<std::string>{"vpn"});
  CHECK(scenario::ScopeTasks({.tag = "action"}, corpus) == std::set<std::string>{"reset"});
  CHECK(scenario::ScopeTasks({.tag = "short"}, corpus) == std::set<std::string>{"reset", "vpn"});
  CHECK(scenario::ScopeTasks({.tag = "none"}, corpus).empty());
}

}  // namespace
}  // namespace stagegate::cli
