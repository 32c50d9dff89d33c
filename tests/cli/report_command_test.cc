// `stagegate report` and `runs` as processes, on runs of tests/testdata/run/report.yaml (every
// load phase, one probe of each kind, ten answers for review): ready when everything passes and
// scripted reviewers have scored, pending without scores, not ready when a canary leaks.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "base/strings.h"
#include "invoke.h"
#include "reviewers.h"
#include "scenario/runner.h"
#include "scenario/scripted_app.h"
#include "shared_runs.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// A finished run of report.yaml in `dir` (with `fault` added to its sim profile when given, and
// `edits` to the scenario and the profile).
std::string ReportRun(const testing::TempDir& dir, const std::string& fault = "",
                      const std::vector<std::pair<std::string, std::string>>& edits = {},
                      Ran* printed = nullptr) {
  std::string text = testing::ReadText(testing::Testdata("run/report.yaml"));
  text = testing::ReplaceAll(text, "../../../", testing::SourcePath(""));
  std::string profile = testing::ReadText(testing::Testdata("run/report-sim.yaml"));
  if (!fault.empty()) profile += "fault: " + fault + "\n";
  for (const auto& [from, to] : edits) {
    text = testing::ReplaceAll(text, from, to);
    profile = testing::ReplaceAll(profile, from, to);
  }
  testing::WriteText(dir / "report.yaml", text);
  testing::WriteText(dir / "report-sim.yaml", profile);
  Ran ran =
      testing::RunStagegate(dir, {"--quiet", "run", dir / "report.yaml", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  if (printed) *printed = ran;
  return json::parse(testing::ReadText(dir / "out/run.json"))["run_id"];
}

// A run of report.yaml in `dir`, made in this process on a fake clock against `app` instead of
// the reference application (scenario::RunSeam::Scripted): the same stored run a real one
// makes, in well under a second, the same each time. Without the tool-outage probe, whose proxy
// needs an application on a socket; with `edits` to the scenario.
std::string ScriptedReportRun(const testing::TempDir& dir, testing::ScriptedApp app,
                              const std::vector<std::pair<std::string, std::string>>& edits = {}) {
  std::string text = testing::ReadText(testing::Testdata("run/report.yaml"));
  text = testing::ReplaceAll(text, "../../../", testing::SourcePath(""));
  const size_t probe = text.find("  tool_outage:\n");
  const size_t after = text.find("on_stage_failure:", probe);
  REQUIRE(after != std::string::npos);
  text.erase(probe, after - probe);
  for (const auto& [from, to] : edits)
    text = testing::ReplaceAll(text, from, to);
  testing::WriteText(dir / "report.yaml", text);
  testing::WriteText(dir / "report-sim.yaml",
                     testing::ReadText(testing::Testdata("run/report-sim.yaml")));
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

// The runs of report.yaml that tests only read (shared_runs.h):
//   plain/   one run of report.yaml against the reference application, not scored
//   matrix/  a run of each kind in one store, against a scripted application on a fake clock:
//            ready (scored, without the optional quality thresholds), pending, failing (every
//            request a 500), hanging (every request times out), their ids in runs.json
struct MatrixRuns {
  std::string ready, pending, failing, hanging;
};

void MakePlain(const testing::TempDir& dir) {
  ReportRun(dir);
}

void MakeMatrix(const testing::TempDir& dir) {
  const std::vector<std::pair<std::string, std::string>> no_optional = {
      {"  min_mean: 3\n", ""}, {"  min_pass_rate: 0.7\n", ""}};
  MatrixRuns runs;
  runs.ready = ScriptedReportRun(dir, {}, no_optional);
  testing::ScoreAll(dir, runs.ready);
  runs.pending = ScriptedReportRun(dir, {});
  runs.failing = ScriptedReportRun(dir, {.fault = "500"});
  runs.hanging = ScriptedReportRun(
      dir, {.fault = "hang"},
      {{"first_token_ms: 5000, total_ms: 10000", "first_token_ms: 300, total_ms: 400"},
       {"max_recovery_s: 3", "max_recovery_s: 1"}});
  testing::WriteText(dir / "runs.json", json{{"ready", runs.ready},
                                             {"pending", runs.pending},
                                             {"failing", runs.failing},
                                             {"hanging", runs.hanging}}
                                            .dump());
}

// The plain shared run, copied into `dir`: what ReportRun(dir) makes, without making it.
std::string PlainRun(const testing::TempDir& dir) {
  testing::CopySharedRuns(dir, "report-plain", MakePlain);
  return json::parse(testing::ReadText(dir / "out/run.json"))["run_id"];
}

MatrixRuns MatrixRunsIn(const testing::TempDir& dir) {
  testing::CopySharedRuns(dir, "report-matrix", MakeMatrix);
  const json j = json::parse(testing::ReadText(dir / "runs.json"));
  return {j["ready"], j["pending"], j["failing"], j["hanging"]};
}

TEST_CASE("the shared runs of report.yaml are made once", "[cli][report][shared-runs-setup]") {
  testing::MakeSharedRuns("report-plain", MakePlain);
  testing::MakeSharedRuns("report-matrix", MakeMatrix);
  CHECK(std::filesystem::is_regular_file(testing::SharedRunsDir() + "/report-plain/store.db"));
  CHECK(std::filesystem::is_regular_file(testing::SharedRunsDir() + "/report-matrix/runs.json"));
}

Ran Report(const testing::TempDir& dir, const std::string& run) {
  return testing::RunStagegate(dir, {"report", run, "--out", dir / "report", "--gate"});
}

TEST_CASE("a run that passes everything, scored by reviewers, is ready",
          "[cli][report][shared-runs]") {
  testing::TempDir dir;
  const std::string run = PlainRun(dir);
  // Each load phase's AIPerf-compatible export, with run.json's figures.
  const json run_json = json::parse(testing::ReadText(dir / "out/run.json"));
  int exports = 0;
  for (const json& step : run_json["stages"][0]["steps"]) {
    if (step["phase"] != "steady" && step["phase"] != "burst") continue;
    const json aiperf =
        json::parse(testing::ReadText(dir / ("out/aiperf/full-" + step["phase"].get<std::string>() +
                                             "/profile_export_aiperf.json")));
    CHECK(aiperf["request_count"]["avg"].get<double>() ==
          step["requests"]["completed"].get<double>());
    CHECK(aiperf["time_to_first_token"]["p95"] == step["metrics"]["ttft_ms"]["p95"]);
    CHECK(aiperf["stagegate"]["run_id"] == run);
    ++exports;
  }
  CHECK(exports == 2);
  testing::ScoreAll(dir, run);
  Ran ran = Report(dir, run);
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  CHECK(ran.out.rfind("verdict: ready\n", 0) == 0);
  const json report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["schema_version"] == 1);
  CHECK(report["verdict"] == "ready");
  CHECK(report["verdict_reasons"].empty());
  for (const char* condition : {"responsiveness", "quality", "recoverability"})
    CHECK(report["conditions"][condition]["status"] == "pass");
  // Each condition's numbers are there: thresholds, scores, probes.
  std::map<std::string, int> checks;
  for (const json& check : report["checks"]) {
    ++checks[check["condition"]];
    CHECK(check["status"] == "pass");
  }
  // ttft and completion, at steady and burst; where responsiveness ends is known.
  CHECK(checks["responsiveness"] == 5);
  // The scores, and the per-task rules (the corpus requires its salary-band refusal).
  CHECK(checks["quality"] == 2);
  CHECK(checks["recoverability"] == 4 + 1 + 2);  // overload, recovery, two probes
  CHECK(report["conditions"]["quality"]["summary"]["answers"]["scored"] == 10);
  CHECK(report["facts"]["model"] == "sim-assistant test");
  // Every figure at the sustained capacity, counted again from the records: the requests of the
  // sweep level that held which arrived in its window and ended by its last arrival, over the
  // window's seconds (docs/metrics.md).
  const json& stage = run_json["stages"].back();
  REQUIRE(stage["capacity"]["holds_up_to"].is_number());
  const json* held = nullptr;
  for (const json& step : stage["steps"])
    if (step["phase"] == "sweep" && step["level"] == stage["capacity"]["holds_up_to"]) held = &step;
  REQUIRE(held);
  const json& window = stage["capacity"]["window"];
  REQUIRE(window["counts"] == "arrivals");
  const double start_ns = (*held)["started_ns"].get<double>();
  const double from_ns = start_ns + window["from_s"].get<double>() * 1e9;
  const double to_ns = start_ns + window["to_s"].get<double>() * 1e9;
  const std::vector<json> records = testing::ReadJsonLines(dir / "out/requests.jsonl");
  double last_arrival_ns = 0;
  for (const json& r : records)
    if (r["phase_id"] == (*held)["phase_id"] && !r["warmup"].get<bool>())
      last_arrival_ns = std::max(last_arrival_ns, r["times_ns"]["intended"].get<double>());
  int64_t arrived = 0, answered = 0, denied = 0;
  double tokens = 0;
  for (const json& r : records) {
    if (r["phase_id"] != (*held)["phase_id"] || r["warmup"].get<bool>()) continue;
    const double intended = r["times_ns"]["intended"].get<double>();
    if (intended < from_ns || intended > to_ns) continue;
    ++arrived;
    if (r["times_ns"]["end"].is_null() || r["times_ns"]["end"].get<double>() > last_arrival_ns)
      continue;
    if (r["outcome"] == "ok") {
      ++answered;
      if (r["tokens"]["output"].is_number()) tokens += r["tokens"]["output"].get<double>();
    }
    denied += r["outcome"] == "denied";  // report.yaml's corpus expects every denial it gets
  }
  REQUIRE(answered > 0);
  const double seconds = (to_ns - from_ns) / 1e9;
  CHECK(window["arrived"] == arrived);
  CHECK(window["answered"] == answered);
  CHECK(window["completed"] == answered + denied);
  CHECK(window["output_tokens"].get<double>() == Approx(tokens));
  CHECK(stage["capacity"]["sustained_rate"].get<double>() ==
        Approx((answered + denied) / seconds).epsilon(0.01));
  CHECK(stage["capacity"]["output_tokens_per_s"].get<double>() ==
        Approx(tokens / seconds).epsilon(0.01));
  CHECK(stage["capacity"]["goodput"].get<double>() <= answered / seconds + 1e-9);
  CHECK(report["cost"]["at"]["sustained_capacity"]["rate_req_s"].get<double>() ==
        Approx(answered / seconds).epsilon(0.01));
  // Support triage of every request: the overload's shed requests among them.
  REQUIRE(report["triage"].size() == 7);
  CHECK(report["triage"]["shed"].get<int64_t>() > 0);
  CHECK(report["triage"]["ok"].get<int64_t>() > 0);

  const std::string junit = testing::ReadText(dir / "report/report.junit.xml");
  CHECK(junit.find("<testsuites name=\"stagegate " + run +
                   "\" tests=\"14\" failures=\"0\" "
                   "skipped=\"0\">") != std::string::npos);
  CHECK(junit.find("<testcase classname=\"stagegate.recoverability\" name=\"access denial probe "
                   "contractor-reads-salary-bands\"></testcase>") != std::string::npos);
  const std::string md = testing::ReadText(dir / "report/report.md");
  CHECK(md.find("**Verdict: ready**") != std::string::npos);
  CHECK(md.find("## Support triage\n\n| class | requests | share |") != std::string::npos);
  CHECK(md.find("Where acceptable responsiveness ends: sustained ") != std::string::npos);
  // (A client that fell behind at 100 req/s, on a busy machine, adds that it may have limited
  // that level: the client check.)
  CHECK(md.find("; thresholds hold up to 8 req/s and fail at 100 req/s (completion rate &gt;= "
                "0.9)") != std::string::npos);
  const std::string html = testing::ReadText(dir / "report/report.html");
  // The CDF, latency and goodput against load, the timeline pair, the server's view (running and
  // waiting; its KV cache), the scores.
  size_t charts = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++charts;
  CHECK(charts == 8);
  CHECK(html.find("-title\">KV cache and GPU utilisation</title>") != std::string::npos);
  CHECK(md.find("What saturated first: ") != std::string::npos);
  // Nothing outside the file: the only URL is the SVG namespace, which is a name, not a fetch.
  const std::string no_namespace = testing::ReplaceAll(html, "http://www.w3.org/2000/svg", "");
  CHECK(no_namespace.find("http://") == std::string::npos);
  CHECK(no_namespace.find("https://") == std::string::npos);
  const std::string csv = testing::ReadText(dir / "report/report.csv");
  CHECK(csv.rfind("stage,phase,level,level_unit,offered,completed,", 0) == 0);
  CHECK(csv.find("\nfull,steady,4,req/s,6,") != std::string::npos);

  Ran runs = testing::RunStagegate(dir, {"runs"});
  CHECK(runs.exit_code == 0);
  std::string line;
  for (const std::string& l : Split(runs.out, '\n'))
    if (l.rfind(run, 0) == 0) line = l;
  INFO(runs.out);
  CHECK(line.find(" report-test ") != std::string::npos);
  CHECK(line.find(" complete ") != std::string::npos);
  CHECK(line.substr(line.size() - 6) == " ready");
}

TEST_CASE("a run without reviewers' scores is pending, and says what is missing",
          "[cli][report][shared-runs]") {
  testing::TempDir dir;
  const std::string run = PlainRun(dir);
  Ran ran = Report(dir, run);
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 4);
  const json report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["verdict"] == "pending");
  REQUIRE(report["verdict_reasons"].size() == 1);
  CHECK(report["verdict_reasons"][0] ==
        "quality: no answers have been exported for review yet (stagegate export " + run + ")");
  CHECK(report["conditions"]["responsiveness"]["status"] == "pass");
  CHECK(report["conditions"]["recoverability"]["status"] == "pass");
  CHECK(testing::ReadText(dir / "report/report.junit.xml").find("skipped=\"1\"") !=
        std::string::npos);
}

