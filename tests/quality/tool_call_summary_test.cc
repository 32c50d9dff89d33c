// Tool-call correctness in the quality summary (report.json, report.md and report.html take it
// from QualityToJson and QualityLines): shares per stage at rest and under load from known
// records, against a Wilson interval computed here from its formula.

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "quality/summary.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::quality {
namespace {

using json = nlohmann::json;
using testing::Ok;
using testing::RequireOk;

// The Wilson score interval by its formula, z the 0.975 normal quantile.
std::pair<double, double> Wilson(double successes, double trials) {
  const double z = 1.959963984540054, p = successes / trials, n = trials;
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
  return {centre - half, centre + half};
}

std::string Call(const std::string& name, const std::string& arguments) {
  return json::array({{{"index", 0}, {"name", name}, {"arguments", arguments}}}).dump();
}

manifest::Bundle ToolBundle() {
  manifest::Bundle bundle;
  bundle.scenario.stages.resize(2);
  bundle.scenario.stages[0].name = "identity";
  bundle.scenario.stages[1].name = "tools";
  manifest::Corpus corpus;
  manifest::Task open;
  open.id = "open-hr";
  open.checks = {
      {.kind = manifest::CheckKind::kToolCall,
       .text = "open_ticket",
       .arguments = {{"queue", "hr"}},
       .parameters = {{"type", "object"}, {"properties", {{"queue", {{"type", "string"}}}}}}},
      {.kind = manifest::CheckKind::kContains, .text = "ticket"}};
  manifest::Task policy;
  policy.id = "policy";
  policy.checks = {{.kind = manifest::CheckKind::kNoToolCall}};
  corpus.tasks = {open, policy};
  bundle.corpus = corpus;
  return bundle;
}

struct Answer {
  std::string task, calls;
};

// Stage tools at rest: 8 right, a wrong queue, no call. Under load: 5 right, 2 of another type, 1
// not JSON, 1 another tool, 1 without the queue; and the policy task 3 times without a call, once
// with one. Stage identity at rest: 4 answers with no call.
struct ToolRun {
  std::unique_ptr<store::Store> store = Ok(store::Store::OpenInMemory());
  store::RunInfo run{.id = "run-t",
                     .scenario_name = "tools",
                     .scenario_file = "tools.yaml",
                     .fingerprint = "sha256:t",
                     .scenario_json = R"({"name":"tools"})",
                     .started_unix_ms = 1};
  int64_t sequence = 0;

  void Add(const std::string& stage, bool at_rest, const std::vector<Answer>& answers) {
    const int64_t phase = Ok(store->AddPhase({.run_id = run.id,
                                              .ordinal = sequence + 1,
                                              .stage = stage,
                                              .phase = at_rest ? "steady" : "load",
                                              .at_rest = at_rest}));
    std::vector<load::RequestRecord> records;
    std::vector<std::pair<int64_t, int64_t>> sampled;
    for (const Answer& a : answers) {
      load::RequestRecord r;
      r.run_id = run.id;
      r.phase_id = phase;
      r.sequence = ++sequence;
      r.task_id = a.task;
      r.outcome = load::Outcome::kOk;
      r.answer_text = "your ticket";
      r.tool_calls_json = a.calls;
      records.push_back(r);
      sampled.emplace_back(phase, r.sequence);
    }
    RequireOk(store->AddRequests(records));
    RequireOk(store->AddAnswers(run.id, at_rest ? "at_rest" : "under_load", sampled));
  }

