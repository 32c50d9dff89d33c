// A profile run read from the store alone, as any run is: `report` shows its levels, capacity
// finding and client check; `compare` takes two profile runs level by level; `merge` joins its
// shards after their output folders are gone. On a fake clock against the scripted application.

#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "invoke.h"
#include "scenario/runner.h"
#include "scenario/scripted_app.h"
#include "store/sqlite.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// `stagegate --db DB profile ... ARGS` on a fake clock; the run id it printed.
std::string Profile(const std::string& db, std::vector<std::string> args) {
  FakeClock clock;
  testing::ScriptedApp app;
  const scenario::RunSeam seam = scenario::RunSeam::Scripted(clock, app.Script());
  args.insert(args.begin(), {"--db", db, "profile", "--url", "http://scripted.invalid/v1",
                             "--model", "desk", "--workers", "1", "--seed", "7"});
  const Invocation ran = Invoke(args, &seam);
  INFO(ran.out << ran.err);
  REQUIRE((ran.exit_code == 0 || ran.exit_code == 1 || ran.exit_code == 4));  // gate: any verdict
  const size_t at = ran.out.find("\nrun profile-");
  REQUIRE(at != std::string::npos);
  return ran.out.substr(at + 5, ran.out.find_first_of(" \n", at + 5) - (at + 5));
}

// `count` shards of one profile (`args` and --shard I/count), each with its store in
// DIR/shardI and its outputs in DIR/shardI/out; their folders.
std::vector<std::string> ProfileShards(const testing::TempDir& dir, int count,
                                       const std::vector<std::string>& args) {
  std::vector<std::string> shards;
  for (int i = 1; i <= count; ++i) {
    const std::string shard = dir / ("shard" + std::to_string(i));
    std::filesystem::create_directories(shard);
    std::vector<std::string> shard_args = args;
    shard_args.insert(shard_args.end(), {"--shard", std::to_string(i) + "/" + std::to_string(count),
                                         "--out", shard + "/out"});
    Profile(shard + "/stagegate.db", shard_args);
    shards.push_back(shard);
  }
  return shards;
}

// `stagegate --db DIR/merged.db merge DIR/merged SHARDS...`.
Invocation Merge(const testing::TempDir& dir, const std::vector<std::string>& shards) {
  std::vector<std::string> merge = {"--db", dir / "merged.db", "merge", dir / "merged"};
  merge.insert(merge.end(), shards.begin(), shards.end());
  return Invoke(merge);
}

TEST_CASE("report shows a profile run's levels, capacity finding and client check",
          "[cli][profile][report]") {
  testing::TempDir dir;
  const std::string run = Profile(dir / "store.db", {"--request-rate", "8,14", "--duration", "5",
                                                     "--slo", "ttft_ms:300", "--out", dir / "out"});
  std::filesystem::remove_all(dir / "out");  // the store alone
  const Invocation reported = Invoke(
      {"--db", dir / "store.db", "report", run, "--out", dir / "report", "--format", "md,json"});
  INFO(reported.out << reported.err);
  REQUIRE(reported.exit_code != 2);
  const std::string md = testing::ReadText(dir / "report/report.md");
  INFO(md);
  CHECK(md.find("### Sweep levels (final stage)") != std::string::npos);
  CHECK(md.find("| 8 req/s | ") != std::string::npos);
  CHECK(md.find("| 14 req/s | ") != std::string::npos);
  const json findings = json::parse(testing::ReadText(
      dir / "report/report.json"))["conditions"]["responsiveness"]["stages"][0]["capacity"];
  REQUIRE(findings.is_object());
  // As Markdown shows it: "<=" escaped.
  CHECK(md.find("Where acceptable responsiveness ends: " +
                testing::ReplaceAll(findings["finding"].get<std::string>(), "<", "&lt;")) !=
        std::string::npos);
  // The fake clock's client never falls behind.
  CHECK(md.find("Client check: the load generator kept up in every step (2 checked)") !=
        std::string::npos);
  CHECK(md.find("automated checks not run: a profile run keeps no scenario or corpus") !=
        std::string::npos);
}