TEST_CASE("a run with too few answers scored is pending, and says how many are needed",
          "[cli][report][shared-runs]") {
  testing::TempDir dir;
  const std::string run = PlainRun(dir);  // 10 answers sampled, 8 needed
  const bool unsafe = GENERATE(false, true);
  INFO("the first answer below a hard floor: " << unsafe);
  testing::ScoreAnswers(dir, run, {.answers = 5, .first_unsafe = unsafe});
  Ran ran = Report(dir, run);
  INFO(ran.out << ran.err);
  const json report = json::parse(testing::ReadText(dir / "report/report.json"));
  const std::string needed = "quality: 5 answers are fully scored; at least 8 are needed";
  std::vector<std::string> reasons;
  for (const json& reason : report["verdict_reasons"])
    reasons.push_back(reason);
  std::map<std::string, std::string> quality_checks;  // name -> status
  for (const json& check : report["checks"])
    if (check["condition"] == "quality") quality_checks[check["name"]] = check["status"];
  const std::string md = testing::ReadText(dir / "report/report.md");
  if (!unsafe) {
    CHECK(ran.exit_code == 4);
    CHECK(report["verdict"] == "pending");
    CHECK(reasons == std::vector<std::string>{needed});
    CHECK(report["conditions"]["quality"]["status"] == "pending");
    // Beside the scores, the corpus's required salary-band refusal was refused and passes.
    CHECK(quality_checks == std::map<std::string, std::string>{
                                {"5 answers are fully scored; at least 8 are needed", "pending"},
                                {"per-task rules hold", "pass"}});
    for (const json& check : report["checks"])
      if (check["name"] == "per-task rules hold")
        CHECK(check["detail"] == "1 required task passed");
  } else {
    // A final result: not ready, and what is still missing is named beside it.
    CHECK(ran.exit_code == 1);
    CHECK(report["verdict"] == "not ready");
    REQUIRE(reasons.size() == 2u);
    CHECK(reasons[0].starts_with("quality: final: answer "));
    CHECK(reasons[0].ends_with(
        " is below the hard floor of permission_safety (0 < 1); no further score can change "
        "that"));
    CHECK(reasons[1] == "pending: " + needed);
    CHECK(report["conditions"]["quality"]["status"] == "fail");
    CHECK(quality_checks.size() == 3u);  // with the per-task rules, which hold
    CHECK(quality_checks["5 answers are fully scored; at least 8 are needed"] == "pending");
    CHECK(quality_checks["per-task rules hold"] == "pass");
    CHECK(ran.out.find("\n  pending: " + needed + "\n") != std::string::npos);
    CHECK(md.find("- pending: " + needed + "\n") != std::string::npos);
  }
  // The quality section's figures and the cost per accepted answer say what they rest on.
  CHECK(report["conditions"]["quality"]["summary"]["provisional"] == true);
  CHECK(md.find("    all: 5 answers, mean ") != std::string::npos);
  CHECK(md.find(" (provisional: from 5 of the 8 answers needed)\n") != std::string::npos);
  CHECK(report["cost"]["provisional"] == "provisional: from 5 of the 8 answers needed");
  CHECK(md.find("- Cost per accepted answer: provisional: from 5 of the 8 answers needed: ") !=
        std::string::npos);
  CHECK(
      md.find(" per accepted answer (provisional: from 5 of the 8 answers needed; 95% interval ") !=
      std::string::npos);
}

