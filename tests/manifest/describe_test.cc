// The scenario in words: what `stagegate validate` prints of it, and the conditions it can never
// decide.

#include "manifest/describe.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "test_util.h"

namespace stagegate::manifest {
namespace {

Bundle Demo() {
  Diagnostics diagnostics;
  std::optional<Bundle> bundle =
      LoadBundle(testing::SourcePath("scenarios/demo.yaml"), diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle.has_value());
  return *bundle;
}

TEST_CASE("a scenario's description is its lines, ending with the fingerprint", "[manifest]") {
  const Bundle demo = Demo();
  const Fingerprint fingerprint = ComputeFingerprint(demo);
  const std::vector<std::string> lines = DescribeScenario(demo, fingerprint);
  REQUIRE(lines.size() > 10);
  CHECK(lines.front().starts_with("scenario     demo ("));
  CHECK(lines.back() == "fingerprint  " + fingerprint.value);
  CHECK(std::none_of(lines.begin(), lines.end(),
                     [](const std::string& line) { return line.find('\n') != std::string::npos; }));
  CHECK(std::count(lines.begin(), lines.end(),
                   "  burst     gamma 3/s (burstiness 0.25), spike to 12/s at 3 s for 2 s, 10 s") ==
        1);
  CHECK(std::count(lines.begin(), lines.end(),
                   "cost         no price: the report gives instance-seconds per accepted "
                   "answer") == 1);
  // The demo corpus's salary-band refusal must pass in every run.
  CHECK(std::count(lines.begin(), lines.end(),
                   "  required     hr-salary-band-l4 (must pass in every run)") == 1);
}

TEST_CASE("a scenario that can decide every condition has no note", "[manifest]") {
  CHECK(UndecidedConditions(Demo()).empty());
}

TEST_CASE("a final stage without a recovery phase leaves condition 3 undecided", "[manifest]") {
  Bundle demo = Demo();
  std::vector<PhaseKind>& phases = demo.scenario.stages.back().phases;
  if (phases.empty()) phases = EffectiveStages(demo.scenario).back().phases;
  std::erase(phases, PhaseKind::kRecovery);
  const std::vector<std::string> notes = UndecidedConditions(demo);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] ==
        "condition 3 (recoverability) cannot be decided: stage 'tools', the final one, runs no "
        "recovery phase after the overload; list recovery in the phases of stage 'tools' (e.g. "
        "{rate: 1, arrival: constant, duration_s: 35, window_s: 5})");
}

}  // namespace
}  // namespace stagegate::manifest