TEST_CASE("compare takes two profile runs from the store, level by level",
          "[cli][profile][compare]") {
  testing::TempDir dir;
  const std::vector<std::string> args = {"--request-rate", "4,8", "--requests", "30", "--out"};
  std::vector<std::string> first = args, second = args;
  first.push_back(dir / "a");
  second.push_back(dir / "b");
  const std::string baseline = Profile(dir / "store.db", first);
  const std::string current = Profile(dir / "store.db", second);
  std::filesystem::remove_all(dir / "a");
  std::filesystem::remove_all(dir / "b");
  const Invocation compared = Invoke({"--db", dir / "store.db", "compare", current, baseline});
  INFO(compared.out << compared.err);
  CHECK(compared.exit_code == 0);
  CHECK(compared.out.find("request_rate 4") != std::string::npos);
  CHECK(compared.out.find("request_rate 8") != std::string::npos);
}

TEST_CASE("merge joins a profile's shards from their stores after their folders are gone",
          "[cli][profile][shard]") {
  testing::TempDir dir;
  const std::vector<std::string> shards =
      ProfileShards(dir, 3, {"--request-rate", "6", "--duration", "5", "--slo", "ttft_ms:300"});
  for (const std::string& shard : shards)
    std::filesystem::remove_all(shard + "/out");
  const Invocation merged = Merge(dir, shards);
  INFO(merged.out << merged.err);
  REQUIRE(merged.exit_code == 0);
  const json profile = json::parse(testing::ReadText(dir / "merged/profile.json"));
  REQUIRE(profile["sharding"]["shards"].size() == 3);
  for (const json& shard : profile["sharding"]["shards"])
    CHECK(shard["self_check"] == "from its store");
  // Each shard's client, from its store: three one-worker clients.
  CHECK(profile["levels"][0]["self_check"]["workers"] == 3);
  // The level's kind and rate, from its stored sweep step (closed_loop false: a request rate).
  CHECK(profile["levels"][0]["kind"] == "request_rate");
  CHECK(profile["levels"][0]["value"] == 6);
  CHECK(merged.out.find("\n6/s ") != std::string::npos);
  // The merged run is a profile run whose findings the store holds, as any run's.
  const Invocation reported =
      Invoke({"--db", dir / "merged.db", "report", profile["run_id"].get<std::string>(), "--out",
              dir / "report", "--format", "md"});
  INFO(reported.err);
  CHECK(testing::ReadText(dir / "report/report.md").find("| 6 req/s | ") != std::string::npos);
}

TEST_CASE("merge takes a profile's stored config of the wrong types without throwing",
          "[cli][profile][shard][hostile]") {
  testing::TempDir dir;
  const std::vector<std::string> shards =
      ProfileShards(dir, 2, {"--request-rate", "4", "--duration", "3"});
  for (const std::string& shard : shards) {
    // A store edited by hand: the config's text fields hold numbers, arrays and null.
    auto db = store::Database::Open(shard + "/stagegate.db");
    REQUIRE(db.ok());
    REQUIRE((*db)
                ->Exec("UPDATE runs SET scenario_json = json_set(scenario_json, '$.model', 5, "
                       "'$.endpoint', json('[1]'), '$.stream', 'yes', '$.arrival', 3, '$.url', "
                       "json('null'), '$.token_counts', json('{}'), '$.seed', 'seven')")
                .ok());
  }
  const Invocation merged = Merge(dir, shards);
  INFO(merged.out << merged.err);
  REQUIRE(merged.exit_code == 0);
  const json aiperf = json::parse(testing::ReadText(dir / "merged/profile_export_aiperf.json"));
  const json& endpoint = aiperf["input_config"]["endpoint"];
  CHECK(endpoint["model_names"] == json::array({""}));
  CHECK(endpoint["type"] == "");
  CHECK(endpoint["streaming"] == true);
  CHECK(aiperf["input_config"]["loadgen"]["arrival"] == "");
  CHECK(aiperf["input_config"]["input"]["random_seed"].is_null());
}

}  // namespace
}  // namespace stagegate::cli