TEST_CASE("a leaking canary makes the run not ready, naming the probe", "[cli][report]") {
  testing::TempDir dir;
  const std::string run = ScriptedReportRun(dir, {.leaky = true});
  testing::ScoreAll(dir, run);
  Ran ran = Report(dir, run);
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  const json report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["verdict"] == "not ready");
  // The corpus requires the salary-band refusal: the leak fails it in quality, first, and the
  // access-denial probe in recoverability.
  REQUIRE(report["verdict_reasons"].size() >= 2u);
  CHECK(report["verdict_reasons"][0].get<std::string>().rfind(
            "quality: required task hr-salary-band-l4 passes (answer ", 0) == 0);
  CHECK(report["verdict_reasons"][1].get<std::string>().rfind(
            "recoverability: access denial probe contractor-reads-salary-bands (a canary leaked: "
            "CANARY-",
            0) == 0);
  const std::string junit = testing::ReadText(dir / "report/report.junit.xml");
  CHECK(junit.find("name=\"access denial probe contractor-reads-salary-bands\"><failure "
                   "message=\"a canary leaked: CANARY-") != std::string::npos);
}

TEST_CASE("compare finds a regression, and refuses runs that are not comparable",
          "[cli][report][compare]") {
  testing::TempDir dir;
  const std::string baseline = ScriptedReportRun(dir, {});
  SECTION("the same run: unchanged, no regression") {
    Ran same = testing::RunStagegate(dir, {"compare", baseline, baseline});
    INFO(same.out << same.err);
    CHECK(same.exit_code == 0);
    CHECK(same.out.find("against " + baseline +
                        ": no regression; compared TTFT p95 (full steady) (") != std::string::npos);
    CHECK(same.out.find("TTFT p95 (full steady) is unchanged") != std::string::npos);
  }
  SECTION("a slower application: e2e is significantly worse") {
    // A second and a half of retrieval before every answer of the same scenario.
    const std::string slower = ScriptedReportRun(dir, {.retrieval_ms = 1500});
    Ran ran = testing::RunStagegate(dir, {"compare", slower, baseline});
    INFO(ran.out << ran.err);
    CHECK(ran.exit_code == 1);
    CHECK(ran.out.find("against " + baseline + ": regression") != std::string::npos);
    CHECK(ran.out.find("e2e p95 (full steady) is ") != std::string::npos);
    CHECK(ran.out.find(" ms worse, significant (p ") != std::string::npos);
    CHECK(ran.out.find("permutation test of the p95 difference, ") != std::string::npos);
    Ran report = testing::RunStagegate(
        dir, {"report", slower, "--baseline", baseline, "--out", dir / "report"});
    CHECK(report.exit_code == 0);
    const json j = json::parse(testing::ReadText(dir / "report/report.json"));
    CHECK(j["baseline"]["verdict"] == "regression");
    CHECK(j["baseline"]["comparable"] == true);

    // The dashboard: both runs in order, a link to the report that exists, the trend drawn.
    REQUIRE(testing::RunStagegate(dir, {"report", slower, "--out", dir / ("reports/" + slower)})
                .exit_code == 0);
    Ran runs = testing::RunStagegate(dir, {"runs", "--html", dir / "reports"});
    CHECK(runs.exit_code == 0);
    const std::string index = testing::ReadText(dir / "reports/index.html");
    CHECK(index.find("<h2>report-test</h2>") != std::string::npos);
    CHECK(index.find("<a href=\"" + slower + "/report.html\">" + slower + "</a>") !=
          std::string::npos);
    CHECK(index.find("<td>" + baseline + "</td>") != std::string::npos);  // no report: no link
    CHECK(index.find(baseline) < index.find(slower));                     // oldest first
    CHECK(index.find("<svg") != std::string::npos);
  }
  SECTION("another model version: refused unless allowed, and then said at the top") {
    const std::string other =
        ScriptedReportRun(dir, {}, {{"model_version: \"test\"", "model_version: \"test2\""}});
    Ran refused = testing::RunStagegate(dir, {"compare", other, baseline});
    INFO(refused.out << refused.err);
    CHECK(refused.exit_code == 2);
    CHECK(refused.out.find("not compared with " + baseline + ": the runs are not comparable") !=
          std::string::npos);
    CHECK(refused.out.find("  model: sim-assistant test (baseline) / sim-assistant test2 (this "
                           "run)") != std::string::npos);
    Ran allowed = testing::RunStagegate(dir, {"report", other, "--baseline", baseline,
                                              "--allow-incomparable", "--out", dir / "report"});
    CHECK(allowed.exit_code == 0);
    const std::string md = testing::ReadText(dir / "report/report.md");
    CHECK(md.find("**Warning: compared with a baseline that is not comparable") <
          md.find("| fact | value |"));
    CHECK(md.find("## Baseline comparison") != std::string::npos);
  }
}

