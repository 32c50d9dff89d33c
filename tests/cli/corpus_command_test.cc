// `stagegate corpus import` and `corpus stats` as processes, on the corpus skeleton `init`
// writes: 50 questions round-trip from CSV, every bad line is named, and the statistics find
// duplicates, near-duplicates and tasks without references.

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/strings.h"
#include "manifest/corpus.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The corpus init writes, with the tasks of `tasks_yaml` in place of its examples.
std::string Skeleton(const testing::TempDir& dir, const std::string& tasks_yaml = "") {
  Ran ran = testing::RunStagegate(dir, {"init", dir / "app", "--target-url", "http://127.0.0.1:9",
                                        "--model", "m", "--no-probe"});
  REQUIRE(ran.exit_code == 0);
  if (!tasks_yaml.empty()) {
    std::filesystem::remove(std::string(dir / "app/corpus/tasks/examples.yaml"));
    testing::WriteText(dir / "app/corpus/tasks/own.yaml", tasks_yaml);
  }
  return dir / "app/corpus";
}

// A CSV cell as a spreadsheet writes it: quoted, quotes doubled (CsvField would also guard a
// leading '-' against formula injection, which a spreadsheet's own export does not).
std::string Cell(const std::string& text) {
  return "\"" + ReplaceAll(text, "\"", "\"\"") + "\"";
}

struct Question {
  std::string id, prompt, category, persona, reference;
  std::vector<std::string> facts;
};

