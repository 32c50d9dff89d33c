// The scenarios, corpus and rubric the project ships validate, and the demo material is what the
// demo needs: enough tasks of every kind, a persona without HR access, restricted documents with
// canaries.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "base/files.h"
#include "manifest/bundle.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::SourcePath;

Bundle Load(const std::string& relative) {
  Diagnostics diagnostics;
  std::optional<Bundle> bundle = LoadBundle(SourcePath(relative), diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle.has_value());
  return *bundle;
}

TEST_CASE("every shipped scenario validates", "[manifest][shipped]") {
  Result<std::vector<std::string>> scenarios = ListFiles(SourcePath("scenarios"), ".yaml");
  REQUIRE(scenarios.ok());
  std::set<std::string> names;
  for (const std::string& path : *scenarios) {
    Diagnostics diagnostics;
    INFO(path);
    CHECK(LoadBundle(path, diagnostics).has_value());
    CHECK(diagnostics.ToString() == "");
    names.insert(path.substr(path.rfind('/') + 1));
  }
  CHECK(names.count("demo.yaml") == 1);
  CHECK(names.count("static-128.yaml") == 1);
  CHECK(names.count("poisson-512.yaml") == 1);
}

TEST_CASE("the demo runs every stage, every phase and both fault controls on the sim",
          "[manifest][shipped]") {
  const Scenario scenario = Load("scenarios/demo.yaml").scenario;
  CHECK(scenario.target.kind == TargetKind::kSim);
  std::vector<std::string> stages;
  for (const Stage& stage : scenario.stages)
    stages.push_back(stage.name);
  CHECK(stages == std::vector<std::string>{"bare", "retrieval", "identity", "tools"});
  for (PhaseKind kind : {PhaseKind::kSteady, PhaseKind::kBurst, PhaseKind::kSweep,
                         PhaseKind::kOverload, PhaseKind::kRecovery}) {
    CHECK(scenario.FindPhase(kind) != nullptr);
  }
  CHECK_FALSE(scenario.faults.access_denial.empty());
  CHECK_FALSE(scenario.faults.tool_outage.empty());
  std::vector<EffectiveStage> effective = EffectiveStages(scenario);
  CHECK(effective.back().capabilities.size() == 3);
  CHECK(effective.back().persona_credentials);
  CHECK(effective.back().tools);
}

TEST_CASE("the fixed-length and Poisson scenarios say what they promise", "[manifest][shipped]") {
  const Scenario fixed = Load("scenarios/static-128.yaml").scenario;
  REQUIRE(fixed.input.input_tokens.has_value());
  CHECK(fixed.input.input_tokens->mean == 128);
  CHECK(fixed.input.input_tokens->std == 0);
  CHECK(fixed.input.output_tokens->mean == 128);
  CHECK(fixed.input.extra_body == nlohmann::json({{"ignore_eos", true}, {"min_tokens", 128}}));
  const Scenario poisson = Load("scenarios/poisson-512.yaml").scenario;
  const LoadPhase* steady = poisson.FindPhase(PhaseKind::kSteady);
  REQUIRE(steady != nullptr);
  CHECK(steady->arrival == Arrival::kPoisson);
  CHECK(steady->rate == 10);
  CHECK(poisson.input.input_tokens->mean == 512);
  CHECK(poisson.input.input_tokens->std == 128);
  CHECK(poisson.input.output_tokens->mean == 128);
  CHECK(poisson.input.output_tokens->std == 32);
}

TEST_CASE("the service-desk corpus is large and varied enough for the demo",
          "[manifest][shipped]") {
  const Bundle bundle = Load("scenarios/demo.yaml");
  REQUIRE(bundle.corpus.has_value());
  const Corpus& corpus = *bundle.corpus;
  CHECK(corpus.tasks.size() >= 60);
  CHECK(corpus.personas.size() >= 3);
  CHECK(corpus.documents.size() >= 12);

  std::map<std::string, int> needs;
  for (const Task& task : corpus.tasks) {
    if (task.needs.empty()) ++needs["none"];
    for (Capability need : task.needs)
      ++needs[NameOf(need, kCapabilityNames)];
  }
  for (const char* need : {"none", "retrieval", "identity", "tools"}) {
    INFO(need);
    CHECK(needs[need] >= 8);
  }

  std::set<std::string> canaries;
  bool hr_restricted = false;
  for (const Document& document : corpus.documents) {
    if (document.access.empty()) continue;
    CHECK_FALSE(document.canary.empty());
    CHECK(document.body.find(document.canary) != std::string::npos);
    canaries.insert(document.canary);
    hr_restricted |= std::count(document.access.begin(), document.access.end(), "hr") > 0;
  }
  CHECK(canaries.size() >= 2);
  CHECK(hr_restricted);

  auto reads_hr = [](const Persona& persona) {
    return std::count(persona.groups.begin(), persona.groups.end(), "hr") > 0;
  };
  CHECK(std::any_of(corpus.personas.begin(), corpus.personas.end(), reads_hr));
  CHECK_FALSE(std::all_of(corpus.personas.begin(), corpus.personas.end(), reads_hr));

  // No canary may appear in a prompt or a reference answer: that would be a leak by design.
  for (const Task& task : corpus.tasks) {
    for (const std::string& canary : canaries) {
      INFO(task.id);
      CHECK(task.prompt.find(canary) == std::string::npos);
      CHECK(task.reference.find(canary) == std::string::npos);
    }
  }
}

TEST_CASE("the service-desk rubric anchors every criterion and has a hard safety floor",
          "[manifest][shipped]") {
  const Bundle bundle = Load("scenarios/demo.yaml");
  REQUIRE(bundle.rubric.has_value());
  const Rubric& rubric = *bundle.rubric;
  for (const char* id : {"correctness", "groundedness", "helpfulness", "permission_safety"}) {
    INFO(id);
    const Criterion* criterion = rubric.Find(id);
    REQUIRE(criterion != nullptr);
    CHECK(criterion->scale.size() >= 2);
  }
  CHECK(rubric.Find("correctness")->min_level() == 1);
  CHECK(rubric.Find("correctness")->max_level() == 5);
  CHECK(rubric.Find("permission_safety")->hard);
  CHECK_FALSE(rubric.Find("correctness")->hard);
}

}  // namespace
}  // namespace stagegate::manifest

namespace stagegate::manifest {
namespace {

// docs/formats.md opens with a complete scenario; it must stay a valid one.
TEST_CASE("the annotated scenario in docs/formats.md validates", "[manifest][shipped]") {
  std::string doc = testing::ReadText(testing::SourcePath("docs/formats.md"));
  size_t start = doc.find("```yaml\n");
  REQUIRE(start != std::string::npos);
  start += 8;
  size_t end = doc.find("```", start);
  REQUIRE(end != std::string::npos);
  std::string example = doc.substr(start, end - start);
  REQUIRE(example.find("name: demo") != std::string::npos);
  example = testing::ReplaceAll(example, "../corpus/", testing::SourcePath("corpus/"));
  example = testing::ReplaceAll(example, "../rubrics/", testing::SourcePath("rubrics/"));
  testing::TempDir dir;
  testing::WriteText(dir / "example.yaml", example);
  Diagnostics diagnostics;
  CHECK(LoadBundle(dir / "example.yaml", diagnostics).has_value());
  CHECK(diagnostics.ToString() == "");
}

}  // namespace
}  // namespace stagegate::manifest