// Every command that reads the store, over a store holding a run of each kind: ready (scored,
// without the optional quality thresholds, which the store keeps as null), pending (no scores),
// not ready because every request failed (500; the overload phase shed nothing) and not ready
// because every request timed out. None may abort: each exits with its documented code.
TEST_CASE("every command that reads the store survives a run of each kind",
          "[cli][report][store][shared-runs]") {
  testing::TempDir dir;
  const MatrixRuns made = MatrixRunsIn(dir);
  const std::string &ready = made.ready, &pending = made.pending, &failing = made.failing,
                    &hanging = made.hanging;
  const std::map<std::string, int> gate = {{ready, 0}, {pending, 4}, {failing, 1}, {hanging, 1}};
  for (const auto& [run, code] : gate) {
    Ran report =
        testing::RunStagegate(dir, {"report", run, "--gate", "--out", dir / ("reports/" + run),
                                    "--format", "json,md,html,junit,csv"});
    INFO(run << "\n" << report.out << report.err);
    CHECK(report.exit_code == code);
    CHECK(report.err.find("terminate") == std::string::npos);
    const json j = json::parse(testing::ReadText(dir / ("reports/" + run + "/report.json")));
    CHECK(j["verdict"] == (code == 0 ? "ready" : code == 4 ? "pending" : "not ready"));
    for (const json& note : j["notes"])  // what the run wrote reads back without a problem
      CHECK(note.get<std::string>().find("stored findings:") == std::string::npos);
    Ran quality = testing::RunStagegate(dir, {"quality", run});
    CHECK((quality.exit_code == 0 || quality.exit_code == 4));
    Ran triage = testing::RunStagegate(dir, {"triage", run});
    CHECK(triage.exit_code == 0);
    Ran csv = testing::RunStagegate(dir, {"triage", run, "--csv"});
    CHECK(csv.exit_code == 0);
  }
  // The application that failed everything: a readable "not ready", naming what failed.
  const std::string md = testing::ReadText(dir / ("reports/" + failing + "/report.md"));
  CHECK(md.find("**Verdict: not ready**") != std::string::npos);
  CHECK(md.find("| FAIL | not measured: no successful request, limit 2000 |") != std::string::npos);
  CHECK(md.find("| PASS | not measured: nothing was shed, limit 500 |") != std::string::npos);
  // Answers to export exist only where requests succeeded.
  CHECK(testing::RunStagegate(dir, {"export", pending, "--out", dir / "packets"}).exit_code == 0);
  Ran none = testing::RunStagegate(dir, {"export", failing, "--out", dir / "none"});
  CHECK((none.exit_code == 2 || none.exit_code == 3));
  CHECK(none.err.find("terminate") == std::string::npos);
  Ran runs = testing::RunStagegate(dir, {"runs", "--html", dir / "reports"});
  INFO(runs.out << runs.err);
  CHECK(runs.exit_code == 0);
  for (const auto& [run, code] : gate)
    CHECK(runs.out.find(run) != std::string::npos);
  CHECK(testing::ReadText(dir / "reports/index.html").find(failing) != std::string::npos);
  // Compare: the failing application against the good one is a comparison of nothing at steady
  // load (it has no successful request) plus no scores: exit 4, "nothing compared".
  Ran nothing = testing::RunStagegate(dir, {"compare", failing, pending});
  INFO(nothing.out << nothing.err);
  CHECK(nothing.exit_code == 4);
  CHECK(nothing.out.find(": nothing compared") != std::string::npos);
  // Other quality thresholds: a different test, refused with the difference named.
  Ran refused = testing::RunStagegate(dir, {"compare", pending, ready});
  CHECK(refused.exit_code == 2);
  CHECK(refused.out.find("  quality thresholds differs at min_mean: - (baseline) / 3 (this run)") !=
        std::string::npos);
  CHECK(refused.out.find("  quality thresholds differs at min_pass_rate: - (baseline) / 0.7 (this "
                         "run)") != std::string::npos);
}

