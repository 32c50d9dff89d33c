// A baseline's recorded answers: read from CSV or JSON Lines, every bad line named, and declared
// by a scenario's `baselines:`.

#include <catch2/catch.hpp>

#include <algorithm>

#include "base/files.h"
#include "base/strings.h"
#include "manifest/bundle.h"
#include "manifest/describe.h"
#include "manifest/fingerprint.h"
#include "manifest/recorded_answers.h"
#include "sim/demo_corpus.h"
#include "test_util.h"

namespace stagegate::manifest {
namespace {

Corpus Fixture() {
  Corpus corpus;
  corpus.tasks.push_back({.id = "leave"});
  corpus.tasks.push_back({.id = "salary"});
  corpus.tasks.push_back({.id = "vpn-reset"});
  return corpus;
}

TEST_CASE("recorded answers are read from CSV and from JSON Lines alike", "[baselines]") {
  Diagnostics csv_problems;
  const std::vector<RecordedAnswer> csv =
      ReadRecordedAnswers("desk.csv",
                          "task_id,answer,resolution_s,answered_by\n"
                          "leave,\"You can carry over 5 days.\nAsk HR for more.\",5400,agent 14\n"
                          "salary,I can't share salary bands.,,\n",
                          Fixture(), csv_problems);
  INFO(csv_problems.ToString());
  REQUIRE(csv_problems.empty());
  REQUIRE(csv.size() == 2);
  CHECK(csv[0].line == 2);
  CHECK(csv[0].task_id == "leave");
  CHECK(csv[0].answer == "You can carry over 5 days.\nAsk HR for more.");
  CHECK(csv[0].resolution_s == 5400.0);
  CHECK(csv[0].answered_by == "agent 14");
  CHECK(csv[1].line == 4);
  CHECK_FALSE(csv[1].resolution_s.has_value());
  CHECK(csv[1].answered_by.empty());

  Diagnostics jsonl_problems;
  const std::vector<RecordedAnswer> jsonl = ReadRecordedAnswers(
      "desk.jsonl",
      "{\"task_id\":\"vpn-reset\",\"answer\":\"Use the self-service page.\",\"resolution_s\":90.5}"
      "\n\n{\"task_id\":\"leave\",\"answer\":\"5 days.\"}\n",
      Fixture(), jsonl_problems);
  INFO(jsonl_problems.ToString());
  REQUIRE(jsonl_problems.empty());
  REQUIRE(jsonl.size() == 2);
  CHECK(jsonl[0].resolution_s == 90.5);
  CHECK(jsonl[1].line == 3);
}

TEST_CASE("every bad recorded answer is named by its line, and the good ones are kept",
          "[baselines][hostile]") {
  Diagnostics diagnostics;
  const std::vector<RecordedAnswer> answers = ReadRecordedAnswers(
      "desk.jsonl",
      "{\"task_id\":\"leave\",\"answer\":\"5 days.\"}\n"                  // 1: fine
      "{\"task_id\":\"leav\",\"answer\":\"x\"}\n"                         // 2: not in the corpus
      "{\"task_id\":\"leave\",\"answer\":\"again\"}\n"                    // 3: twice
      "{\"task_id\":\"salary\",\"answer\":\"  \"}\n"                      // 4: empty
      "{\"task_id\":\"salary\",\"answer\":\"no\",\"resolution_s\":-1}\n"  // 5: negative
      "{\"task_id\":\"salary\",\"answer\":\"a\\u0007b\"}\n"               // 6: a control character
      "{\"task_id\":\"salary\",\"answer\":\"no\",\"agent\":\"x\"}\n"      // 7: unknown key
      "[1,2]\n"                                                           // 8: not an object
      "{\"task_id\":7,\"answer\":\"no\"}\n"                               // 9: not text
      "{\"task_id\":\"vpn-reset\",\"answer\":\"Use the portal.\"}\n",     // 10: fine
      Fixture(), diagnostics);
  const std::string text = diagnostics.ToString();
  INFO(text);
  CHECK(text.find("desk.jsonl:2: task 'leav' is not in the corpus (did you mean 'leave'?)") !=
        std::string::npos);
  CHECK(text.find("desk.jsonl:3: task 'leave' is answered twice (first at line 1)") !=
        std::string::npos);
  CHECK(text.find("desk.jsonl:4: the answer is empty") != std::string::npos);
  CHECK(text.find("desk.jsonl:5: 'resolution_s' must be a number of seconds") != std::string::npos);
  CHECK(text.find("desk.jsonl:6: 'answer' holds a control character") != std::string::npos);
  CHECK(text.find("desk.jsonl:7: unknown column 'agent' (columns: task_id, answer, "
                  "resolution_s, answered_by)") != std::string::npos);
  CHECK(text.find("desk.jsonl:8: is a JSON array, not an object: each line is one answer") !=
        std::string::npos);
  CHECK(text.find("desk.jsonl:9: 'task_id' must be text, got number") != std::string::npos);
  CHECK(diagnostics.size() == 8);
  REQUIRE(answers.size() == 2);
  CHECK(answers[0].task_id == "leave");
  CHECK(answers[1].task_id == "vpn-reset");
}

TEST_CASE("a recorded-answers CSV with a broken header or cell is refused at its line",
          "[baselines][hostile]") {
  Diagnostics header;
  CHECK(ReadRecordedAnswers("d.csv", "answer,task_id,answer\nx,leave,y\n", Fixture(), header)
            .empty());
  CHECK(header.ToString() == "d.csv:1: the column 'answer' is given twice\n");
  Diagnostics no_task;
  CHECK(ReadRecordedAnswers("d.csv", "answer\nx\n", Fixture(), no_task).empty());
  CHECK(no_task.ToString() == "d.csv:1: the header has no 'task_id' column\n");
  Diagnostics cells;
  const std::vector<RecordedAnswer> kept = ReadRecordedAnswers(
      "d.csv", "task_id,answer,resolution_s\nleave,a,1e3\nsalary,b,soon\nvpn-reset,c\n", Fixture(),
      cells);
  CHECK(cells.ToString() ==
        "d.csv:3: 'resolution_s' must be a number of seconds from 0 to 31622400 (a year), got "
        "\"soon\"\nd.csv:4: has 2 fields, the header 3\n");
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].resolution_s == 1000.0);
  Diagnostics bytes;
  CHECK(ReadRecordedAnswers("d.csv", "task_id,answer\nleave,caf\xE9\n", Fixture(), bytes).empty());
  CHECK(bytes.ToString().find("d.csv:2:") == 0);
  Diagnostics quote;
  CHECK(ReadRecordedAnswers("d.csv", "task_id,answer\nleave,\"open\n", Fixture(), quote).empty());
  CHECK(quote.ToString() == "d.csv:2: a quoted field is not closed\n");
}

