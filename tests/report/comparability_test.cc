// Which parts of two runs' configurations differ, on the canonical scenario of a real run.

#include "report/comparability.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

store::RunInfo RunOf(const json& scenario) {
  return {.id = "run",
          .scenario_name = "report-test",
          .scenario_file = "report.yaml",
          .scenario_json = scenario.dump()};
}

const json kScenario =
    json::parse(testing::ReadText(testing::Testdata("report/golden/report-test.scenario.json")));

TEST_CASE("a run is comparable with itself and with a change of the application alone",
          "[report][compare]") {
  CHECK(Differences(RunOf(kScenario), RunOf(kScenario)).empty());
  json other_profile = kScenario;  // the reference application's latency profile: what changed
  other_profile["target"]["sim_profile"] = "sha256:0000";
  CHECK(Differences(RunOf(other_profile), RunOf(kScenario)).empty());
  json described = kScenario;  // the description is not part of the canonical scenario anyway
  described["name"] = "renamed";
  CHECK(Differences(RunOf(described), RunOf(kScenario)).empty());
}

TEST_CASE("every part of the workload that differs is named", "[report][compare]") {
  json now = kScenario;
  now["thresholds"]["latency"][0]["max_ms"] = 1500;
  now["corpus"]["sha256"] = "feedfacefeedface";
  now["seed"] = 20;
  now["target"]["timeouts"]["total_ms"] = 20000;
  now["manifest"]["sampling"]["temperature"] = 0.7;
  const std::vector<std::string> d = Differences(RunOf(now), RunOf(kScenario));
  const auto has = [&d](const std::string& line) {
    INFO(line);
    return std::find(d.begin(), d.end(), line) != d.end();
  };
  CHECK(
      has("thresholds: ttft p95 <= 2000 ms; completion >= 0.9 (baseline) / ttft p95 <= 1500 ms; "
          "completion >= 0.9 (this run)"));
  CHECK(has("corpus: service-desk 2026.11.2 (sha256 " +
            kScenario["corpus"]["sha256"].get<std::string>().substr(0, 12) +
            ") (baseline) / service-desk 2026.11.2 (sha256 feedfacefeed) (this run)"));
  CHECK(has("load profile differs at seed: 19 (baseline) / 20 (this run)"));
  CHECK(has("target differs at timeouts.total_ms: 10000 (baseline) / 20000 (this run)"));
  CHECK(
      has("sampling: max_tokens 400, temperature 0 (baseline) / max_tokens 400, temperature 0.7 "
          "(this run)"));
  CHECK(d.size() == 5);
}

TEST_CASE("a profile run and a scenario run are never comparable", "[report][compare]") {
  store::RunInfo profile{.id = "p",
                         .scenario_name = "profile",
                         .scenario_json = json({{"url", "http://x/v1"}}).dump()};
  CHECK(profile.is_profile());
  CHECK_FALSE(RunOf(kScenario).is_profile());
  // A scenario may be named "profile": its scenario file tells it from one.
  store::RunInfo named_profile = RunOf(kScenario);
  named_profile.scenario_name = "profile";
  named_profile.scenario_file = "scenarios/profile.yaml";
  CHECK_FALSE(named_profile.is_profile());
  const std::vector<std::string> d = Differences(profile, RunOf(kScenario));
  REQUIRE(d.size() == 1);
  CHECK(d[0].starts_with("kind: scenario run (baseline) / profile run (this run)"));
  // What cannot be read is compared as it is: two unreadable configurations are alike, one
  // unreadable and one readable are not.
  store::RunInfo broken = RunOf(kScenario);
  broken.scenario_json = "not json";
  CHECK_FALSE(Differences(broken, RunOf(kScenario)).empty());
}

TEST_CASE("a profile's merged shards are comparable with the profile run whole, not another seed",
          "[report][compare]") {
  const json whole = {{"url", "http://x/v1"},     {"model", "m"},
                      {"request_rate", {10, 20}}, {"seed", 7},
                      {"shard", "1/1"},           {"start_at_unix_ms", nullptr}};
  json merged = whole;
  merged["shard"] = nullptr;
  merged["merged_shards"] = 3;
  merged["start_at_unix_ms"] = 1'800'000'000'000;
  const auto profile = [](const json& config) {
    return store::RunInfo{.id = "p", .scenario_name = "profile", .scenario_json = config.dump()};
  };
  CHECK(Differences(profile(merged), profile(whole)).empty());
  json reseeded = merged;
  reseeded["seed"] = 8;
  const std::vector<std::string> d = Differences(profile(reseeded), profile(whole));
  REQUIRE(d.size() == 1);
  CHECK(d[0] ==
        "load profile: request_rate (10; 20), seed 7 (baseline) / request_rate (10; 20), seed 8 "
        "(this run)");
}

}  // namespace
}  // namespace stagegate::report
