// The loader's problems with tool_call and no_tool_call checks, each at its file:line:col, all in
// one pass.

#include <catch2/catch.hpp>

#include "manifest/corpus.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::ReadText;
using testing::ReplaceAll;
using testing::Testdata;

TEST_CASE("every broken tool_call and no_tool_call check is named at its position",
          "[manifest][corpus][tool_call]") {
  Diagnostics diagnostics;
  CHECK_FALSE(LoadCorpus(Testdata("corpora/broken-tool-calls"), diagnostics).has_value());
  const std::string expected = ReadText(Testdata("corpora/broken-tool-calls.expected"));
  REQUIRE_FALSE(expected.empty());
  CHECK(ReplaceAll(diagnostics.ToString(), Testdata(""), "") == expected);
}

TEST_CASE("a well-formed tool_call check keeps its arguments and its tool's schema",
          "[manifest][corpus][tool_call]") {
  testing::TempDir dir;
  for (const char* file : {"corpus.yaml", "personas.yaml", "tools.yaml"})
    testing::WriteText(dir / file,
                       ReadText(Testdata(std::string("corpora/broken-tool-calls/") + file)));
  testing::WriteText(dir / "tasks/t.yaml",
                     "- id: t\n  prompt: \"p\"\n  persona: staff\n  category: action\n"
                     "  needs: [tools]\n  reference: \"r\"\n  checks:\n"
                     "    - tool_call: {name: open_ticket, arguments: {queue: hr, year: 2026, "
                     "summary: \"regex:.+\"}}\n    - tool_call: {name: open_ticket}\n"
                     "    - no_tool_call: true\n  approved_by: \"A\"\n  source: \"S\"\n");
  Diagnostics diagnostics;
  const std::optional<Corpus> corpus = LoadCorpus(dir.path(), diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(corpus.has_value());
  const std::vector<Check>& checks = corpus->tasks.at(0).checks;
  REQUIRE(checks.size() == 3);
  CHECK(checks[0].kind == CheckKind::kToolCall);
  CHECK(checks[0].text == "open_ticket");
  CHECK(checks[0].arguments ==
        nlohmann::json({{"queue", "hr"}, {"year", 2026}, {"summary", "regex:.+"}}));
  CHECK(checks[0].parameters == corpus->tools.at(0).parameters);
  CHECK(checks[1].arguments == nlohmann::json::object());
  CHECK(checks[2].kind == CheckKind::kNoToolCall);
}

}  // namespace
}  // namespace stagegate::manifest
