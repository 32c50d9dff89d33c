// The report's writers with hostile text wherever model or corpus text can reach: stage names,
// check names, probe names and answer excerpts, notes. It must stay text.

#include <catch2/catch.hpp>

#include <string>

#include "report/model.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

const std::string kHostile =
    "<script>alert(1)</script><img src=x onerror=\"alert(2)\"></svg><script>x</script>\"'&";

ReportModel HostileModel() {
  ReportModel m;
  m.run.id = "run-1";
  m.run.scenario_name = kHostile;
  m.run.scenario_file = kHostile;
  m.verdict = Verdict::kNotReady;
  m.verdict_reasons = {kHostile};
  m.checks = {{.condition = Condition::kResponsiveness,
               .name = kHostile,
               .status = CheckStatus::kFail,
               .detail = kHostile},
              {.condition = Condition::kQuality,
               .name = kHostile,
               .status = CheckStatus::kPending,
               .detail = kHostile},
              {.condition = Condition::kRecoverability,
               .name = kHostile,
               .status = CheckStatus::kPass,
               .detail = kHostile}};
  const json findings = {{"schema_version", 1},
                         {"status", kHostile},
                         {"manifest", {{"model", kHostile}, {"hardware", kHostile}}},
                         {"stages",
                          {{{"name", kHostile},
                            {"skipped", false},
                            {"capacity", {{"finding", kHostile}}},
                            {"steps", json::array()}}}},
                         {"faults",
                          {{"tool_outage",
                            {{{"probe", kHostile},
                              {"actuator", kHostile},
                              {"requests",
                               {{{"part", "during"},
                                 {"status", nullptr},
                                 {"outcome", kHostile},
                                 {"e2e_ms", 12.5},
                                 {"acknowledged", kHostile},
                                 {"claimed", kHostile},
                                 {"excerpt", kHostile}}}}}}}}}};
  m.run.findings_json = findings.dump();
  m.findings = store::ParseFindings(m.run.findings_json);
  m.latency_limits = {{.metric = "ttft", .percentile = 95, .max_ms = 100}};
  m.charts.steady_ttft_ms[kHostile] = {1, 2, 3};
  m.charts.sweep_unit = kHostile;
  m.charts.sweep = {{.name = kHostile, .points = {{1, 2}, {2, 3}}}};
  m.charts.timeline = {{.name = "sent/s", .points = {{0, 1}, {1, 2}}}};
  m.charts.phases = {{kHostile, {0, 1}}};
  m.charts.score_levels[kHostile] = {{1, 2}, {2, 3}};
  m.notes = {kHostile};
  // The cost section names the price's source and the final stage.
  m.cost = ComputeCost(
      store::StoredCost{
          .price_per_hour = 1, .per = "gpu", .count = 1, .currency = "USD", .source = kHostile},
      m.findings, m.quality);
  return m;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST_CASE("hostile text in a report stays text in HTML and JUnit", "[report]") {
  const ReportModel m = HostileModel();
  const std::string html = ReportHtml(m);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find(" onerror=\"") == std::string::npos);  // as text it is harmless: onerror=&quot;
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("&quot;&#39;&amp;") != std::string::npos);
  CHECK(html.find("source: &lt;script&gt;alert(1)") != std::string::npos);  // the cost's source
  // Every <svg> the report opens, it closes: none is closed early by a name.
  CHECK(Count(html, "<svg") >= 4);
  CHECK(Count(html, "<svg") == Count(html, "</svg>"));
  const std::string junit = ReportJunit(m);
  CHECK(junit.find("<script") == std::string::npos);
  CHECK(junit.find("name=\"&lt;script&gt;") != std::string::npos);
  CHECK(Count(junit, "<testcase ") == 3);
}

TEST_CASE("hostile text cannot break a Markdown table", "[report]") {
  ReportModel m = HostileModel();
  m.checks[0].name = "a | b\nc";
  const std::string md = ReportMarkdown(m);
  CHECK(md.find("| a \\| b c | FAIL |") != std::string::npos);
  // Markdown renderers pass HTML through: none reaches them.
  CHECK(md.find("<script") == std::string::npos);
  CHECK(md.find("<img") == std::string::npos);
  CHECK(md.find("# Release report: &lt;script&gt;") != std::string::npos);
}

TEST_CASE("links, images and code spans in model text are not live in Markdown", "[report]") {
  const std::string hostile =
      "[x](javascript:alert(1)) ![](http://evil.example/p.png) `run me` <http://evil.example> "
      "\\[y]";
  const std::string shown =
      "\\[x\\](javascript:alert(1)) !\\[\\](http://evil.example/p.png) \\`run me\\` "
      "&lt;http://evil.example&gt; \\\\\\[y\\]";
  ReportModel m = HostileModel();
  m.checks[0].detail = hostile;
  m.verdict_reasons = {hostile};
  m.notes = {"first line\n[ref]: javascript:alert(1)\n    code"};
  m.baseline_lines = {"baseline\n<b>bold</b>"};
  const std::string md = ReportMarkdown(m);
  INFO(md);
  CHECK(md.find("| " + shown + " |") != std::string::npos);  // the check's detail cell
  CHECK(md.find("- " + shown + "\n") != std::string::npos);  // the verdict's reason
  // A line break cannot start a reference definition or a block of its own.
  CHECK(md.find("- first line \\[ref\\]: javascript:alert(1)     code\n") != std::string::npos);
  CHECK(md.find("    baseline <b>bold</b>\n") != std::string::npos);  // inside the code block
  for (const char* live : {"[x](", "![](", "\n[ref]", "`run me`", "<http"})
    CHECK(md.find(live) == std::string::npos);
}