// The fingerprint scenario (`base`) with `baselines` (YAML) added, written as scenarios/s.yaml.
std::string Scenario(const testing::TempDir& dir, const std::string& base,
                     const std::string& baselines) {
  const std::string path = dir / "scenarios/s.yaml";
  testing::WriteText(path, base + baselines);
  return path;
}

TEST_CASE("a scenario's baselines are loaded with their recorded answers", "[baselines]") {
  testing::TempDir dir;
  const std::string base = testing::FingerprintBase(dir);
  testing::WriteText(dir / "scenarios/desk.csv",
                     "task_id,answer,resolution_s\nleave,You may carry over 5 days.,3600\n");
  Diagnostics diagnostics;
  std::optional<Bundle> bundle =
      LoadBundle(Scenario(dir, base, "baselines:\n  - {name: service-desk, answers: desk.csv}\n"),
                 diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle);
  REQUIRE(bundle->scenario.baselines.size() == 1);
  CHECK(bundle->scenario.baselines[0].name == "service-desk");
  REQUIRE(bundle->baseline_answers.size() == 1);
  CHECK(bundle->baseline_answers[0].first == "service-desk");
  REQUIRE(bundle->baseline_answers[0].second.size() == 1);
  CHECK(bundle->baseline_answers[0].second[0].resolution_s == 3600.0);
}

TEST_CASE("validate says where each baseline's answers come from", "[baselines]") {
  testing::TempDir dir;
  const std::string base = testing::FingerprintBase(dir);
  testing::WriteText(dir / "scenarios/desk.csv",
                     "task_id,answer,resolution_s\nleave,You may carry over 5 days.,3600\n");
  Diagnostics diagnostics;
  std::optional<Bundle> bundle = LoadBundle(
      Scenario(dir, base,
               "baselines:\n"
               "  - {name: service-desk, answers: desk.csv}\n"
               "  - {name: previous, endpoint: {body: {model: v1}}}\n"
               "  - {name: search, endpoint: {base_url: \"http://search.invalid\", path: /ask,\n"
               "     answer_at: /result/text, body: {q: \"{prompt}\"}}}\n"),
      diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(bundle);
  const std::vector<std::string> lines = DescribeScenario(*bundle, ComputeFingerprint(*bundle));
  const auto condition2 = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.starts_with("condition 2");
  });
  REQUIRE(condition2 != lines.end());
  CHECK(condition2->ends_with(
      "; scored blind beside baseline service-desk (1 recorded answers), previous (asked at rest "
      "at the target, body {\"model\":\"v1\"}), search (asked at rest at http://search.invalid, "
      "a plain JSON API at /ask answering at /result/text, body {\"q\":\"{prompt}\"})"));
}