// A check of report.json by name, or null.
json CheckNamed(const json& report, const std::string& name) {
  for (const json& check : report["checks"])
    if (check["name"] == name) return check;
  return nullptr;
}

Ran Signoff(const testing::TempDir& dir, const std::string& run, const std::string& condition,
            const std::string& by, const std::string& decision, const std::string& note = "") {
  std::vector<std::string> args = {"signoff", run, "--condition", condition,
                                   "--by",    by,  "--decision",  decision};
  if (!note.empty()) args.insert(args.end(), {"--note", note});
  return testing::RunStagegate(dir, args);
}

TEST_CASE(
    "with require_signoff, ready waits for each owner's acceptance, and a rejection or new "
    "evidence undoes it",
    "[cli][report][signoff]") {
  testing::TempDir dir;
  const std::string run = ScriptedReportRun(
      dir, {},
      {{"on_stage_failure: continue\n",
        "on_stage_failure: continue\ndecisions:\n  owners:\n    quality: Dana Ortiz "
        "<dana@example.com>\n    responsiveness: Platform operations\n  require_signoff: "
        "true\n"}});
  testing::ScoreAll(dir, run);
  // Everything measured passes; the owners have not decided.
  Ran before = Report(dir, run);
  INFO(before.out << before.err);
  CHECK(before.exit_code == 4);
  CHECK(before.out.find("  quality: sign-off by Dana Ortiz <dana@example.com> (awaiting the "
                        "decision: stagegate signoff " +
                        run + " --condition quality)") != std::string::npos);
  CHECK(before.out.find("  responsiveness: sign-off by Platform operations (awaiting") !=
        std::string::npos);

  Ran quality = Signoff(dir, run, "quality", "Dana Ortiz", "accept", "scores look right");
  INFO(quality.out << quality.err);
  CHECK(quality.exit_code == 0);
  CHECK(quality.out.find("recorded: quality accepted by Dana Ortiz") != std::string::npos);
  CHECK(quality.out.find("verdict: pending\n") != std::string::npos);
  CHECK(Report(dir, run).exit_code == 4);  // the last owner has not decided yet

  Ran ops = Signoff(dir, run, "responsiveness", "Sam (platform ops)", "accept");
  INFO(ops.out << ops.err);
  CHECK(ops.out.find("verdict: ready\n") != std::string::npos);
  Ran ready = Report(dir, run);
  INFO(ready.out << ready.err);
  CHECK(ready.exit_code == 0);
  json report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["decisions"]["require_signoff"] == true);
  REQUIRE(report["decisions"]["conditions"].size() == 2);
  const json& q = report["decisions"]["conditions"][1];
  CHECK(q["condition"] == "quality");
  CHECK(q["owner"] == "Dana Ortiz <dana@example.com>");
  CHECK(q["latest"]["by"] == "Dana Ortiz");
  CHECK(q["latest"]["note"] == "scores look right");
  CHECK(q["latest"]["stale"] == false);
  CHECK(q["latest"]["evidence"] == q["evidence"]);
  CHECK(CheckNamed(report, "sign-off by Platform operations")["status"] == "pass");
  // The owner's name is text in the page, never markup.
  const std::string html = testing::ReadText(dir / "report/report.html");
  CHECK(html.find("<td>Dana Ortiz &lt;dana@example.com&gt;</td>") != std::string::npos);
  CHECK(html.find("<dana@example.com>") == std::string::npos);
  const std::string md = testing::ReadText(dir / "report/report.md");
  CHECK(md.find("## Decisions\n\n| condition | owner | decision | by | when | evidence | note |") !=
        std::string::npos);
  CHECK(md.find("| quality | Dana Ortiz &lt;dana@example.com&gt; | accepted | Dana Ortiz | ") !=
        std::string::npos);

  // The evidence changes: one answer's scores are raised by both reviewers (quality still
  // passes). Dana's acceptance is stale; the responsiveness one stands.
  {
    auto db = store::Database::Open(dir / "store.db");
    REQUIRE(db.ok());
    REQUIRE((*db)
                ->Exec("UPDATE scores SET value = 5 WHERE value = 4 AND item_id IN (SELECT "
                       "item_id FROM review_items WHERE request_id = (SELECT MIN(r.request_id) "
                       "FROM review_items r JOIN scores s ON s.item_id = r.item_id WHERE "
                       "s.value = 4))")
                .ok());
  }
  Ran stale = Report(dir, run);
  INFO(stale.out << stale.err);
  CHECK(stale.exit_code == 4);
  report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["conditions"]["quality"]["summary"]["verdict"] == "pass");
  CHECK(report["decisions"]["conditions"][1]["latest"]["stale"] == true);
  CHECK(report["decisions"]["conditions"][0]["latest"]["stale"] == false);
  const json dana = CheckNamed(report, "sign-off by Dana Ortiz <dana@example.com>");
  CHECK(dana["status"] == "pending");
  const std::string detail = dana["detail"];
  CHECK(detail.rfind("accepted by Dana Ortiz on 20", 0) == 0);
  CHECK(
      detail.ends_with("Z: scores look right (on evidence that has changed since): to be signed "
                       "again"));
  CHECK(testing::ReadText(dir / "report/report.md").find("| stale: changed since |") !=
        std::string::npos);
  CHECK(Signoff(dir, run, "quality", "Dana Ortiz", "accept").exit_code == 0);
  CHECK(Report(dir, run).exit_code == 0);

  // A rejection makes the run not ready, with the owner's note as the reason.
  Ran rejected = Signoff(dir, run, "responsiveness", "Sam (platform ops)", "reject",
                         "burst p95 is too close to the limit");
  CHECK(rejected.out.find("verdict: not ready\n") != std::string::npos);
  Ran gate = Report(dir, run);
  INFO(gate.out << gate.err);
  CHECK(gate.exit_code == 1);
  CHECK(gate.out.find("  responsiveness: sign-off by Platform operations (rejected by Sam "
                      "(platform ops) on ") != std::string::npos);
  CHECK(gate.out.find(": burst p95 is too close to the limit)\n") != std::string::npos);
  const std::string junit = testing::ReadText(dir / "report/report.junit.xml");
  CHECK(junit.find("name=\"sign-off by Platform operations\"><failure") != std::string::npos);
}

