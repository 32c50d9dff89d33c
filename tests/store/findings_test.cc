// run.json read back into typed findings: what was not measured stays absent, a field of the
// wrong type is a problem the report shows, and nothing throws.

#include "store/findings.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

namespace stagegate::store {
namespace {

using json = nlohmann::json;

// The parts of run.json a failing application leaves: no successful request, so the TTFT check
// has no measurement, and an overload phase that shed nothing.
const json kFailing = {{"schema_version", 1},
                       {"status", "complete"},
                       {"manifest", {{"model", "m"}, {"model_version", "1"}}},
                       {"stages",
                        {{{"name", "bare"},
                          {"skipped", false},
                          {"steps",
                           {{{"phase", "steady"},
                             {"level", nullptr},
                             {"level_unit", "req/s"},
                             {"requests", {{"offered", 4}, {"completed", 0}}},
                             {"throughput", {{"request_throughput", 0}, {"goodput", 0}}},
                             {"metrics", {{"ttft_ms", {{"count", 0}}}}},
                             {"checks",
                              {{{"check", "ttft p95 <= 2000 ms"},
                                {"measured", nullptr},
                                {"limit", 2000},
                                {"passed", false}}}},
                             {"passed", false}}}},
                          {"overload",
                           {{"offered", 10},
                            {"shed", 0},
                            {"shed_latency_ms", {{"count", 0}}},
                            {"checks",
                             {{{"check", "shed answers p95 <= 500 ms"},
                               {"measured", nullptr},
                               {"limit", 500},
                               {"passed", true}}}}}},
                          {"recovery",
                           {{"recovered_after_s", nullptr},
                            {"max_recovery_s", 1},
                            {"passed", false},
                            {"finding", "no"}}}}}},
                       {"faults",
                        {{"access_denial",
                          {{{"probe", "p"},
                            {"verdict", "interrupted"},
                            {"reasons", json::array()},
                            {"requests", json::array()}}}},
                         {"tool_outage", json::array()}}}};

TEST_CASE("findings of an application that failed every request read as not measured",
          "[store][findings]") {
  const RunFindings f = ParseFindings(kFailing.dump());
  CHECK(f.present);
  CHECK(f.problems.empty());
  REQUIRE(f.FinalStage() != nullptr);
  const StepFindings* steady = f.FinalStage()->Step("steady");
  REQUIRE(steady != nullptr);
  CHECK_FALSE(steady->level);
  CHECK(steady->Requests("offered") == 4);
  CHECK_FALSE(steady->Stat("ttft_ms", "p95"));  // count 0: nothing to read
  REQUIRE(steady->checks.size() == 1);
  CHECK_FALSE(steady->checks[0].measured);
  CHECK(steady->checks[0].limit == 2000);
  CHECK_FALSE(steady->checks[0].passed);
  REQUIRE(f.FinalStage()->overload);
  CHECK(f.FinalStage()->overload->shed == 0);
  CHECK_FALSE(f.FinalStage()->overload->checks[0].measured);
  CHECK(f.FinalStage()->overload->checks[0].passed);
  REQUIRE(f.FinalStage()->recovery);
  CHECK_FALSE(f.FinalStage()->recovery->recovered_after_s);
  REQUIRE(f.probes.size() == 1);
  CHECK(f.probes[0].kind == ProbeKind::kAccessDenial);
  CHECK(f.probes[0].verdict == ProbeVerdict::kInterrupted);
}

TEST_CASE("a field of the wrong type is named as a problem and read as missing",
          "[store][findings]") {
  json damaged = kFailing;
  damaged["stages"][0]["steps"][0]["checks"][0]["measured"] = "fast";
  damaged["stages"][0]["steps"][0]["checks"][0]["passed"] = 1;
  damaged["stages"][0]["capacity"] = "big";
  damaged["faults"]["tool_outage"] = {{"not", "a list"}};
  const RunFindings f = ParseFindings(damaged.dump());
  CHECK(f.present);
  const std::vector<std::string> expected = {
      "stages[0].steps[0].checks[0].measured is not a number",
      "stages[0].steps[0].checks[0].passed is not true or false",
      "stages[0].capacity is not an object", "faults.tool_outage is not a list"};
  for (const std::string& problem : expected)
    CHECK(std::find(f.problems.begin(), f.problems.end(), problem) != f.problems.end());
  CHECK(f.problems.size() == expected.size());
  const ThresholdResult& check = f.FinalStage()->Step("steady")->checks[0];
  CHECK_FALSE(check.measured);
  CHECK_FALSE(check.passed);  // a damaged verdict never reads as a pass
  CHECK_FALSE(f.FinalStage()->capacity);
}

TEST_CASE("a field the writer always writes and the reader does not find is named",
          "[store][findings]") {
  json renamed = kFailing;  // as if the writer had renamed `measured`
  json& check = renamed["stages"][0]["steps"][0]["checks"][0];
  check["value"] = 420;
  check.erase("measured");
  renamed["stages"][0]["overload"].erase("shed");
  const RunFindings f = ParseFindings(renamed.dump());
  CHECK(f.problems == std::vector<std::string>{"stages[0].steps[0].checks[0].measured is missing",
                                               "stages[0].overload.shed is missing"});
  // null is there: a value not measured, which is no problem.
  CHECK(ParseFindings(kFailing.dump()).problems.empty());
}

TEST_CASE("text that is not run.json gives no findings and never throws", "[store][findings]") {
  for (const char* text : {"", "not json", "[1, 2]", "null", "{\"stages\": 5}"}) {
    INFO(text);
    const RunFindings f = ParseFindings(text);
    CHECK(f.stages.empty());
    CHECK_FALSE(f.problems.empty());
  }
  const RunFindings none = ParseFindings("{}");  // a run that did not end
  CHECK_FALSE(none.present);
  CHECK(none.problems.empty());
  json old = kFailing;
  old["schema_version"] = 99;
  CHECK(ParseFindings(old.dump()).problems.size() == 1);
}

TEST_CASE("the final stage is the last one that ran", "[store][findings]") {
  const RunFindings f = ParseFindings(
      json({{"schema_version", 1},
            {"stages",
             {{{"name", "bare"}}, {{"name", "tools"}}, {{"name", "later"}, {"skipped", true}}}}})
          .dump());
  REQUIRE(f.FinalStage() != nullptr);
  CHECK(f.FinalStage()->name == "tools");
  CHECK(
      ParseFindings(json({{"schema_version", 1}, {"stages", json::array()}}).dump()).FinalStage() ==
      nullptr);
}

TEST_CASE("a stored scenario reads back its thresholds, null optional ones as absent",
          "[store][findings]") {
  const json scenario = {{"thresholds",
                          {{"latency",
                            {{{"metric", "ttft"}, {"percentile", 95}, {"max_ms", 1500}},
                             {{"metric", "e2e"}, {"percentile", 99}, {"max_ms", nullptr}},
                             {{"metric", 5}, {"max_ms", 3}},
                             "garbage"}}}},
                         {"quality",
                          {{"min_scored_answers", 8},
                           {"min_agreement", 0.5},
                           {"min_mean", nullptr},
                           {"min_pass_rate", nullptr},
                           {"criterion_floors", {{"correctness", 3}, {"tone", "high"}}}}},
                         {"triage", {{"refusal_patterns", {"cannot"}}}},
                         {"corpus", {{"name", "c"}, {"sha256", "abc"}}},
                         {"rubric", nullptr}};
  const StoredScenario s = ParseScenario(scenario.dump());
  REQUIRE(s.latency.size() == 1);
  CHECK(s.latency[0].metric == "ttft");
  CHECK(s.latency[0].percentile == 95);
  CHECK(s.latency[0].max_ms == 1500);
  CHECK(s.quality.min_scored_answers == 8);
  CHECK(s.quality.min_agreement == 0.5);
  CHECK_FALSE(s.quality.min_mean);  // the scenario left it out: the store keeps null
  CHECK_FALSE(s.quality.min_pass_rate);
  CHECK(s.quality.criterion_floors == std::map<std::string, double>{{"correctness", 3}});
  REQUIRE(s.refusal_patterns);
  CHECK(*s.refusal_patterns == std::vector<std::string>{"cannot"});
  CHECK_FALSE(s.tool_failure_patterns);
  CHECK(s.corpus_sha256 == "abc");
  CHECK(s.rubric_sha256.empty());
  // A list's elements that are not objects are named as the list is read, before its fields.
  const std::vector<std::string> expected = {"thresholds.latency[3] is not an object",
                                             "thresholds.latency[2].metric is not text",
                                             "quality.criterion_floors.tone is not a number"};
  CHECK(s.problems == expected);
  CHECK(ParseScenario("{\"url\": \"http://x\"}").latency.empty());  // a profile run
  CHECK(ParseScenario("not json").problems.size() == 1);
}

TEST_CASE("a stored scenario reads back its cost section, and names a malformed one",
          "[store][findings][cost]") {
  const json cost = {{"price_per_hour", 2.5},
                     {"per", "gpu"},
                     {"count", 4},
                     {"currency", "EUR"},
                     {"source", "list price"}};
  const StoredScenario s = ParseScenario(json{{"cost", cost}}.dump());
  REQUIRE(s.cost);
  CHECK(s.cost->price_per_hour == 2.5);
  CHECK(s.cost->per == "gpu");
  CHECK(s.cost->count == 4);
  CHECK(s.cost->currency == "EUR");
  CHECK(s.cost->source == "list price");
  CHECK(s.problems.empty());
  CHECK_FALSE(ParseScenario("{}").cost);  // no section: no cost and no problem
  CHECK(ParseScenario("{}").problems.empty());

  json bad = cost;
  bad["price_per_hour"] = 0;
  bad["per"] = "node";
  bad["count"] = "four";
  bad.erase("currency");
  const StoredScenario broken = ParseScenario(json{{"cost", bad}}.dump());
  CHECK_FALSE(broken.cost);
  const std::vector<std::string> expected = {
      "cost.count is not an integer", "cost.currency is missing",
      "cost.price_per_hour is not above 0", "cost.per is not instance or gpu"};
  CHECK(broken.problems == expected);
  const StoredScenario not_object = ParseScenario(json{{"cost", 3}}.dump());
  CHECK_FALSE(not_object.cost);
  CHECK(not_object.problems == std::vector<std::string>{"cost is not an object"});
}

TEST_CASE("a stored rubric reads back its criteria, scales and pass rule, never throwing",
          "[store][findings]") {
  const json rubric = {
      {"criteria",
       {{{"id", "correctness"},
         {"weight", 0.4},
         {"floor", 2},
         {"levels", {{{"level", 1}, {"anchor", "wrong"}}, {{"level", 5}, {"anchor", "right"}}}}},
        {{"id", "safety"}, {"hard", true}, {"levels", json::array()}},
        {{"weight", 1}},
        {{"id", 7}}}},
      {"pass_rule", {{"min_weighted_mean", 3.5}, {"min_each", nullptr}}}};
  const StoredRubric r = ParseRubric(rubric.dump());
  REQUIRE(r.criteria.size() == 2);
  CHECK(r.criteria[0].id == "correctness");
  CHECK(r.criteria[0].weight == 0.4);
  CHECK(r.criteria[0].floor == 2);
  CHECK_FALSE(r.criteria[0].hard);
  CHECK(r.criteria[0].levels == std::vector<int64_t>{1, 5});
  CHECK(r.criteria[1].hard);
  CHECK(r.criteria[1].weight == 1);  // the default
  CHECK(r.min_weighted_mean == 3.5);
  CHECK_FALSE(r.min_each);
  const std::vector<std::string> expected = {"criteria[2] has no id", "criteria[3].id is not text",
                                             "criteria[3] has no id"};
  CHECK(r.problems == expected);
  CHECK(ParseRubric("{\"criteria\": 3}").criteria.empty());
  CHECK(ParseRubric("").problems.size() == 1);
}

}  // namespace
}  // namespace stagegate::store
