// The per-task gate rules through `stagegate report --gate` and `quality`, on runs of
// tests/testdata/run/report.yaml against a scripted application on a fake clock, with a copy of
// the service-desk corpus a test may mark tasks `required: true` in.

#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "invoke.h"
#include "reviewers.h"
#include "scenario/runner.h"
#include "scenario/scripted_app.h"
#include "store/sqlite.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// report.yaml in `dir` (without the tool-outage probe, whose proxy needs an application on a
// socket), on a copy of the service-desk corpus in dir/corpus, with `edits` to the scenario.
void WriteScenario(const testing::TempDir& dir,
                   const std::vector<std::pair<std::string, std::string>>& edits) {
  namespace fs = std::filesystem;
  if (!fs::exists(dir / "corpus"))
    fs::copy(testing::SourcePath("corpus/service-desk"), dir / "corpus",
             fs::copy_options::recursive);
  std::string text = testing::ReadText(testing::Testdata("run/report.yaml"));
  text = testing::ReplaceAll(text, "../../../corpus/service-desk", dir / "corpus");
  text = testing::ReplaceAll(text, "../../../", testing::SourcePath(""));
  const size_t probe = text.find("  tool_outage:\n");
  const size_t after = text.find("on_stage_failure:", probe);
  REQUIRE(after != std::string::npos);
  text.erase(probe, after - probe);
  for (const auto& [from, to] : edits) {
    REQUIRE(text.find(from) != std::string::npos);
    text = testing::ReplaceAll(text, from, to);
  }
  testing::WriteText(dir / "report.yaml", text);
  testing::WriteText(dir / "report-sim.yaml",
                     testing::ReadText(testing::Testdata("run/report-sim.yaml")));
}

// Marks the task `id` of the corpus copy in dir/corpus `required: true`.
void Require(const testing::TempDir& dir, const std::string& file, const std::string& id) {
  const std::string path = dir / ("corpus/tasks/" + file);
  const std::string text = testing::ReadText(path);
  REQUIRE(text.find("- id: " + id + "\n") != std::string::npos);
  testing::WriteText(path, testing::ReplaceAll(text, "- id: " + id + "\n",
                                               "- id: " + id + "\n  required: true\n"));
}

// A run of the scenario in `dir` against `app`, in this process on a fake clock.
std::string ScriptedRun(const testing::TempDir& dir, testing::ScriptedApp app) {
  FakeClock clock;
  const scenario::RunSeam seam = scenario::RunSeam::Scripted(clock, app.Script());
  const Invocation ran =
      Invoke({"--quiet", "--db", dir / "store.db", "run", dir / "report.yaml", "--out", dir / "out",
              "--target-url", "http://scripted.invalid", "--workers", "1"},
             &seam);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  return json::parse(testing::ReadText(dir / "out/run.json"))["run_id"];
}

Ran Gate(const testing::TempDir& dir, const std::string& run) {
  return testing::RunStagegate(dir, {"report", run, "--out", dir / ("report-" + run), "--gate"});
}

