// Hostile manifests: each must end in positioned problems, never in an abort, a hang or a
// stack overflow, and no problem may echo a file that is not a manifest at all.

#include <catch2/catch.hpp>

#include <filesystem>

#include "base/pattern.h"
#include "manifest/bundle.h"
#include "manifest/yaml_reader.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using testing::TempDir;
using testing::Testdata;
using testing::WriteText;

// A valid scenario on the mini corpus and rubric, with `extra` appended (keys of its own).
std::string Scenario(const std::string& corpus, const std::string& extra = "",
                     const std::string& rubric = Testdata("rubrics/mini.yaml")) {
  return "name: hostile\n"
         "manifest: {model: m, model_version: \"1\"}\n"
         "seed: 7\n"
         "corpus: " +
         corpus +
         "\n"
         "rubric: " +
         rubric +
         "\n"
         "target: {kind: sim}\n"
         "stages: [{name: bare}]\n"
         "thresholds: {completion_rate: 0.9}\n"
         "phases:\n"
         "  steady: {rate: 2, duration_s: 1}\n" +
         extra;
}

// The problems of loading `text` as a scenario, with the folder's path left out.
std::string Problems(const TempDir& dir, const std::string& text) {
  WriteText(dir / "scenario.yaml", text);
  Diagnostics diagnostics;
  CHECK_FALSE(LoadBundle(dir / "scenario.yaml", diagnostics).has_value());
  return testing::ReplaceAll(diagnostics.ToString(), dir.path() + "/", "");
}

// A copy of the mini corpus in `dir`/corpus, for tests that spoil one of its files.
std::string CopyMiniCorpus(const TempDir& dir) {
  std::filesystem::copy(Testdata("corpora/mini"), dir / "corpus",
                        std::filesystem::copy_options::recursive);
  return dir / "corpus";
}

TEST_CASE("the scenario loads as written before the hostile edits", "[manifest][hostile]") {
  TempDir dir;
  WriteText(dir / "scenario.yaml", Scenario(Testdata("corpora/mini")));
  Diagnostics diagnostics;
  CHECK(LoadBundle(dir / "scenario.yaml", diagnostics).has_value());
  CHECK(diagnostics.ToString() == "");
}

TEST_CASE("a byte that is not UTF-8 in a document, a task or the rubric is positioned",
          "[manifest][hostile]") {
  TempDir dir;
  const std::string corpus = CopyMiniCorpus(dir);
  // "Café" as Windows-1252 writes it: the é is the lone byte 0xE9.
  WriteText(corpus + "/docs/cafe.md", "---\nid: cafe\ntitle: Caf\xE9\n---\nThe caf\xE9 opens.\n");
  WriteText(dir / "rubric.yaml", "id: r\ntitle: \"Caf\xE9 rubric\"\ncriteria: []\n");
  const std::string problems = Problems(dir, Scenario(corpus, "", dir / "rubric.yaml"));
  CHECK(problems.find("corpus/docs/cafe.md:3:11: not UTF-8: the byte 0xE9 starts no UTF-8 "
                      "character; save the file as UTF-8\n") != std::string::npos);
  CHECK(problems.find("rubric.yaml:2:12: not UTF-8: the byte 0xE9") != std::string::npos);
}

TEST_CASE("a pattern of 20,000 nested groups loads and matches without recursion",
          "[manifest][hostile]") {
  TempDir dir;
  const std::string nested = std::string(20000, '(') + "a" + std::string(20000, ')');
  WriteText(dir / "scenario.yaml",
            Scenario(Testdata("corpora/mini"),
                     "faults:\n  access_denial:\n    - name: p\n      persona: staff\n"
                     "      task: leave\n      expect_answer: \"" +
                         nested + "\"\n"));
  Diagnostics diagnostics;
  std::optional<Bundle> bundle = LoadBundle(dir / "scenario.yaml", diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle.has_value());
  REQUIRE(bundle->scenario.faults.access_denial.size() == 1);
  Result<Pattern> pattern =
      Pattern::Compile(bundle->scenario.faults.access_denial[0].expect_answer);
  REQUIRE(pattern.ok());
  CHECK(pattern->Matches("a"));
  CHECK_FALSE(pattern->Matches("b"));
}

