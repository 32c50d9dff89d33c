// Each broken manifest under tests/testdata/broken/ must yield exactly the problems in its
// .expected file, all of them in one pass, with paths relative to tests/testdata/.

#include <catch2/catch.hpp>

#include "manifest/bundle.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::ReadText;
using testing::ReplaceAll;
using testing::Testdata;

std::string Problems(const std::string& scenario) {
  Diagnostics diagnostics;
  std::optional<Bundle> bundle = LoadBundle(Testdata(scenario), diagnostics);
  CHECK_FALSE(bundle.has_value());
  return ReplaceAll(diagnostics.ToString(), testing::Testdata(""), "");
}

TEST_CASE("every broken manifest yields exactly its expected problems", "[manifest]") {
  auto name = GENERATE(as<std::string>{}, "unknown-keys", "wrong-types", "missing-keys",
                       "out-of-range", "missing-files", "syntax-error", "stages-and-phases",
                       "faults", "references", "sweep-search", "search-levels", "headers",
                       "headers-persona", "decisions", "scopes");
  INFO("broken/" << name << ".yaml");
  std::string expected = ReadText(Testdata("broken/" + name + ".expected"));
  REQUIRE_FALSE(expected.empty());
  CHECK(Problems("broken/" + name + ".yaml") == expected);
}

TEST_CASE("problems in the scenario, corpus and rubric come out of one pass", "[manifest]") {
  std::string problems = Problems("broken/references.yaml");
  CHECK(problems.find("broken/references.yaml:") != std::string::npos);
  CHECK(problems.find("corpora/broken/tasks/a.yaml:") != std::string::npos);
  CHECK(problems.find("corpora/broken/tasks/b.yaml:") != std::string::npos);
  CHECK(problems.find("corpora/broken/docs/") != std::string::npos);
  CHECK(problems.find("rubrics/broken.yaml:") != std::string::npos);
}

TEST_CASE("the named problem kinds each have their exact message", "[manifest]") {
  std::string unknown = Problems("broken/unknown-keys.yaml");
  CHECK(unknown.find("broken/unknown-keys.yaml:6:14: unknown key 'temprature' (did you mean "
                     "'temperature'?)\n") != std::string::npos);
  std::string types = Problems("broken/wrong-types.yaml");
  CHECK(types.find("broken/wrong-types.yaml:17:18: 'rate' must be a number, got the quoted "
                   "string \"3\"\n") != std::string::npos);
  std::string ranges = Problems("broken/out-of-range.yaml");
  CHECK(ranges.find("'rate' must be greater than 0 and at most 100000, got -3\n") !=
        std::string::npos);
  CHECK(ranges.find("'percentile' must be between 1 and 99, got 100\n") != std::string::npos);
  CHECK(ranges.find("'completion_rate' must be between 0 and 1, got 1.5\n") != std::string::npos);
  std::string files = Problems("broken/missing-files.yaml");
  CHECK(files.find("broken/missing-files.yaml:5:9: corpus '../corpora/no-such-corpus' not found: "
                   "no folder corpora/no-such-corpus\n") != std::string::npos);
  std::string references = Problems("broken/references.yaml");
  CHECK(references.find("corpora/broken/tasks/b.yaml:1:3: duplicate task id 'leave' (first "
                        "defined at corpora/broken/tasks/a.yaml:1:3)\n") != std::string::npos);
  CHECK(references.find("rubrics/broken.yaml:4:5: criterion 'correctness' has no anchored "
                        "levels") != std::string::npos);
  std::string stages = Problems("broken/stages-and-phases.yaml");
  CHECK(stages.find("broken/stages-and-phases.yaml:11:5: stage 'bare' is listed twice (first at "
                    "line 7)\n") != std::string::npos);
  CHECK(Problems("broken/syntax-error.yaml") ==
        "broken/syntax-error.yaml:3:1: YAML syntax error: end of map flow not found\n");
}

TEST_CASE("a scenario that does not exist is one problem, not a crash", "[manifest]") {
  CHECK(Problems("broken/no-such-scenario.yaml") ==
        "broken/no-such-scenario.yaml: scenario file not found\n");
}

TEST_CASE("a scenario that is not a mapping is reported as such", "[manifest]") {
  testing::TempDir dir;
  testing::WriteText(dir / "list.yaml", "- a\n- b\n");
  Diagnostics diagnostics;
  CHECK_FALSE(LoadBundle(dir / "list.yaml", diagnostics).has_value());
  CHECK(ReplaceAll(diagnostics.ToString(), dir.path() + "/", "") ==
        "list.yaml:1:1: scenario must be a mapping, got a list\n");
}

}  // namespace
}  // namespace stagegate::manifest

namespace stagegate::manifest {
namespace {

TEST_CASE("an alias bomb is refused quickly instead of expanded", "[manifest][hostile]") {
  // Nine levels of ten aliases each would expand to 10^9 nodes.
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 8; ++level) {
    std::string alias = "*a" + std::to_string(level - 1);
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i)
      text += (i ? ", " : "") + alias;
    text += "]\n";
  }
  text += "stages: [{name: bare, body: {x: *a8}}]\n";
  testing::TempDir dir;
  testing::WriteText(dir / "bomb.yaml", text);
  Diagnostics diagnostics;
  CHECK_FALSE(LoadBundle(dir / "bomb.yaml", diagnostics).has_value());
  CHECK(diagnostics.ToString().find("bomb.yaml:10:29: this value is too large: more than 100000 "
                                    "YAML nodes once its aliases are expanded\n") !=
        std::string::npos);
}

TEST_CASE("deep nesting is a syntax error, not a stack overflow", "[manifest][hostile]") {
  testing::TempDir dir;
  testing::WriteText(dir / "deep.yaml",
                     "name: " + std::string(20000, '[') + std::string(20000, ']') + "\n");
  Diagnostics diagnostics;
  CHECK_FALSE(LoadBundle(dir / "deep.yaml", diagnostics).has_value());
  CHECK(diagnostics.ToString().find("deep.yaml:1:") != std::string::npos);
  CHECK(diagnostics.ToString().find(": YAML syntax error: ") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::manifest