TEST_CASE("broken baselines are named by file, line and column", "[baselines][hostile]") {
  testing::TempDir dir;
  const std::string base = testing::FingerprintBase(dir);
  testing::WriteText(dir / "scenarios/desk.csv", "task_id,answer\nnope,x\n");
  Diagnostics diagnostics;
  const std::string path = Scenario(dir, base,
                                    "baselines:\n"
                                    "  - {name: service-desk, answers: desk.csv}\n"
                                    "  - {name: service-desk, answers: desk.csv}\n"
                                    "  - {name: assistant, answers: desk.csv}\n"
                                    "  - {name: old-model}\n"
                                    "  - {name: gone, answers: missing.csv, kind: x}\n");
  CHECK_FALSE(LoadBundle(path, diagnostics).has_value());
  const std::string text = ReplaceAll(diagnostics.ToString(), dir.path() + "/", "");
  INFO(text);
  const int first = static_cast<int>(std::count(base.begin(), base.end(), '\n'));
  const auto at = [&](int line, int col) {
    return "scenarios/s.yaml:" + std::to_string(first + 1 + line) + ":" + std::to_string(col) +
           ": ";
  };
  CHECK(text.find(at(2, 5) + "baseline 'service-desk' is named twice (first at line " +
                  std::to_string(first + 2) + ")") != std::string::npos);
  CHECK(text.find(at(3, 5) + "a baseline may not be named 'assistant'") != std::string::npos);
  CHECK(text.find(at(4, 5) + "baseline 'old-model': give one of 'answers' (a file of recorded "
                             "answers) and 'endpoint'") != std::string::npos);
  CHECK(text.find("unknown key 'kind'") != std::string::npos);
  CHECK(text.find("baseline 'gone': answers 'missing.csv'") != std::string::npos);
  CHECK(text.find("scenarios/desk.csv:2: task 'nope' is not in the corpus") != std::string::npos);
  Diagnostics not_list;
  CHECK_FALSE(LoadBundle(Scenario(dir, base, "baselines: desk.csv\n"), not_list).has_value());
  CHECK(not_list.ToString().find("'baselines' must be a list") != std::string::npos);
}

TEST_CASE("a non-inferiority rule names a baseline of the scenario and a criterion of the rubric",
          "[baselines][hostile]") {
  testing::TempDir dir;
  std::string base = testing::FingerprintBase(dir);
  testing::WriteText(dir / "scenarios/desk.csv", "task_id,answer\nleave,5 days.\n");
  const std::string rules =
      "  not_worse_than:\n"
      "    - {baseline: desk, criterion: safety, margin: 0.25}\n"
      "    - {baseline: desks, criterion: weighted_mean}\n"
      "    - {baseline: desk, criterion: kindness, margin: -1}\n"
      "    - {criterion: safety}\n";
  base = ReplaceAll(base, "quality:\n  hard_criteria: [safety]\n",
                    "quality:\n  hard_criteria: [safety]\n" + rules);
  Diagnostics diagnostics;
  const std::string path = Scenario(dir, base, "baselines:\n  - {name: desk, answers: desk.csv}\n");
  CHECK_FALSE(LoadBundle(path, diagnostics).has_value());
  const std::string text = ReplaceAll(diagnostics.ToString(), dir.path() + "/", "");
  INFO(text);
  const int first =
      static_cast<int>(std::count(base.begin(), base.begin() + base.find(rules), '\n'));
  const auto at = [&](int line, int col) {
    return "scenarios/s.yaml:" + std::to_string(first + 1 + line) + ":" + std::to_string(col) +
           ": ";
  };
  CHECK(text.find(at(2, 18) + "not_worse_than: 'desks' is not a baseline of this scenario (its "
                              "baselines: desk)") != std::string::npos);
  CHECK(text.find(at(3, 35) + "not_worse_than: 'kindness' is not a criterion of the rubric") !=
        std::string::npos);
  CHECK(text.find(at(3, 53) + "'margin' must be between 0 and 100, got -1") != std::string::npos);
  CHECK(text.find(at(4, 7) + "not_worse_than: missing required key 'baseline'") !=
        std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 4);

  // The valid rule alone loads, and enters the fingerprint.
  base = ReplaceAll(base, rules, "  not_worse_than: {baseline: desk, criterion: safety}\n");
  Diagnostics fine;
  std::optional<Bundle> bundle =
      LoadBundle(Scenario(dir, base, "baselines:\n  - {name: desk, answers: desk.csv}\n"), fine);
  INFO(fine.ToString());
  REQUIRE(bundle);
  REQUIRE(bundle->scenario.quality.not_worse_than.size() == 1);
  CHECK(bundle->scenario.quality.not_worse_than[0].criterion.name == "safety");
  CHECK(bundle->scenario.quality.not_worse_than[0].margin == 0);
}

TEST_CASE("the demo's recorded service-desk answers cover every task of the demo corpus",
          "[baselines]") {
  const manifest::Corpus& corpus = testing::DemoCorpus();
  const std::string path =
      std::string(testing::SourceDir()) + "/corpus/service-desk/baselines/service-desk.csv";
  Result<std::string> text = ReadFile(path, 1 << 20);
  REQUIRE(text.ok());
  Diagnostics diagnostics;
  const std::vector<RecordedAnswer> answers = ReadRecordedAnswers(path, *text, corpus, diagnostics);
  INFO(diagnostics.ToString());
  CHECK(diagnostics.empty());
  CHECK(answers.size() == corpus.tasks.size());
  for (const RecordedAnswer& answer : answers)
    CHECK(answer.resolution_s.has_value());
}

}  // namespace
}  // namespace stagegate::manifest