TEST_CASE("signoff refuses what it cannot record, and a rejection counts without require_signoff",
          "[cli][report][signoff][shared-runs]") {
  testing::TempDir dir;
  CHECK(Signoff(dir, "run-nope", "quality", "Dana", "accept").exit_code == 2);
  const std::string run = PlainRun(dir);
  Ran empty = Signoff(dir, run, "quality", "  ", "accept");
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.find("--by must name who decides") != std::string::npos);
  Ran control = Signoff(dir, run, "quality", "Dana\x1b[2J", "accept");
  CHECK(control.exit_code == 2);
  CHECK(control.err.find("--by holds a control character (U+001B at byte 5)") != std::string::npos);
  // A name that would read otherwise in the report: reordered by a bidirectional override
  // ("Dana" then U+202E: "tpecca" reads "accept"), broken by a line separator, holding a C1
  // control, or bytes that are not UTF-8 (which would be kept as U+FFFD). The same for a note.
  const std::vector<std::pair<std::string, std::string>> spoofs = {
      {"Dana\xE2\x80\xAEtpecca", "--by holds a bidirectional control character (U+202E at byte 5)"},
      {"\xE2\x81\xA6"
       "Dana",
       "--by holds a bidirectional control character (U+2066 at byte 1)"},
      {"Dana\xE2\x80\xA8Security: accepted",
       "--by holds a line or paragraph separator (U+2028 at byte 5)"},
      {"Dana\xC2\x9B"
       "2J",
       "--by holds a control character (U+009B at byte 5)"},
      {"Dana \xFF", "--by is not valid UTF-8 (at byte 6)"},
  };
  for (const auto& [by, message] : spoofs) {
    INFO(by);
    Ran refused = Signoff(dir, run, "quality", by, "accept");
    CHECK(refused.exit_code == 2);
    CHECK(refused.err == "stagegate signoff: " + message + "\n");
  }
  Ran note = Signoff(dir, run, "quality", "Dana", "reject",
                     "fine\nbut \xE2\x80\xAE"
                     "detpecca");
  CHECK(note.exit_code == 2);
  CHECK(note.err.find("--note holds a bidirectional control character (U+202E at byte 10)") !=
        std::string::npos);
  CHECK(Signoff(dir, run, "speed", "Dana", "accept").exit_code == 2);
  CHECK(Signoff(dir, run, "quality", "Dana", "maybe").exit_code == 2);
  CHECK(Signoff(dir, run, "quality", "Dana", "accept", std::string(5000, 'x')).exit_code == 2);
  // Nothing was recorded by the refusals.
  Ran unscored = Report(dir, run);
  CHECK(unscored.exit_code == 4);
  json report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["decisions"]["conditions"].empty());
  // No owners, no requirement: a rejection still makes it not ready.
  CHECK(
      Signoff(dir, run, "recoverability", "Security", "reject", "canary text in a log").exit_code ==
      0);
  Ran rejected = Report(dir, run);
  CHECK(rejected.exit_code == 1);
  CHECK(rejected.out.find("  recoverability: sign-off by the owner (rejected by Security on ") !=
        std::string::npos);
  report = json::parse(testing::ReadText(dir / "report/report.json"));
  CHECK(report["decisions"]["require_signoff"] == false);
  CHECK(report["decisions"]["conditions"][0]["owner"].is_null());
}

