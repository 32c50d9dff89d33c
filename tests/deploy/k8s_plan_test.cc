// The plan of a sharded run: names, the common start, the bundle's layout and the Secret's
// variables, from a loaded scenario.

#include "deploy/k8s_plan.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "test_util.h"

namespace stagegate::deploy {
namespace {

manifest::Bundle Demo() {
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Bundle> bundle =
      manifest::LoadBundle(testing::SourcePath("scenarios/demo.yaml"), diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle.has_value());
  return *bundle;
}

TEST_CASE("a DNS-1123 label is lower-case letters, digits and inner hyphens", "[deploy]") {
  CHECK(IsDnsLabel("demo-1202-100000", kMaxNameLength));
  CHECK(IsDnsLabel("a", 1));
  CHECK_FALSE(IsDnsLabel("", 63));
  CHECK_FALSE(IsDnsLabel("Demo", 63));
  CHECK_FALSE(IsDnsLabel("-demo", 63));
  CHECK_FALSE(IsDnsLabel("demo-", 63));
  CHECK_FALSE(IsDnsLabel("de_mo", 63));
  CHECK_FALSE(IsDnsLabel("ab", 1));
}

TEST_CASE("a plan starts on a whole second and is named after the scenario and the start",
          "[deploy]") {
  const manifest::Bundle demo = Demo();
  K8sPlan plan;
  plan.start_in_s = 120;
  plan.cpu = 3.9;
  // 2026-12-02T10:00:00.001Z: the start rounds up to 10:02:01.
  CompletePlan(demo, BundleLayout{.scenario = "/work/scenarios/demo.yaml"}, 1796205600001, plan);
  CHECK(plan.start_unix_s == 1796205721);
  CHECK(plan.name == "demo-1202-100201");
  CHECK(plan.scenario == "/work/scenarios/demo.yaml");
  CHECK(plan.files.empty());
  CHECK(plan.workers == 3);

  K8sPlan named;
  named.name = "given";
  named.cpu = 0.5;
  CompletePlan(demo, BundleLayout{}, 1796205600000, named);
  CHECK(named.name == "given");
  CHECK(named.workers == 1);
}

TEST_CASE("against the sim, the personas' tokens are optional variables of the Secret",
          "[deploy]") {
  const manifest::Bundle demo = Demo();
  K8sPlan plan;
  CompletePlan(demo, BundleLayout{}, 0, plan);
  REQUIRE(!plan.secrets.empty());
  CHECK(std::all_of(plan.secrets.begin(), plan.secrets.end(),
                    [](const SecretEnv& secret) { return secret.optional; }));
  CHECK(std::any_of(plan.secrets.begin(), plan.secrets.end(),
                    [](const SecretEnv& secret) { return secret.name == "SD_TOKEN_CONTRACTOR"; }));
}

TEST_CASE("the bundle is laid out from the folder that holds all its files", "[deploy]") {
  const manifest::Bundle demo = Demo();
  Result<BundleLayout> in_image = LayOutBundle(demo.scenario, true);
  REQUIRE(in_image.ok());
  CHECK(in_image->scenario == "/work/scenarios/demo.yaml");
  CHECK(in_image->files.empty());

  Result<BundleLayout> layout = LayOutBundle(demo.scenario, false);
  REQUIRE(layout.ok());
  CHECK(layout->scenario == std::string(kBundleMount) + "/scenarios/demo.yaml");
  REQUIRE(layout->files.size() > 2);
  CHECK(layout->files.front().path == "scenarios/demo.yaml");
  CHECK(layout->files.front().key == "scenarios.demo.yaml");
  CHECK(std::any_of(layout->files.begin(), layout->files.end(), [](const BundleFile& file) {
    return file.path == "rubrics/service-desk.yaml";
  }));
}

TEST_CASE("a sim target needs --target-url, and a URL's password stays out of the ConfigMap",
          "[deploy]") {
  manifest::Bundle demo = Demo();
  K8sPlan plan;
  plan.shards = 2;
  const std::vector<std::string> sim = PlanProblems(demo, plan, false, "demo.yaml");
  REQUIRE(sim.size() == 1);
  CHECK(sim[0].starts_with("demo.yaml targets the built-in sim: give --target-url"));
  plan.target_url = "http://app:8000";
  CHECK(PlanProblems(demo, plan, false, "demo.yaml").empty());

  demo.scenario.target.metrics_url = "http://user:secret@app:8000/metrics";
  const std::vector<std::string> url = PlanProblems(demo, plan, false, "demo.yaml");
  REQUIRE(url.size() == 1);
  CHECK(
      url[0].starts_with("demo.yaml has a URL with a user or password (http://app:8000/metrics)"));
  CHECK(url[0].find("secret") == std::string::npos);
  CHECK(PlanProblems(demo, plan, true, "demo.yaml").empty());
}

}  // namespace
}  // namespace stagegate::deploy