TEST_CASE("the stage table says the same in Markdown and HTML", "[report]") {
  ReportModel m = HostileModel();
  const json steady = {{"phase", "steady"},
                       {"metrics",
                        {{"ttft_ms", {{"count", 10}, {"p50", 12.34}, {"p95", 40.5}}},
                         {"e2e_ms", {{"count", 10}, {"p95", 900.5}}}}}};
  json findings = json::parse(m.run.findings_json);
  findings["stages"] = {{{"name", "bare"}, {"steps", {steady}}},
                        {{"name", "tools | <b>"},
                         {"steps", {steady}},
                         {"added_over_previous_stage", {{"over", "bare"}, {"ttft_p95_ms", 7.26}}}},
                        {{"name", "skipped stage"}, {"skipped", true}, {"steps", json::array()}}};
  m.findings = store::ParseFindings(findings.dump());
  const std::string md = ReportMarkdown(m);
  CHECK(md.find("| stage | steady ttft p50 | steady ttft p95 | steady e2e p95 | burst ttft p95 | "
                "added over previous (ttft p95) |\n| --- | --- | --- | --- | --- | --- |\n") !=
        std::string::npos);
  CHECK(md.find("| bare | 12.3 | 40.5 | 900.5 | - | - |\n") != std::string::npos);
  CHECK(md.find("| tools \\| &lt;b&gt; | 12.3 | 40.5 | 900.5 | - | 7.3 ms |\n") !=
        std::string::npos);
  CHECK(md.find("| skipped stage |") == std::string::npos);  // no row for a stage not run
  const std::string html = ReportHtml(m);
  CHECK(html.find("<table><tr><th>stage</th><th>steady ttft p50</th><th>steady ttft p95</th>"
                  "<th>steady e2e p95</th><th>burst ttft p95</th><th>added over previous (ttft "
                  "p95)</th></tr>\n<tr><td>bare</td><td>12.3</td>") != std::string::npos);
  CHECK(html.find("<tr><td>tools | &lt;b&gt;</td><td>12.3</td><td>40.5</td><td>900.5</td><td>-"
                  "</td><td>7.3 ms</td></tr>") != std::string::npos);
}

TEST_CASE("the report says, beside the steps' figures, when the client may have limited them",
          "[report]") {
  ReportModel m = HostileModel();
  json steady = {{"phase", "steady"},
                 {"requests", {{"sent", 400}}},
                 {"throughput", {{"achieved_rate", 19.5}}},
                 {"client_warnings", json::array()}};
  json sweep = {{"phase", "sweep"},
                {"level", 20000},
                {"level_unit", "req/s"},
                {"requests", {{"sent", 9000}}},
                {"throughput", {{"achieved_rate", 8123.456}}},
                {"client_warnings", {"a worker thread was 99% busy", kHostile}}};
  json findings = json::parse(m.run.findings_json);
  findings["stages"] = {{{"name", "bare"}, {"steps", {steady, steady}}}};
  m.findings = store::ParseFindings(findings.dump());
  CHECK(
      ReportMarkdown(m).find("Client check: the load generator kept up in every step (2 checked); "
                             "what was measured is the application's.") != std::string::npos);
  CHECK(ReportMarkdown(m).find("the client may have limited it |") == std::string::npos);

  findings["stages"] = {{{"name", "bare"}, {"steps", {steady, sweep}}}};
  m.findings = store::ParseFindings(findings.dump());
  const std::string md = ReportMarkdown(m);
  CHECK(md.find("Client check: the load generator may have limited 1 of the 2 steps checked") !=
        std::string::npos);
  CHECK(md.find("| bare | sweep 20000 req/s | 9000 | 8123.46 | a worker thread was 99% busy |") !=
        std::string::npos);
  const std::string html = ReportHtml(m);
  CHECK(html.find("<tr><td>bare</td><td>sweep 20000 req/s</td><td>9000</td><td>8123.46</td><td>a "
                  "worker thread was 99% busy</td></tr>") != std::string::npos);
  CHECK(html.find("<script>") == std::string::npos);  // the hostile warning stays text
  CHECK(Count(md, "&lt;script&gt;") > 0);

  // A run stored before every step was checked says nothing of its client.
  steady.erase("client_warnings");
  findings["stages"] = {{{"name", "bare"}, {"steps", {steady}}}};
  m.findings = store::ParseFindings(findings.dump());
  CHECK(ReportMarkdown(m).find("Client check") == std::string::npos);
  CHECK(ReportHtml(m).find("Client check") == std::string::npos);
}

}  // namespace
}  // namespace stagegate::report
