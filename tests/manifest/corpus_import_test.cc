// The import's own property, as the fuzz target checks it on any input: whatever imports without a
// problem writes a task file that loads with every text as read; and what cannot be written
// faithfully is refused at its line.

#include <catch2/catch.hpp>

#include <filesystem>

#include "manifest/corpus.h"
#include "manifest/corpus_import.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

using json = nlohmann::json;

Corpus Fixture() {
  Corpus corpus;
  corpus.personas.push_back({.name = "employee"});
  return corpus;
}

const ImportDefaults kDefaults{
    .persona = "employee", .category = "c", .approved_by = "a", .source = "s"};

// Imports `jsonl`, writes the task file into a corpus and loads it back.
std::pair<std::vector<ImportedTask>, std::optional<Corpus>> RoundTrip(const testing::TempDir& dir,
                                                                      const std::string& jsonl) {
  Diagnostics diagnostics;
  std::vector<ImportedTask> tasks = ReadImport("q.jsonl", jsonl, kDefaults, Fixture(), diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(diagnostics.empty());
  testing::WriteText(dir / "c/corpus.yaml", "name: n\nversion: \"1\"\nowner: o\n");
  testing::WriteText(dir / "c/personas.yaml",
                     "personas:\n  - {name: employee, token_env: T, groups: [g]}\n");
  testing::WriteText(dir / "c/tasks/imported.yaml", TasksYaml(tasks, "q.jsonl"));
  Diagnostics loading;
  std::optional<Corpus> corpus = LoadCorpus(dir / "c", loading);
  INFO(loading.ToString());
  CHECK(loading.empty());
  return {std::move(tasks), std::move(corpus)};
}

TEST_CASE("imported texts that YAML treats specially load back exactly as read",
          "[manifest][corpus]") {
  const std::vector<std::string> texts = {"- a list item?",
                                          "key: value",
                                          "# a comment",
                                          "{flow: map}",
                                          "[flow, seq]",
                                          "&anchor",
                                          "*alias",
                                          "!tag",
                                          "%YAML 1.2",
                                          "---",
                                          "...",
                                          "null",
                                          "~",
                                          "yes",
                                          "0x1F",
                                          "1e3",
                                          "'single'",
                                          "\"double\"",
                                          "back\\slash",
                                          "tab\there",
                                          "line\nbreak",
                                          "crlf\r\nbreak",
                                          "\xE2\x80\xA8 (LS)",
                                          "\xC2\x85 (NEL)",
                                          "\xEF\xBF\xBD (FFFD)",
                                          "\xF0\x9F\x99\x82",
                                          "  | literal",
                                          "> folded",
                                          "@at `tick` ?q",
                                          "a: b # c"};
  std::string jsonl;
  for (const std::string& text : texts) {
    std::string fact = text;  // a fact is one line: no tab or line break
    for (char& c : fact)
      if (c == '\t' || c == '\r' || c == '\n') c = ' ';
    jsonl += json{{"prompt", text + "!"}, {"reference", text}, {"facts", {fact}}}.dump() + "\n";
  }
  testing::TempDir dir;
  auto [tasks, corpus] = RoundTrip(dir, jsonl);
  REQUIRE(corpus);
  REQUIRE(corpus->tasks.size() == texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    INFO(texts[i]);
    CHECK(corpus->tasks[i].prompt == tasks[i].prompt);
    CHECK(corpus->tasks[i].reference == tasks[i].reference);
    REQUIRE(corpus->tasks[i].checks.size() == tasks[i].facts.size());
    for (size_t f = 0; f < tasks[i].facts.size(); ++f)
      CHECK(corpus->tasks[i].checks[f].text == tasks[i].facts[f]);
  }
}

TEST_CASE("an import that is not UTF-8, or holds control characters, is refused at its line",
          "[manifest][corpus]") {
  Diagnostics diagnostics;
  ReadImport("q.csv", "prompt\nfine\nbad \xFF byte\n", kDefaults, Fixture(), diagnostics);
  CHECK(diagnostics.ToString() ==
        "q.csv:3:5: not UTF-8: the byte 0xFF starts no UTF-8 character; save the file as UTF-8\n");
  Diagnostics controls;
  ReadImport("q.jsonl",
             "{\"prompt\":\"a\\u0001b\"}\n{\"prompt\":\"ok\",\"facts\":[\"x\\u0000y\"]}\n",
             kDefaults, Fixture(), controls);
  CHECK(controls.ToString() ==
        "q.jsonl:1: 'prompt' holds a control character\n"
        "q.jsonl:2: 'facts' holds a control character or one a task file cannot keep\n");
  // U+FFFE comes back from YAML as U+FFFD: refused rather than changed.
  Diagnostics nonchar;
  ReadImport("q.csv", "prompt\nnon \xEF\xBF\xBE char\n", kDefaults, Fixture(), nonchar);
  CHECK(nonchar.ToString() ==
        "q.csv:2: 'prompt' holds a character a task file cannot keep (such as U+FFFE)\n");
  // A spreadsheet's byte order mark is not part of the first column's name.
  Diagnostics bom;
  const std::vector<ImportedTask> tasks =
      ReadImport("q.csv", "\xEF\xBB\xBFprompt,category\nhello,it\n", kDefaults, Fixture(), bom);
  CHECK(bom.empty());
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].prompt == "hello");
  CHECK(tasks[0].category == "it");
}

