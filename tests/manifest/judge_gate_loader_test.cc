// quality.judge in a scenario: read into the scenario and its canonical form, and every bad value
// named at its file:line:col.

#include <algorithm>
#include <catch2/catch.hpp>

#include "manifest/bundle.h"
#include "manifest/describe.h"
#include "manifest/fingerprint.h"
#include "store/findings.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::TempDir;
using testing::Testdata;
using testing::WriteText;

// A valid scenario on the mini corpus and rubric with `quality` as its quality section.
std::string Scenario(const std::string& quality) {
  return "name: judged\n"
         "manifest: {model: m, model_version: \"1\"}\n"
         "seed: 7\n"
         "corpus: " +
         Testdata("corpora/mini") +
         "\n"
         "rubric: " +
         Testdata("rubrics/mini.yaml") +
         "\n"
         "target: {kind: sim}\n"
         "stages: [{name: bare}]\n"
         "thresholds: {completion_rate: 0.9}\n"
         "phases:\n"
         "  steady: {rate: 2, duration_s: 1}\n"
         "quality:\n" +
         quality;
}

TEST_CASE("quality.judge is read, and reaches the stored scenario", "[judge_calibration]") {
  TempDir dir;
  WriteText(dir / "scenario.yaml",
            Scenario("  judge: {model: judge-x, min_kappa: 0.75, min_overlap: 40}\n"));
  Diagnostics diagnostics;
  const std::optional<Bundle> bundle = LoadBundle(dir / "scenario.yaml", diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle);
  REQUIRE(bundle->scenario.quality.judge);
  CHECK(bundle->scenario.quality.judge->model == "judge-x");
  CHECK(bundle->scenario.quality.judge->min_kappa == 0.75);
  CHECK(bundle->scenario.quality.judge->min_overlap == 40);
  const store::StoredScenario stored = store::ParseScenario(CanonicalScenario(*bundle).dump());
  REQUIRE(stored.quality.judge);
  CHECK(stored.quality.judge->model == "judge-x");
  CHECK(stored.quality.judge->min_kappa == 0.75);
  CHECK(stored.quality.judge->min_overlap == 40);
  // validate says what the key allows.
  const std::vector<std::string> described = DescribeScenario(*bundle, ComputeFingerprint(*bundle));
  CHECK(std::any_of(described.begin(), described.end(), [](const std::string& line) {
    return line.rfind("condition 2  ", 0) == 0 &&
           line.ends_with(
               "; judge judge-x may score what reviewers did not once its kappa's lower "
               "bound >= 0.75 on >= 40 answers both scored");
  }));

  // The defaults, and a scenario without the key keeps its canonical form (and fingerprint).
  WriteText(dir / "scenario.yaml", Scenario("  judge: {model: judge-x}\n"));
  const std::optional<Bundle> defaults = LoadBundle(dir / "scenario.yaml", diagnostics);
  REQUIRE(defaults);
  CHECK(defaults->scenario.quality.judge->min_kappa == 0.7);
  CHECK(defaults->scenario.quality.judge->min_overlap == 50);
  WriteText(dir / "scenario.yaml", Scenario("  min_scored_answers: 30\n"));
  const std::optional<Bundle> without = LoadBundle(dir / "scenario.yaml", diagnostics);
  REQUIRE(without);
  CHECK_FALSE(without->scenario.quality.judge);
  CHECK_FALSE(CanonicalScenario(*without)["quality"].contains("judge"));
}

TEST_CASE("a hostile quality.judge is named at its file:line:col", "[judge_calibration]") {
  TempDir dir;
  WriteText(dir / "scenario.yaml",
            Scenario("  judge: {min_kappa: 2, min_overlap: -1, min_kapa: 0.5}\n"));
  Diagnostics diagnostics;
  CHECK_FALSE(LoadBundle(dir / "scenario.yaml", diagnostics).has_value());
  const std::string problems = testing::ReplaceAll(diagnostics.ToString(), dir.path() + "/", "");
  CHECK(problems ==
        "scenario.yaml:12:10: judge: missing required key 'model'\n"
        "scenario.yaml:12:22: 'min_kappa' must be between -1 and 1, got 2\n"
        "scenario.yaml:12:38: 'min_overlap' must be at least 2, got -1\n"
        "scenario.yaml:12:42: unknown key 'min_kapa' (did you mean 'min_kappa'?)\n");

  WriteText(dir / "scenario.yaml", Scenario("  judge: gpt\n"));
  Diagnostics not_a_map;
  CHECK_FALSE(LoadBundle(dir / "scenario.yaml", not_a_map).has_value());
  CHECK(testing::ReplaceAll(not_a_map.ToString(), dir.path() + "/", "") ==
        "scenario.yaml:12:10: judge must be a mapping, got 'gpt'\n");
}

}  // namespace
}  // namespace stagegate::manifest