TEST_CASE("patterns run in linear time and refuse what RE2 cannot run that way", "[hostile]") {
  // A classic catastrophic pattern for backtracking engines, on a subject it fails to match.
  Result<Pattern> pattern = Pattern::Compile("(a+)+$");
  REQUIRE(pattern.ok());
  CHECK_FALSE(pattern->Matches(std::string(100000, 'a') + "!"));
  CHECK(pattern->Matches("xAAA"));  // case-insensitive, anywhere
  CHECK(pattern->FirstMatch("xaab") == std::nullopt);
  CHECK(Pattern::Compile("not (authori[sz]ed)")->FirstMatch("I am NOT AUTHORISED here") ==
        "NOT AUTHORISED");
  CHECK_FALSE(Pattern::Compile("(a)\\1").ok());  // back-reference
  CHECK_FALSE(Pattern::Compile("a(?=b)").ok());  // look-ahead
  Result<Pattern> long_one = Pattern::Compile(std::string(Pattern::kMaxTextBytes + 1, 'a'));
  REQUIRE_FALSE(long_one.ok());
  CHECK(long_one.status().message() == "is 65537 bytes long; at most 65536 are allowed");
  CHECK(Pattern::Compile("not (authorised").status().message() == "missing ): not (authorised");
}

TEST_CASE("numbers near the int64 limit are out of range at load time", "[manifest][hostile]") {
  TempDir dir;
  const std::string huge = "9223372036854775807";
  std::string text =
      Scenario(Testdata("corpora/mini"), "  burst: {concurrency: " + huge + ", requests: 3}\n");
  text = testing::ReplaceAll(text, "target: {kind: sim}",
                             "target: {kind: sim, timeouts: {total_ms: " + huge + "}}");
  text += "quality: {samples: {at_rest: " + huge + "}}\n";
  text += "telemetry: {scrape_interval_ms: " + huge + "}\n";
  const std::string problems = Problems(dir, text);
  CHECK(problems.find("'concurrency' must be between 1 and 10000, got 9223372036854775808") !=
        std::string::npos);
  CHECK(problems.find("'total_ms' must be") != std::string::npos);
  CHECK(problems.find("'at_rest' must be between 0 and 100000") != std::string::npos);
  CHECK(problems.find("'scrape_interval_ms' must be between 0 and 3600000") != std::string::npos);
}

TEST_CASE("a scrape interval under 100 ms would busy-loop and is refused", "[manifest][hostile]") {
  TempDir dir;
  CHECK(Problems(dir, Scenario(Testdata("corpora/mini"), "telemetry: {scrape_interval_ms: 1}\n")) ==
        "scenario.yaml:11:33: 'scrape_interval_ms' must be at least 100 (or 0: no scraping), "
        "got 1\n");
}

TEST_CASE("a phase whose schedule would be too large is refused", "[manifest][hostile]") {
  TempDir dir;
  std::string text = Scenario(Testdata("corpora/mini"));
  text = testing::ReplaceAll(text, "steady: {rate: 2, duration_s: 1}",
                             "steady: {rate: 100000, duration_s: 604800}");
  CHECK(Problems(dir, text).find("phase 'steady' would send up to 60480000000 requests; at most "
                                 "10000000 a phase") != std::string::npos);
}

TEST_CASE("a second YAML document and custom tags are refused", "[manifest][hostile]") {
  TempDir dir;
  CHECK(Problems(dir, Scenario(Testdata("corpora/mini")) + "---\nname: other\n") ==
        "scenario.yaml:11:1: a second YAML document (after '---'): a manifest file holds one\n");
  std::string tagged =
      testing::ReplaceAll(Scenario(Testdata("corpora/mini")), "seed: 7", "seed: !python/object 1");
  CHECK(Problems(dir, tagged) ==
        "scenario.yaml:3:7: the tag '!python/object' is not supported: stagegate reads plain "
        "YAML\n");
  // YAML's own tags are plain YAML.
  std::string standard = testing::ReplaceAll(Scenario(Testdata("corpora/mini")), "name: hostile",
                                             "name: !!str hostile");
  WriteText(dir / "standard.yaml", standard);
  Diagnostics diagnostics;
  CHECK(LoadBundle(dir / "standard.yaml", diagnostics).has_value());
}