json ReportJson(const testing::TempDir& dir, const std::string& run) {
  return json::parse(testing::ReadText(dir / ("report-" + run + "/report.json")));
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The tasks the run answered in the phases its answers were sampled from, read from the store
// apart from the code under test.
std::set<std::string> CoveredTasks(const testing::TempDir& dir, const std::string& run) {
  auto db = store::Database::Open(dir / "store.db");
  REQUIRE(db.ok());
  auto q = store::Statement::Prepare(
      **db,
      "SELECT DISTINCT task_id FROM requests WHERE run_id = ? AND outcome IN ('ok', 'denied') "
      "AND COALESCE(turn, 0) = 0 AND phase_id IN (SELECT r.phase_id FROM answers a JOIN "
      "requests r ON r.id = a.request_id)");
  REQUIRE(q.ok());
  q->Bind(1, run);
  std::set<std::string> tasks;
  while (q->Step())
    tasks.insert(q->Text(0));
  return tasks;
}

const std::vector<std::pair<std::string, std::string>> kNoOptional = {
    {"  min_mean: 3\n", ""}, {"  min_pass_rate: 0.7\n", ""}};

TEST_CASE("a required task that fails makes report --gate exit 1, naming it and its trace",
          "[cli][report][task_rules]") {
  testing::TempDir dir;
  WriteScenario(dir, kNoOptional);
  // The scripted application calls no tool: the task's tool_call check fails.
  Require(dir, "account.yaml", "hr-my-leave-balance");
  const std::string run = ScriptedRun(dir, {});
  testing::ScoreAll(dir, run);
  Ran gate = Gate(dir, run);
  INFO(gate.out << gate.err);
  CHECK(gate.exit_code == 1);
  CHECK(Has(gate.out, "  quality: required task hr-my-leave-balance passes (answer "));
  const json report = ReportJson(dir, run);
  const json& rules = report["conditions"]["quality"]["task_rules"];
  CHECK(rules["required_rule"] == true);
  REQUIRE(rules["findings"].size() == 1);
  const json& finding = rules["findings"][0];
  CHECK(finding["task"] == "hr-my-leave-balance");
  CHECK(finding["rule"] == "required failed");
  CHECK(Has(finding["evidence"], "leave_balance"));
  REQUIRE(finding["trace_id"].is_string());
  const std::string trace = finding["trace_id"];
  CHECK(trace.size() == 32);
  CHECK(Has(gate.out, "(trace " + trace + ")"));
  // The salary-band refusal the demo corpus requires is refused (403) and passes.
  CHECK(rules["required_passed"] == 1);
  // First in condition 2 of report.md, before the reviewers' summary, and in report.html.
  const std::string md = testing::ReadText(dir / ("report-" + run + "/report.md"));
  const size_t table = md.find(
      "### Tasks that fail a per-task rule\n\n| task | rule | evidence | "
      "trace id |\n| --- | --- | --- | --- |\n| hr-my-leave-balance | "
      "required failed | answer ");
  CHECK(table != std::string::npos);
  CHECK(table > md.find("## Condition 2: quality: fail"));
  CHECK(table < md.find("fully scored by"));
  const std::string html = testing::ReadText(dir / ("report-" + run + "/report.html"));
  CHECK(Has(html, "<h3>Tasks that fail a per-task rule</h3>\n<table><tr><th>task</th>"));
  CHECK(Has(html, "<td>" + trace + "</td>"));

  Ran quality = testing::RunStagegate(dir, {"quality", run, "--gate"});
  INFO(quality.out << quality.err);
  CHECK(quality.exit_code == 1);
  CHECK(Has(quality.out, "  required failed: hr-my-leave-balance: answer "));
  // quality --json gives the same findings as report.json.
  Ran quality_json = testing::RunStagegate(dir, {"quality", run, "--json"});
  INFO(quality_json.out << quality_json.err);
  REQUIRE(quality_json.exit_code == 0);
  const json q = json::parse(quality_json.out);
  CHECK(q["task_rules"]["findings"] == rules["findings"]);
  CHECK(q["task_rules"]["required_passed"] == 1);
}

TEST_CASE(
    "without an approved run the regression rule is pending; against one, a regressed and "
    "a missing task each fail the gate, and a rejection withdraws the approval",
    "[cli][report][task_rules]") {
  testing::TempDir dir;
  std::vector<std::pair<std::string, std::string>> edits = kNoOptional;
  edits.push_back(
      {"  min_agreement: 0.5\n", "  min_agreement: 0.5\n  no_regression_from: approved\n"});
  WriteScenario(dir, edits);
  const std::string first = ScriptedRun(dir, {});
  testing::ScoreAll(dir, first);
  // Everything else passes: the rule waits for an owner's acceptance.
  Ran pending = Gate(dir, first);
  INFO(pending.out << pending.err);
  CHECK(pending.exit_code == 4);
  CHECK(Has(pending.out,
            "  quality: no regression from the approved run: no earlier run of this "
            "fingerprint has its quality accepted by an owner"));

  // A second run, while the first is only the latest, not approved: still pending.
  const std::string second = ScriptedRun(dir, {});
  testing::ScoreAll(dir, second);
  Ran unapproved = Gate(dir, second);
  INFO(unapproved.out << unapproved.err);
  CHECK(unapproved.exit_code == 4);
  CHECK(ReportJson(dir, second)["conditions"]["quality"]["task_rules"]["approved_run"].is_null());

  Ran accepted = testing::RunStagegate(
      dir, {"signoff", first, "--condition", "quality", "--by", "Dana", "--decision", "accept"});
  INFO(accepted.out << accepted.err);
  REQUIRE(accepted.exit_code == 0);
  // The application now gives the contractor the salary band it refused before.
  const std::string leaky = ScriptedRun(dir, {.leaky = true});
  Ran regressed = Gate(dir, leaky);
  INFO(regressed.out << regressed.err);
  CHECK(regressed.exit_code == 1);
  CHECK(Has(regressed.out,
            "  quality: task hr-salary-band-l4 does not regress from the approved "
            "run (passed in " +
                first + "; now answer "));
  const json rules = ReportJson(dir, leaky)["conditions"]["quality"]["task_rules"];
  CHECK(rules["approved_run"]["run_id"] == first);
  CHECK(rules["approved_run"]["accepted_by"] == "Dana");
  REQUIRE(rules["findings"].size() > 1);
  CHECK(rules["findings"][0]["task"] == "hr-salary-band-l4");
  CHECK(rules["findings"][0]["rule"] == "regressed");
  CHECK(rules["findings"][0]["trace_id"].is_string());
  // Every task of the corpus the run did not answer is missing, and named.
  std::set<std::string> missing;
  for (const json& f : rules["findings"])
    if (f["rule"] == "missing") missing.insert(f["task"].get<std::string>());
  const std::set<std::string> covered = CoveredTasks(dir, leaky);
  CHECK_FALSE(covered.empty());
  size_t corpus_tasks = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "corpus/tasks")) {
    const std::string text = testing::ReadText(entry.path().string());
    for (size_t at = text.find("- id: "); at != std::string::npos; at = text.find("- id: ", at + 1))
      ++corpus_tasks;
  }
  CHECK(missing.size() + covered.size() == corpus_tasks);
  for (const std::string& task : covered)
    CHECK_FALSE(missing.contains(task));
  REQUIRE_FALSE(missing.empty());
  CHECK(Has(regressed.out,
            "  quality: every task of the corpus is covered, as in the approved run (" +
                std::to_string(missing.size()) + " missing: "));

  // A run that answers as the approved one did, scored: nothing regressed, and the missing
  // tasks alone fail the gate, each named.
  const std::string again = ScriptedRun(dir, {});
  testing::ScoreAll(dir, again);
  Ran only_missing = Gate(dir, again);
  INFO(only_missing.out << only_missing.err);
  CHECK(only_missing.exit_code == 1);
  const json again_report = ReportJson(dir, again);
  const json& again_findings = again_report["conditions"]["quality"]["task_rules"]["findings"];
  REQUIRE_FALSE(again_findings.empty());
  for (const json& f : again_findings) {
    CHECK(f["rule"] == "missing");
    CHECK(f["trace_id"].is_null());
  }
  CHECK(again_findings.size() == corpus_tasks - CoveredTasks(dir, again).size());
  REQUIRE(again_report["verdict_reasons"].size() == 1);
  CHECK(again_report["verdict_reasons"][0].get<std::string>().starts_with(
      "quality: every task of the corpus is covered, as in the approved run (" +
      std::to_string(again_findings.size()) +
      " missing: " + again_findings[0]["task"].get<std::string>()));
  CHECK(Has(only_missing.out, again_findings[0]["task"].get<std::string>()));

  // The owner rejects the first run after all: no approved run is left, and the rule waits.
  REQUIRE(testing::RunStagegate(dir, {"signoff", first, "--condition", "quality", "--by", "Dana",
                                      "--decision", "reject"})
              .exit_code == 0);
  Ran withdrawn = Gate(dir, second);
  INFO(withdrawn.out << withdrawn.err);
  CHECK(withdrawn.exit_code == 4);
  CHECK(Has(withdrawn.out, "no regression from the approved run: no earlier run"));
}

}  // namespace
}  // namespace stagegate::cli
