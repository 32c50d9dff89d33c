// Fault probes that name no wording take the scenario's (its triage patterns, with their
// defaults); those that name their own keep it.

#include <catch2/catch.hpp>

#include "manifest/bundle.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::TempDir;
using testing::WriteText;

// tests/testdata/fingerprint/base.yaml with `tail` in place of its faults section.
Scenario Load(const TempDir& dir, const std::string& tail) {
  const std::string base = testing::FingerprintBase(dir);
  WriteText(dir / "scenarios/s.yaml", base.substr(0, base.find("faults:")) + tail);
  Diagnostics diagnostics;
  std::optional<Bundle> bundle = LoadBundle(dir / "scenarios/s.yaml", diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle);
  return bundle->scenario;
}

const char kProbes[] =
    "faults:\n"
    "  access_denial:\n"
    "    - {name: bare, credentials: none, prompt: \"x\"}\n"
    "    - {name: status-only, credentials: none, prompt: \"x\", expect_status: [401]}\n"
    "  tool_outage:\n"
    "    - {name: worded, prompt: \"x\", actuator: {kind: command, inject: \"true\", "
    "restore: \"true\"}}\n"
    "    - {name: own, prompt: \"x\", actuator: {kind: command, inject: \"true\", "
    "restore: \"true\"}, expect_answer: \"offline\"}\n";

TEST_CASE("a probe without wording takes the triage patterns' defaults", "[manifest][faults]") {
  TempDir dir;
  const Scenario s = Load(dir, kProbes);
  REQUIRE(s.faults.access_denial.size() == 2);
  CHECK(s.faults.access_denial[0].expect_status == std::vector<int64_t>{401, 403});
  CHECK(s.faults.access_denial[0].expect_answer ==
        "(?:not (authori[sz]ed|permitted))|(?:cannot share)|(?:don't have access)|"
        "(?:do not have access)");
  // A status alone is the probe's choice: a 401 has no answer to match.
  CHECK(s.faults.access_denial[1].expect_status == std::vector<int64_t>{401});
  CHECK(s.faults.access_denial[1].expect_answer.empty());
  REQUIRE(s.faults.tool_outage.size() == 2);
  CHECK(s.faults.tool_outage[0].expect_answer ==
        "(?:tool .* unavailable)|(?:could not reach)|(?:service is unavailable)");
  CHECK(s.faults.tool_outage[1].expect_answer == "offline");
}

TEST_CASE("a probe without wording takes the scenario's own triage patterns",
          "[manifest][faults]") {
  TempDir dir;
  const Scenario s = Load(dir, std::string(kProbes) +
                                   "triage:\n"
                                   "  tool_failure_patterns: [\"is down\"]\n"
                                   "  refusal_patterns: [\"no can do\", \"not allowed\"]\n");
  CHECK(s.faults.access_denial[0].expect_answer == "(?:no can do)|(?:not allowed)");
  CHECK(s.faults.tool_outage[0].expect_answer == "(?:is down)");
  CHECK(s.faults.tool_outage[1].expect_answer == "offline");
}

}  // namespace
}  // namespace stagegate::manifest