TEST_CASE("a JSON Lines line that does not parse says why, not only that it is not an object",
          "[manifest][corpus]") {
  Diagnostics diagnostics;
  ReadImport("q.jsonl",
             "{\"prompt\":\"\\ud800\"}\n{\"prompt\":\"a\",\"id\":1e999999}\n[\"prompt\"]\n",
             kDefaults, Fixture(), diagnostics);
  const std::string text = diagnostics.ToString();
  INFO(text);
  CHECK(text.find("q.jsonl:1: is not JSON: parse error at line 1, column ") != std::string::npos);
  CHECK(text.find("surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF") !=
        std::string::npos);
  CHECK(text.find("q.jsonl:2: is not JSON: number overflow parsing '1e999999'") !=
        std::string::npos);
  CHECK(text.find("q.jsonl:3: is a JSON array, not an object") != std::string::npos);
  CHECK(text.find("[json.exception") == std::string::npos);
}

TEST_CASE("a column or key given twice is refused, not the last one taken", "[manifest][corpus]") {
  Diagnostics csv;
  ReadImport("q.csv", "prompt,category,Prompt\na,it,b\n", kDefaults, Fixture(), csv);
  CHECK(csv.ToString() == "q.csv:1: the column 'prompt' is given twice\n");
  Diagnostics jsonl;
  ReadImport("q.jsonl", "{\"prompt\":\"a\",\"prompt\":\"b\"}\n{\"prompt\":\"fine\"}\n", kDefaults,
             Fixture(), jsonl);
  CHECK(jsonl.ToString() == "q.jsonl:1: the key 'prompt' is given twice\n");
}

TEST_CASE("a JSON Lines list given as one string is refused; a CSV cell is split at ';'",
          "[manifest][corpus]") {
  Diagnostics jsonl;
  ReadImport("q.jsonl", "{\"prompt\":\"a\",\"facts\":\"5 days; by 31 March\"}\n", kDefaults,
             Fixture(), jsonl);
  CHECK(jsonl.ToString() ==
        "q.jsonl:1: 'facts' must be a JSON array of texts (only a CSV cell is split at ';')\n");
  Diagnostics csv;
  std::vector<ImportedTask> tasks =
      ReadImport("q.csv", "prompt,facts\na,5 days; by 31 March\n", kDefaults, Fixture(), csv);
  INFO(csv.ToString());
  REQUIRE(csv.empty());
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].facts == std::vector<std::string>{"5 days", "by 31 March"});
}

}  // namespace
}  // namespace stagegate::manifest