  ToolRun() {
    RequireOk(store->CreateRun(run));
    const std::string right = Call("open_ticket", R"({"queue":"hr","summary":"x"})");
    std::vector<Answer> rest(8, {"open-hr", right});
    rest.push_back({"open-hr", Call("open_ticket", R"({"queue":"it"})")});
    rest.push_back({"open-hr", "[]"});
    Add("tools", true, rest);
    std::vector<Answer> load(5, {"open-hr", right});
    load.insert(load.end(), 2, {"open-hr", Call("open_ticket", R"({"queue":["hr"]})")});
    load.push_back({"open-hr", Call("open_ticket", R"({"queue":)")});
    load.push_back({"open-hr", Call("lookup_ticket", R"({"queue":"hr"})")});
    load.push_back({"open-hr", Call("open_ticket", R"({"summary":"x"})")});
    load.insert(load.end(), 3, {"policy", "[]"});
    load.push_back({"policy", Call("lookup_ticket", "{}")});
    Add("tools", false, load);
    Add("identity", true, std::vector<Answer>(4, {"open-hr", "[]"}));
  }
};

void CheckShare(const json& share, int64_t passed, int64_t run, const json& failures) {
  INFO(share.dump());
  CHECK(share["passed"] == passed);
  CHECK(share["run"] == run);
  if (run == 0) {
    CHECK(share["share"].is_null());
    CHECK(share["share_ci95"].is_null());
  } else {
    const auto [low, high] = Wilson(static_cast<double>(passed), static_cast<double>(run));
    CHECK(share["share"].get<double>() == Approx(static_cast<double>(passed) / run).epsilon(1e-12));
    CHECK(share["share_ci95"][0].get<double>() == Approx(low).epsilon(1e-9));
    CHECK(share["share_ci95"][1].get<double>() == Approx(high).epsilon(1e-9));
  }
  CHECK(share["failures"] == failures);
}

TEST_CASE("tool-call correctness per stage at rest and under load, with Wilson intervals",
          "[quality][report][tool_call]") {
  ToolRun t;
  const manifest::Bundle bundle = ToolBundle();
  const QualitySummary s = Ok(SummarizeQuality(*t.store, t.run, &bundle));
  const json tool_calls = QualityToJson(s)["automated_checks"]["tool_calls"];
  INFO(tool_calls.dump(2));
  REQUIRE(tool_calls.size() == 2);
  // The scenario's stage order, not the order the store holds them in.
  CHECK(tool_calls[0]["stage"] == "identity");
  CheckShare(tool_calls[0]["at_rest"], 0, 4, {{"not_called", 4}});
  CheckShare(tool_calls[0]["under_load"], 0, 0, json::object());
  CHECK(tool_calls[1]["stage"] == "tools");
  CheckShare(tool_calls[1]["at_rest"], 8, 10, {{"argument_value", 1}, {"not_called", 1}});
  CheckShare(tool_calls[1]["under_load"], 8, 14,
             {{"argument_type", 2},
              {"missing_argument", 1},
              {"should_not_have_called", 1},
              {"unparsed", 1},
              {"wrong_tool", 1}});
  // The other checks still count among the automated checks, not among the tool calls.
  CHECK(s.automated.by_kind.at("contains") == std::pair<int64_t, int64_t>{24, 24});
  CHECK(s.automated.by_kind.at("tool_call") == std::pair<int64_t, int64_t>{13, 24});

  const std::vector<std::string> lines = QualityLines(s);
  const auto line_of = [&](const std::string& start) {
    for (const std::string& line : lines)
      if (line.starts_with(start)) return line;
    return std::string();
  };
  const auto [low, high] = Wilson(8, 10);
  CHECK(line_of("  tool calls judged exactly, stage tools: ") ==
        "  tool calls judged exactly, stage tools: at rest 8 of 10 (0.8, 95% Wilson interval " +
            FormatNumber(low, 2) + " to " + FormatNumber(high, 2) +
            "; failed: argument_value 1, not_called 1); under load 8 of 14 (0.57, 95% Wilson "
            "interval 0.33 to 0.79; failed: argument_type 2, missing_argument 1, "
            "should_not_have_called 1, unparsed 1, wrong_tool 1)");
  CHECK(line_of("  tool calls judged exactly, stage identity: ") ==
        "  tool calls judged exactly, stage identity: at rest 0 of 4 (0, 95% Wilson interval 0 "
        "to 0.49; failed: not_called 4); under load none run");
}

TEST_CASE("a run without tool_call checks has no tool-call figure",
          "[quality][report][tool_call]") {
  ToolRun t;
  manifest::Bundle bundle = ToolBundle();
  for (manifest::Task& task : bundle.corpus->tasks)
    task.checks = {{.kind = manifest::CheckKind::kContains, .text = "ticket"}};
  const QualitySummary s = Ok(SummarizeQuality(*t.store, t.run, &bundle));
  CHECK(s.automated.tool_calls.empty());
  CHECK(QualityToJson(s)["automated_checks"]["tool_calls"] == json::array());
  for (const std::string& line : QualityLines(s))
    CHECK(line.find("tool calls") == std::string::npos);
}

}  // namespace
}  // namespace stagegate::quality