TEST_CASE("input on which yaml-cpp yields documents forever ends in a problem",
          "[manifest][hostile]") {
  // Found by the rubric fuzz target: YAML::LoadAll never returned on these two bytes.
  TempDir dir;
  testing::WriteText(dir / "rubric.yaml", std::string("\0,", 2));
  const std::string problems =
      Problems(dir, Scenario(Testdata("corpora/mini"), "", dir / "rubric.yaml"));
  CHECK(problems.find("rubric.yaml") != std::string::npos);
}

TEST_CASE("targets that are not http(s) URLs are refused", "[manifest][hostile]") {
  TempDir dir;
  for (const std::string url : {"file:///etc/passwd", "gopher://127.0.0.1:70/", "not a url",
                                "127.0.0.1:8000/v1", "http://"}) {
    INFO(url);
    std::string text =
        testing::ReplaceAll(Scenario(Testdata("corpora/mini")), "target: {kind: sim}",
                            "target: {kind: openai, base_url: \"" + url + "\"}");
    const std::string problems = Problems(dir, text);
    CHECK(problems.find("scenario.yaml:6:34: 'base_url' ") != std::string::npos);
  }
}

TEST_CASE("a file that is not a manifest is not echoed back in the problems",
          "[manifest][hostile]") {
  TempDir dir;
  // Shaped like /etc/shadow: YAML reads each line as a key, the first with a secret in it.
  std::string shadow = "root:$6$s3cr3tSalt$H4shH4shH4shH4shH4shH4shH4sh:19000:0:99999:7:::\n";
  for (int i = 0; i < 50; ++i)
    shadow += "daemon" + std::to_string(i) + ":*:19000:0:99999:7:::\n";
  WriteText(dir / "shadow", shadow);
  const std::string problems =
      Problems(dir, Scenario(Testdata("corpora/mini"), "", dir / "shadow"));
  CHECK(problems.find("shadow:1:1: rubric has none of its keys: 51 unknown keys, not shown (is "
                      "this the right file?)\n") != std::string::npos);
  CHECK(problems.find("H4shH4shH4sh") == std::string::npos);
  CHECK(problems.find("daemon1") == std::string::npos);
}

TEST_CASE("a file with a problem a line prints the first hundred and a count",
          "[manifest][hostile]") {
  Diagnostics diagnostics;
  for (int line = 1; line <= 20000; ++line)
    diagnostics.Error({"tasks.yaml", line, 1}, "problem");
  CHECK(diagnostics.Count() == 20000);
  const std::vector<Diagnostic> shown = diagnostics.Sorted();
  REQUIRE(shown.size() == Diagnostics::kMaxShown + 1);
  CHECK(shown.front().ToString() == "tasks.yaml:1:1: problem");
  CHECK(shown.back().ToString() == "... and 19900 more problems not shown");
}

TEST_CASE("a manifest too large to be one is refused before it is parsed", "[manifest][hostile]") {
  TempDir dir;
  WriteText(dir / "scenario.yaml",
            Scenario(Testdata("corpora/mini")) + "# " + std::string(kMaxManifestBytes, 'x') + "\n");
  Diagnostics diagnostics;
  CHECK_FALSE(LoadBundle(dir / "scenario.yaml", diagnostics).has_value());
  CHECK(testing::ReplaceAll(diagnostics.ToString(), dir.path() + "/", "") ==
        "scenario.yaml: larger than 16 MiB, the most stagegate reads from such a "
        "file\n");
}

}  // namespace
}  // namespace stagegate::manifest