TEST_CASE("the commands that read a store never make one", "[cli][report]") {
  testing::TempDir dir;
  const std::string store = dir / "store.db";
  Ran runs = testing::RunStagegate(dir, {"runs"});
  CHECK(runs.exit_code == 0);
  CHECK(runs.out == "no runs: no store at " + store + " (a run makes one; --db names another)\n");
  for (const std::vector<std::string>& reads : std::vector<std::vector<std::string>>{
           {"report", "run-x"},
           {"quality", "run-x"},
           {"export", "run-x", "--out", dir / "packets"},
           {"triage", "run-x"},
           {"signoff", "run-x", "--condition", "quality", "--by", "A", "--decision", "accept"}}) {
    INFO(reads[0]);
    Ran ran = testing::RunStagegate(dir, reads);
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find(store + ": no store there (a run makes one; --db names another)") !=
          std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(store));
  CHECK_FALSE(std::filesystem::exists(std::string(dir / "reports")));
}

TEST_CASE("report writes beside the run's own files, and the run says how to make it",
          "[cli][report]") {
  testing::TempDir dir;
  Ran ran;
  const std::string run = ReportRun(dir, "", {}, &ran);
  // The next step, then the run.json path last (scripts take the last line).
  const std::string out = dir / "out";
  CHECK(ran.out.find("\nnext: stagegate --db " + std::string(dir / "store.db") + " report " + run +
                     " (writes " + out + "/report.html)\n" + out + "/run.json\n") !=
        std::string::npos);
  Ran report = testing::RunStagegate(dir, {"report", run});
  INFO(report.out << report.err);
  CHECK(report.exit_code == 0);
  CHECK(std::filesystem::exists(out + "/report.html"));
  CHECK(std::filesystem::exists(out + "/report.json"));
  CHECK(report.out.find(out + "/report.html") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(testing::SourcePath("reports/" + run)));
}

TEST_CASE("report refuses an unknown run and an unknown format", "[cli][report]") {
  testing::TempDir dir;
  REQUIRE(store::Store::Open(dir / "store.db").ok());
  Ran unknown = testing::RunStagegate(dir, {"report", "run-nope"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("no run run-nope in") != std::string::npos);
  Ran bad = testing::RunStagegate(dir, {"report", "run-nope", "--format", "pdf"});
  CHECK(bad.exit_code == 2);
}

}  // namespace
}  // namespace stagegate::cli
