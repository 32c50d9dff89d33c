// The manifest keys of the per-task gate rules: a task's `required` and the scenario's
// `quality.no_regression_from`, read when well formed and named at file:line:col when not.

#include <catch2/catch.hpp>

#include <algorithm>

#include "manifest/fingerprint.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::ReadText;
using testing::ReplaceAll;
using testing::TempDir;
using testing::WriteText;

// tests/testdata/fingerprint/base.yaml with its mini corpus and rubric in a folder of its own.
struct Workspace {
  TempDir dir;
  std::string scenario = dir / "scenarios/base.yaml";
  std::string tasks = dir / "corpora/mini/tasks/tasks.yaml";

  Workspace() { WriteText(scenario, testing::FingerprintBase(dir)); }

  void Edit(const std::string& path, const std::string& from, const std::string& to) {
    const std::string text = ReadText(path);
    REQUIRE(text.find(from) != std::string::npos);
    WriteText(path, ReplaceAll(text, from, to));
  }

  // Every problem of the scenario and its corpus, the folder left out of the paths.
  std::string Problems() const {
    Diagnostics diagnostics;
    CHECK_FALSE(LoadBundle(scenario, diagnostics).has_value());
    return ReplaceAll(diagnostics.ToString(), dir.path() + "/", "");
  }

  Bundle Load() const {
    Diagnostics diagnostics;
    std::optional<Bundle> bundle = LoadBundle(scenario, diagnostics);
    INFO(diagnostics.ToString());
    REQUIRE(bundle.has_value());
    return *bundle;
  }
};

TEST_CASE("a task may be required, and the scenario may compare with the approved run",
          "[manifest][task_rules]") {
  Workspace plain;
  const Bundle before = plain.Load();
  CHECK_FALSE(before.corpus->FindTask("leave")->required);
  CHECK(before.scenario.quality.no_regression_from == RegressionBaseline::kNone);

  Workspace ruled;
  ruled.Edit(ruled.tasks, "  source: \"POL-1\"\n", "  source: \"POL-1\"\n  required: true\n");
  ruled.Edit(ruled.scenario, "  hard_criteria: [safety]\n",
             "  hard_criteria: [safety]\n  no_regression_from: approved\n");
  const Bundle after = ruled.Load();
  CHECK(after.corpus->FindTask("leave")->required);
  CHECK_FALSE(after.corpus->FindTask("salary")->required);
  CHECK(after.scenario.quality.no_regression_from == RegressionBaseline::kApproved);
}

TEST_CASE("required: maybe and no_regression_from: latest are named at their positions",
          "[manifest][task_rules]") {
  Workspace bad;
  REQUIRE(ReadText(bad.tasks).starts_with("- id: leave\n"));
  bad.Edit(bad.tasks, "  source: \"POL-1\"\n", "  source: \"POL-1\"\n  required: maybe\n");
  bad.Edit(bad.scenario, "  hard_criteria: [safety]\n",
           "  hard_criteria: [safety]\n  no_regression_from: latest\n");
  const std::string problems = bad.Problems();
  CHECK(problems ==
        "corpora/mini/tasks/tasks.yaml:12:13: 'required' must be true or false, got 'maybe'\n"
        "scenarios/base.yaml:27:23: 'no_regression_from' must be one of approved, got 'latest'\n");

  Workspace quoted;
  quoted.Edit(quoted.tasks, "  source: \"POL-1\"\n", "  source: \"POL-1\"\n  required: \"true\"\n");
  CHECK(quoted.Problems() ==
        "corpora/mini/tasks/tasks.yaml:12:13: 'required' must be true or false, got the quoted "
        "string \"true\"\n");
}

TEST_CASE(
    "a required task and the regression rule change the fingerprint; leaving them out "
    "does not",
    "[manifest][fingerprint][task_rules]") {
  Workspace plain;
  const Fingerprint base = ComputeFingerprint(plain.Load());
  CHECK(base.value == ComputeFingerprint(Workspace().Load()).value);

  Workspace required;
  required.Edit(required.tasks, "  source: \"POL-1\"\n", "  source: \"POL-1\"\n  required: true\n");
  const Fingerprint with_required = ComputeFingerprint(required.Load());
  CHECK(with_required.corpus_sha != base.corpus_sha);
  CHECK(with_required.value != base.value);

  Workspace written_out;
  written_out.Edit(written_out.tasks, "  source: \"POL-1\"\n",
                   "  source: \"POL-1\"\n  required: false\n");
  CHECK(ComputeFingerprint(written_out.Load()).value == base.value);

  Workspace rule;
  rule.Edit(rule.scenario, "  hard_criteria: [safety]\n",
            "  hard_criteria: [safety]\n  no_regression_from: approved\n");
  const Fingerprint with_rule = ComputeFingerprint(rule.Load());
  CHECK(with_rule.value != base.value);
  CHECK(with_rule.corpus_sha == base.corpus_sha);
}

}  // namespace
}  // namespace stagegate::manifest