TEST_CASE("corpus import round-trips 50 questions from CSV into tasks that validate",
          "[cli][corpus]") {
  testing::TempDir dir;
  const std::string corpus = Skeleton(dir);
  std::vector<Question> questions;
  std::string csv = "id,prompt,category,persona,reference,facts,needs,tags\n";
  for (int i = 1; i <= 50; ++i) {
    Question q{.id = i % 5 == 0 ? "" : "q-" + std::to_string(i),
               .prompt = "Question " + std::to_string(i) + ": how do I \"reset\", today?",
               .category = i % 3 == 0 ? "policy" : "general",
               .persona = i % 2 ? "employee" : "contractor",
               .reference = "Answer " + std::to_string(i) + ", with a comma\nand a second line",
               .facts = {"fact " + std::to_string(i), "reset"}};
    if (i == 7) q.prompt = "- a line that looks like a YAML list: {and: flow} # and a comment";
    if (i == 8) q.prompt = "Unicode: \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x99\x82";
    questions.push_back(q);
    csv += Cell(q.id) + "," + Cell(q.prompt) + "," + q.category + "," + q.persona + "," +
           Cell(q.reference) + "," + Cell(Join(q.facts, "; ")) + ",," +
           (i % 4 == 0 ? "long-context" : "") + "\n";
  }
  testing::WriteText(dir / "questions.csv", csv);
  Ran ran =
      testing::RunStagegate(dir, {"corpus", "import", dir / "questions.csv", "--corpus", corpus,
                                  "--approved-by", "A. Owner", "--source", "tickets 2026-Q4"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(Has(ran.out, "imported 50 tasks into " + corpus + "/tasks/questions.yaml"));

  manifest::Diagnostics diagnostics;
  const std::optional<manifest::Corpus> loaded = manifest::LoadCorpus(corpus, diagnostics);
  INFO(diagnostics.ToString());
  REQUIRE(loaded);
  int generated = 0;
  for (size_t i = 0; i < questions.size(); ++i) {
    const Question& q = questions[i];
    const manifest::Task* task = nullptr;
    if (!q.id.empty()) {
      task = loaded->FindTask(q.id);
    } else {  // "<category>-<n>", numbered within the category
      for (const manifest::Task& t : loaded->tasks)
        if (t.prompt == q.prompt) task = &t;
      ++generated;
      REQUIRE(task);
      CHECK(task->id.starts_with(q.category + "-0"));
    }
    REQUIRE(task);
    CHECK(task->prompt == q.prompt);
    CHECK(task->category == q.category);
    CHECK(task->persona.name == q.persona);
    CHECK(task->reference == q.reference);
    CHECK(task->approved_by == "A. Owner");
    CHECK(task->source == "tickets 2026-Q4");
    CHECK_FALSE(task->example);
    CHECK(task->needs.empty());
    CHECK(task->tags == ((i + 1) % 4 == 0 ? std::vector<std::string>{"long-context"}
                                          : std::vector<std::string>{}));
    REQUIRE(task->checks.size() == 2);
    CHECK(task->checks[0].kind == manifest::CheckKind::kContains);
    CHECK(task->checks[0].text == q.facts[0]);
    CHECK(task->checks[1].text == "reset");
  }
  CHECK(generated == 10);
  // The scenario still validates with the imported tasks in its corpus.
  CHECK(testing::RunStagegate(dir, {"validate", dir / "app/scenario.yaml"}).exit_code == 0);
  // A second import of the same file is refused: it would overwrite, and take ids twice.
  ran = testing::RunStagegate(dir, {"corpus", "import", dir / "questions.csv", "--corpus", corpus,
                                    "--approved-by", "A. Owner", "--source", "x"});
  CHECK(ran.exit_code == 2);
  CHECK(Has(ran.err, "questions.csv:2: id 'q-1' is taken by a task of the corpus"));
}

TEST_CASE("corpus import names each bad line and writes nothing", "[cli][corpus]") {
  testing::TempDir dir;
  const std::string corpus = Skeleton(dir);
  testing::WriteText(dir / "bad.csv",
                     "id,prompt,category,persona,needs\n"          // line 1
                     "a-1,How do I print?,it,employee,\n"          // 2: good
                     "a-2,,it,employee,\n"                         // 3: no prompt
                     "a-3,Who approves travel?,hr,nobody,\n"       // 4: unknown persona
                     "a-1,Again?,it,employee,\n"                   // 5: id of line 2
                     "a-5,Too,many,fields,here,x\n"                // 6: six fields
                     "a-6,Where is it?,,employee,retrieval;gpu\n"  // 7: no category, bad need
                     "\"a-7,\"\"unclosed\n");                      // 8: a quote that never closes
  Ran ran = testing::RunStagegate(dir, {"corpus", "import", dir / "bad.csv", "--corpus", corpus,
                                        "--approved-by", "A", "--source", "S"});
  INFO(ran.err);
  CHECK(ran.exit_code == 2);
  // The unclosed quote stops the CSV reader before any row is read: fix it first.
  CHECK(Has(ran.err, "bad.csv:8: a quoted field is not closed"));
  testing::WriteText(dir / "bad.csv",
                     testing::ReadText(dir / "bad.csv")
                         .substr(0, testing::ReadText(dir / "bad.csv").rfind("\"a-7")));
  ran = testing::RunStagegate(dir, {"corpus", "import", dir / "bad.csv", "--corpus", corpus,
                                    "--approved-by", "A", "--source", "S"});
  INFO(ran.err);
  CHECK(ran.exit_code == 2);
  CHECK_FALSE(Has(ran.err, "bad.csv:2:"));
  CHECK(Has(ran.err, "bad.csv:3: the prompt is empty"));
  CHECK(Has(ran.err,
            "bad.csv:4: persona 'nobody' is not in the corpus's personas.yaml "
            "(employee, contractor)"));
  CHECK(Has(ran.err, "bad.csv:5: id 'a-1' is taken by line 2"));
  CHECK(Has(ran.err, "bad.csv:6: has 6 fields, the header 5"));
  CHECK(Has(ran.err, "bad.csv:7: no category: give the column or --category"));
  CHECK(Has(ran.err, "bad.csv:7: unknown need 'gpu' (retrieval, identity, tools)"));
  CHECK(Has(ran.err, "nothing written (6 problems)"));
  CHECK_FALSE(std::filesystem::exists(corpus + "/tasks/bad.yaml"));

  // JSON Lines: arrays for lists, an unknown key and a line that is not JSON named.
  testing::WriteText(dir / "q.jsonl",
                     R"({"prompt":"Where is the VPN guide?","category":"it","facts":["vpn"]})"
                     "\n\n"
                     R"({"prompt":"x","category":"it","colour":"red"})"
                     "\n"
                     "{not json\n");
  ran =
      testing::RunStagegate(dir, {"corpus", "import", dir / "q.jsonl", "--corpus", corpus,
                                  "--persona", "employee", "--approved-by", "A", "--source", "S"});
  CHECK(ran.exit_code == 2);
  CHECK(Has(ran.err, "q.jsonl:3: unknown column 'colour'"));
  CHECK(Has(ran.err, "q.jsonl:4: is not JSON: parse error at line 1, column 3: syntax error"));
  CHECK_FALSE(Has(ran.err, "q.jsonl:1:"));
}

TEST_CASE("corpus import starts a corpus that has no task file yet", "[cli][corpus]") {
  testing::TempDir dir;
  const std::string corpus = Skeleton(dir);
  std::filesystem::remove(corpus + "/tasks/examples.yaml");
  testing::WriteText(dir / "q.csv", "prompt,category\nWhere is the VPN guide?,it\n");
  Ran ran =
      testing::RunStagegate(dir, {"corpus", "import", dir / "q.csv", "--corpus", corpus,
                                  "--persona", "employee", "--approved-by", "A", "--source", "S"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  manifest::Diagnostics diagnostics;
  const std::optional<manifest::Corpus> loaded = manifest::LoadCorpus(corpus, diagnostics);
  REQUIRE(loaded);
  REQUIRE(loaded->tasks.size() == 1);
  CHECK(loaded->tasks[0].id == "it-001");
  // A corpus broken otherwise is still refused, its problem named.
  testing::WriteText(corpus + "/personas.yaml", "personas: 5\n");
  ran = testing::RunStagegate(
      dir, {"corpus", "import", dir / "q.csv", "--corpus", corpus, "--name", "more", "--persona",
            "employee", "--approved-by", "A", "--source", "S"});
  CHECK(ran.exit_code == 2);
  CHECK(Has(ran.err, "personas.yaml:1:"));
  CHECK(Has(ran.err, "has problems of its own; fix them first"));
}

TEST_CASE("corpus stats finds duplicates, near-duplicates, tasks without references and examples",
          "[cli][corpus]") {
  testing::TempDir dir;
  const auto task = [](const std::string& id, const std::string& prompt,
                       const std::string& category, const std::string& reference) {
    return "- id: " + id + "\n  prompt: \"" + prompt +
           "\"\n  persona: employee\n  category: " + category + "\n  needs: []\n  reference: \"" +
           reference + "\"\n  approved_by: A\n  source: S\n";
  };
  const std::string corpus = Skeleton(
      dir, task("t1", "How do I reset my password?", "it", "Use the portal.") +
               task("t2", "how do I reset my PASSWORD", "it", "Use the portal.") +
               task("t3", "How do I reset my password at home today?", "it", "") +
               task("t4", "What is the carry-over limit for annual leave in my first year?", "hr",
                    "Five days.") +
               task("t5", "Where is the printer?", "facilities", "Floor 2."));
  Ran ran = testing::RunStagegate(dir, {"corpus", "stats", corpus, "--json"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json stats = json::parse(ran.out);
  CHECK(stats["prompts"]["tasks"] == 5);
  CHECK(stats["prompts"]["min_words"] == 4);
  CHECK(stats["prompts"]["max_words"] == 13);
  CHECK(stats["categories"]["it"]["tasks"] == 3);
  CHECK(stats["categories"]["hr"]["median_words"] == 13);
  REQUIRE(stats["duplicates"].size() == 1);
  CHECK(stats["duplicates"][0]["tasks"] == json::array({"t1", "t2"}));
  // t3 adds "at home today" to t1's six words: 6 of 9 shared, below 0.8, so not near.
  CHECK(stats["near_duplicates"].empty());
  CHECK(stats["without_reference"] == json::array({"t3"}));
  CHECK(stats["examples"].empty());

  // The text form, on init's examples: each is named as still to be replaced.
  testing::TempDir fresh;
  const std::string skeleton = Skeleton(fresh);
  ran = testing::RunStagegate(fresh, {"corpus", "stats", skeleton});
  REQUIRE(ran.exit_code == 0);
  CHECK(Has(ran.out,
            "examples     3: example-general-1, example-general-2, example-general-3 "
            "(written by stagegate init"));
  CHECK(Has(ran.out, "duplicates   0"));
}

TEST_CASE("corpus stats counts a near-duplicate at 0.8 of shared words", "[cli][corpus]") {
  testing::TempDir dir;
  const std::string prompt = "one two three four five six seven eight";
  std::string tasks;
  for (const auto& [id, text] : {std::pair<std::string, std::string>{"a", prompt},
                                 {"b", prompt + " nine ten"}})  // 8 of 10: 0.8
    tasks += "- id: " + id + "\n  prompt: \"" + text +
             "\"\n  persona: employee\n  category: c\n  needs: []\n  reference: r\n"
             "  approved_by: A\n  source: S\n";
  const std::string corpus = Skeleton(dir, tasks);
  Ran ran = testing::RunStagegate(dir, {"corpus", "stats", corpus, "--json"});
  REQUIRE(ran.exit_code == 0);
  const json stats = json::parse(ran.out);
  REQUIRE(stats["near_duplicates"].size() == 1);
  CHECK(stats["near_duplicates"][0]["tasks"] == json::array({"a", "b"}));
  CHECK(stats["near_duplicates"][0]["similarity"].get<double>() == Approx(0.8));
  CHECK(stats["duplicates"].empty());
  ran = testing::RunStagegate(dir, {"corpus", "stats", corpus});
  CHECK(Has(ran.out, "near-duplicates 1 group of 2 tasks (each shares at least 0.8"));
  CHECK(Has(ran.out, "\n  a ~ b (0.8)\n"));
}

// The bound on the memory of corpus stats over the 20,000 prompts below, in KiB. Kept and printed,
// their pairs took 23.6 GB; as groups they take 112 MB in a Debug build, and about 700 MB under
// AddressSanitizer, whose shadow memory and quarantine of freed blocks come on top.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kCorpusStatsMemoryBoundKiB = 1536 * 1024;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr long kCorpusStatsMemoryBoundKiB = 1536 * 1024;
#else
constexpr long kCorpusStatsMemoryBoundKiB = 200 * 1024;
#endif
#else
constexpr long kCorpusStatsMemoryBoundKiB = 200 * 1024;
#endif

// 20,000 prompts of 40 shared words and one of their own: every pair, 199,990,000 of them, is a
// near-duplicate. Kept and printed, they took 23.6 GB and were killed; as groups they are one
// line. 300 duplicates of one prompt and 300 tasks without a reference are named ten at a time.
TEST_CASE("corpus stats on 20,000 templated prompts stays small in memory and output",
          "[cli][corpus]") {
  testing::TempDir dir;
  Skeleton(dir);
  std::filesystem::remove(std::string(dir / "app/corpus/tasks/examples.yaml"));
  std::string shared;
  for (int w = 0; w < 40; ++w)
    shared += " w" + std::to_string(w);
  for (int file = 0; file < 4; ++file) {
    std::string tasks;
    for (int n = file * 5000; n < (file + 1) * 5000; ++n) {
      const std::string prompt = n < 300 ? "the same question" : "q" + std::to_string(n) + shared;
      tasks += "- {id: t" + std::to_string(n) + ", prompt: '" + prompt +
               "', persona: employee, category: c, needs: [], reference: '" +
               (n >= 19700 ? "" : "r") + "', approved_by: A, source: S}\n";
    }
    testing::WriteText(dir / ("app/corpus/tasks/t" + std::to_string(file) + ".yaml"), tasks);
  }
  Ran ran = testing::RunStagegate(dir, {"corpus", "stats", dir / "app/corpus"});
  INFO(ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.size() < 4096);
  CHECK(Has(ran.out,
            "duplicates   1 group of 300 tasks (the same words)\n"
            "  t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = t8 = t9 and 290 more\n"));
  CHECK(Has(ran.out, "near-duplicates 1 group of 19700 tasks"));
  CHECK(Has(ran.out,
            "  t300 ~ t301 ~ t302 ~ t303 ~ t304 ~ t305 ~ t306 ~ t307 ~ t308 ~ t309 and "
            "19690 more\n"));
  CHECK(Has(ran.out,
            "without reference 300: t19700, t19701, t19702, t19703, t19704, t19705, "
            "t19706, t19707, t19708, t19709 and 290 more (no reference"));
  rusage children{};
  REQUIRE(getrusage(RUSAGE_CHILDREN, &children) == 0);
  CHECK(children.ru_maxrss < kCorpusStatsMemoryBoundKiB);  // the largest child so far, this one

  ran = testing::RunStagegate(dir, {"corpus", "stats", dir / "app/corpus", "--json"});
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.size() < 1024 * 1024);
  const json stats = json::parse(ran.out);
  REQUIRE(stats["near_duplicates"].size() == 1);
  CHECK(stats["near_duplicates"][0]["tasks"].size() == 19700);
  CHECK(stats["near_duplicates"][0]["tasks"][19699] == "t19999");
  CHECK(stats["duplicates"][0]["tasks"].size() == 300);
}

// Past 20,000 tasks prompts are not compared, and the counts say so rather than 0.
TEST_CASE("corpus stats past 20,000 tasks says the prompts were not compared", "[cli][corpus]") {
  testing::TempDir dir;
  Skeleton(dir);
  std::filesystem::remove(std::string(dir / "app/corpus/tasks/examples.yaml"));
  for (int file = 0; file < 3; ++file) {
    std::string tasks;
    for (int n = file * 7000; n < (file + 1) * 7000; ++n)
      tasks += "- {id: t" + std::to_string(n) +
               ", prompt: 'same words', persona: employee, "
               "category: c, needs: [], reference: r, approved_by: A, source: S}\n";
    testing::WriteText(dir / ("app/corpus/tasks/t" + std::to_string(file) + ".yaml"), tasks);
  }
  Ran ran = testing::RunStagegate(dir, {"corpus", "stats", dir / "app/corpus"});
  REQUIRE(ran.exit_code == 0);
  CHECK(Has(ran.out, "duplicates   not compared: more than 20000 tasks\n"));
  CHECK(Has(ran.out, "near-duplicates not compared: more than 20000 tasks\n"));
  CHECK_FALSE(Has(ran.out, "duplicates   0"));
}

}  // namespace
}  // namespace stagegate::cli
