#include "load/dataset.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace stagegate::load {
namespace {

using Problems = std::vector<DatasetProblem>;

DatasetLoad Parse(const std::string& text, DatasetOptions options = {}) {
  return ParseDataset("d.jsonl", text, options);
}

std::vector<std::string> Prompts(const Dataset& dataset) {
  std::vector<std::string> prompts;
  for (const DatasetEntry& entry : dataset.entries)
    prompts.push_back(entry.text());
  return prompts;
}

TEST_CASE("a jsonl dataset reads prompts, messages, ids and output lengths", "[dataset]") {
  DatasetLoad load = Parse(
      "{\"prompt\": \"Say hello\", \"id\": \"a\"}\n"
      "\n"
      "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
      "{\"role\": \"user\", \"content\": \"What is 2+2?\"}], \"max_tokens\": 7, \"id\": 12}\r\n"
      "{\"prompt\": \"Twelve bytes\", \"output_tokens\": 30}\n");
  INFO(load.Message());
  REQUIRE(load.dataset);
  const Dataset& d = *load.dataset;
  CHECK(d.format == DatasetFormat::kJsonl);
  CHECK(d.estimated);
  REQUIRE(d.entries.size() == 3);
  CHECK(d.entries[0].line == 1);
  CHECK(d.entries[0].id == "a");
  CHECK(d.entries[0].prompt == "Say hello");
  CHECK(d.entries[0].messages.empty());
  CHECK(d.entries[0].input_tokens == 3);  // 9 bytes
  CHECK_FALSE(d.entries[0].output_tokens);
  CHECK(d.entries[1].line == 3);
  CHECK(d.entries[1].id == "12");
  CHECK(d.entries[1].messages ==
        std::vector<DatasetMessage>{{"system", "Be brief."}, {"user", "What is 2+2?"}});
  CHECK(d.entries[1].input_tokens == 3 + 3);  // 9 and 12 bytes
  CHECK(d.entries[1].output_tokens == 7);
  CHECK(d.entries[1].text() == "What is 2+2?");
  CHECK(d.entries[2].line == 4);
  CHECK(d.entries[2].output_tokens == 30);
}

TEST_CASE("a sharegpt array keeps each conversation up to its last user turn", "[dataset]") {
  const std::string text = R"([
  {"id": "one", "conversations": [
    {"from": "system", "value": "You help."},
    {"from": "human", "value": "Hi there"},
    {"from": "gpt", "value": "Hello! How can I help you today?"},
    {"from": "human", "value": "Tell me a joke"},
    {"from": "gpt", "value": "No."}
  ]},
  {"id": "no user", "conversations": [{"from": "gpt", "value": "alone"}]},
  {"id": "two", "conversations": [{"from": "human", "value": "Only a question"}]}
])";
  DatasetLoad load = ParseDataset("s.json", text, {});
  INFO(load.Message());
  REQUIRE(load.dataset);
  const Dataset& d = *load.dataset;
  CHECK(d.format == DatasetFormat::kShareGpt);
  CHECK(d.read == 3);
  CHECK(d.without_user_turn == 1);
  REQUIRE(d.entries.size() == 2);
  CHECK(d.entries[0].line == 2);
  CHECK(d.entries[0].id == "one");
  CHECK(d.entries[0].messages ==
        std::vector<DatasetMessage>{{"system", "You help."},
                                    {"user", "Hi there"},
                                    {"assistant", "Hello! How can I help you today?"},
                                    {"user", "Tell me a joke"}});
  // The reply to the first question: 32 bytes, 8 estimated tokens.
  CHECK(d.entries[0].output_tokens == 8);
  CHECK(d.entries[1].line == 10);
  CHECK(d.entries[1].messages == std::vector<DatasetMessage>{{"user", "Only a question"}});
  CHECK_FALSE(d.entries[1].output_tokens);
  CHECK(d.Describe({}) ==
        "2 of 3 entries of s.json (sharegpt; 1 without a user turn skipped, tokens estimated as "
        "bytes / 4)");
}

TEST_CASE("sharegpt entries may also come one a line", "[dataset]") {
  DatasetLoad load = Parse(
      "{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}]}\n"
      "{\"conversations\": [{\"from\": \"human\", \"value\": \"b\"}]}\n",
      {.format = DatasetFormat::kShareGpt});
  INFO(load.Message());
  REQUIRE(load.dataset);
  CHECK(Prompts(*load.dataset) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("the format follows the first character unless given", "[dataset]") {
  CHECK(DetectDatasetFormat("  \n[{}]") == DatasetFormat::kShareGpt);
  CHECK(DetectDatasetFormat("\xEF\xBB\xBF[") == DatasetFormat::kShareGpt);
  CHECK(DetectDatasetFormat("{\"prompt\": \"[\"}") == DatasetFormat::kJsonl);
  CHECK(DetectDatasetFormat("") == DatasetFormat::kJsonl);
  CHECK(DatasetFormatFromName("sharegpt") == DatasetFormat::kShareGpt);
  CHECK(DatasetFormatFromName("jsonl") == DatasetFormat::kJsonl);
  CHECK_FALSE(DatasetFormatFromName("csv"));
  // An array read as jsonl is refused, not misread.
  DatasetLoad load = Parse("[{\"prompt\": \"x\"}]", {.format = DatasetFormat::kJsonl});
  CHECK_FALSE(load.dataset);
  CHECK(load.Message() ==
        "d.jsonl:1: a JSON array is the sharegpt format; the jsonl format is one object a line");
}

TEST_CASE("every bad jsonl line is named with what is wrong", "[dataset]") {
  DatasetLoad load = Parse(
      "{\"prompt\": \"fine\"}\n"
      "{\"prompt\": \n"
      "[1, 2]\n"
      "{\"text\": \"x\"}\n"
      "{\"prompt\": \"x\", \"messages\": []}\n"
      "{\"prompt\": \"\"}\n"
      "{\"messages\": [{\"role\": \"user\"}]}\n"
      "{\"prompt\": \"x\", \"max_tokens\": 0}\n"
      "{\"prompt\": \"x\", \"max_tokens\": 5, \"output_tokens\": 5}\n"
      "{\"prompt\": \"x\", \"id\": [1]}\n"
      "{\"prompt\": \"caf\xE9\"}\n");
  CHECK_FALSE(load.dataset);
  CHECK(load.Message() ==
        "d.jsonl:2: column 12: not JSON: syntax error while parsing value - unexpected end of "
        "input; expected '[', '{', or a literal\n"
        "d.jsonl:3: expected a JSON object, got [1,2]\n"
        "d.jsonl:4: expected 'prompt' or 'messages'\n"
        "d.jsonl:5: give 'prompt' or 'messages', not both\n"
        "d.jsonl:6: 'prompt' must be a string that is not empty, got \"\"\n"
        "d.jsonl:7: 'messages[0]' must be an object with a string 'role' and 'content', got "
        "{\"role\":\"user\"}\n"
        "d.jsonl:8: 'max_tokens' must be an integer from 1 to 1000000, got 0\n"
        "d.jsonl:9: give 'max_tokens' or 'output_tokens', not both\n"
        "d.jsonl:10: 'id' must be a string or an integer, got [1]\n"
        "d.jsonl:11: not UTF-8 (byte 16 of the line)");
}

// Found by the dataset fuzz target: a role misspelt ("usev") was sent as it was, and an entry
// whose last turn was not the user's was kept although the reply answers the last user turn.
TEST_CASE("messages of an unknown role, or not ending in a user turn, are named", "[dataset]") {
  DatasetLoad load = Parse(
      "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
      "{\"role\": \"usev\", \"content\": \"What is 2+2?\"}]}\n"
      "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, "
      "{\"role\": \"assistant\", \"content\": \"Hello\"}]}\n"
      "{\"messages\": [{\"role\": \"developer\", \"content\": \"d\"}, "
      "{\"role\": \"user\", \"content\": \"ok\"}]}\n");
  CHECK_FALSE(load.dataset);
  CHECK(load.Message() ==
        "d.jsonl:1: 'messages[1]': unknown role \"usev\" (system, developer, user, assistant or "
        "tool)\n"
        "d.jsonl:2: 'messages' must end in a user turn (the one the reply answers); the last is "
        "assistant's");
}

TEST_CASE("a bad sharegpt entry is named by the line it starts on", "[dataset]") {
  const std::string text =
      "[\n"
      "  {\"conversations\": [{\"from\": \"human\", \"value\": \"ok\"}]},\n"
      "  {\"conversations\": [\n"
      "     {\"from\": \"robot\", \"value\": \"?\"}]},\n"
      "  {\"conversations\": [{\"from\": \"human\"}]},\n"
      "  {\"id\": 1},\n"
      "  {\"conversations\": [\n"
      "     {\"from\": \"human\", \"value\": }]},\n"
      "  \"text\",\n"
      "  {\"conversations\": {}}\n"
      "]\n";
  DatasetLoad load = ParseDataset("s.json", text, {});
  CHECK_FALSE(load.dataset);
  CHECK(load.problems ==
        Problems{{3, "'conversations[0]': 'from' must be human, gpt or system, got \"robot\""},
                 {5,
                  "'conversations[0]' must be an object with a string 'from' and 'value', "
                  "got {\"from\":\"human\"}"},
                 {6, "missing 'conversations'"},
                 {8,
                  "column 33: not JSON: syntax error while parsing value - unexpected '}'; "
                  "expected '[', '{', or a literal"},
                 {9, "expected a JSON object, got \"text\""},
                 {10, "'conversations' must be a list of {\"from\", \"value\"} objects, got {}"}});
}

TEST_CASE("a sharegpt array that is broken as a whole says where", "[dataset]") {
  CHECK(ParseDataset("s.json", "[\n{\"conversations\": []},\n", {}).problems ==
        Problems{{3, "the array does not close: this entry or the file is cut short"}});
  CHECK(ParseDataset("s.json", "[\n{\"conversations\": [\n", {}).problems ==
        Problems{{2, "the array does not close: this entry or the file is cut short"}});
  CHECK(ParseDataset("s.json", "[{\"a\": 1},\n]", {}).problems ==
        Problems{{1, "missing 'conversations'"}, {2, "a ',' before the array's ']'"}});
  CHECK(ParseDataset("s.json", "[{\"a\": \"]\"},,\n{}]\n x", {}).problems ==
        Problems{{1, "an empty entry: two ',' in a row"},
                 {1, "missing 'conversations'"},
                 {2, "missing 'conversations'"},
                 {3, "text after the array's closing ']'"}});
  CHECK(ParseDataset("s.json",
                     "[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"\xFF\"}]}]", {})
            .problems == Problems{{2, "not UTF-8 (byte 48 of the line)"}});
  CHECK(ParseDataset("s.json", "[ ]", {}).problems == Problems{{0, "the dataset has no entries"}});
}

TEST_CASE("bounds on the file, the prompt and the entries are problems", "[dataset]") {
  CHECK(Parse("{\"prompt\": \"0123456789\"}\n", {.max_file_bytes = 10}).Message() ==
        "d.jsonl: the file is larger than 10 bytes");
  CHECK(Parse("{\"prompt\": \"0123\"}\n{\"prompt\": \"0123456789\"}\n", {.max_prompt_bytes = 8})
            .Message() == "d.jsonl:2: the prompt is 10 bytes, over the limit of 8 bytes");
  CHECK(
      Parse("{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n\n{\"prompt\": \"c\"}\n", {.max_entries = 2})
          .Message() == "d.jsonl:4: more entries than the limit of 2");
  CHECK(Parse("\n \n").Message() == "d.jsonl: the dataset has no entries");
  CHECK(Parse(std::string(1'000'000, '[') + std::string(1'000'000, ']') + "\n").Message() ==
        "d.jsonl:1: arrays and objects nested deeper than 100 levels");
  CHECK(Parse("{\"prompt\": \"" + std::string(200, '[') + "\", \"meta\": [[[[1]]]]}\n").dataset);

  std::string many;
  for (int i = 0; i < 150; ++i)
    many += "{}\n";
  DatasetLoad load = Parse(many);
  CHECK(load.problems.size() == kMaxDatasetProblems);
  CHECK(load.problems.back().line == 100);
  CHECK(load.more_problems == 50);
  CHECK(load.Message().ends_with("\nd.jsonl: 50 more problems not shown"));
}

TEST_CASE("a file that cannot be read is one problem naming it", "[dataset]") {
  testing::TempDir dir;
  DatasetLoad load = LoadDataset(dir / "absent.jsonl", {});
  CHECK_FALSE(load.dataset);
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].line == 0);
  CHECK(load.Message().starts_with(dir / "absent.jsonl" + ": "));

  testing::WriteText(dir / "big.jsonl", std::string(64, ' ') + "{\"prompt\": \"x\"}\n");
  CHECK_FALSE(LoadDataset(dir / "big.jsonl", {.max_file_bytes = 32}).dataset);
  REQUIRE(LoadDataset(dir / "big.jsonl", {}).dataset);
}

TEST_CASE("filters leave out entries by prompt and output length and count them", "[dataset]") {
  const std::string text = "{\"prompt\": \"" + std::string(4, 'a') + "\"}\n" +    // 1 token
                           "{\"prompt\": \"" + std::string(40, 'b') + "\"}\n" +   // 10 tokens
                           "{\"prompt\": \"" + std::string(400, 'c') + "\"}\n" +  // 100 tokens
                           "{\"prompt\": \"" + std::string(40, 'd') + "\", \"max_tokens\": 500}\n";
  DatasetOptions options{.min_tokens = 2, .max_tokens = 50, .max_output_tokens = 100};
  DatasetLoad load = Parse(text, options);
  INFO(load.Message());
  REQUIRE(load.dataset);
  CHECK(Prompts(*load.dataset) == std::vector<std::string>{std::string(40, 'b')});
  CHECK(load.dataset->too_short == 1);
  CHECK(load.dataset->too_long == 1);
  CHECK(load.dataset->too_much_output == 1);
  CHECK(load.dataset->Describe(options) ==
        "1 of 4 entries of d.jsonl (jsonl; 1 under 2 tokens left out, 1 over 50 tokens left out, "
        "1 asking for over 100 output tokens left out, tokens estimated as bytes / 4)");

  DatasetLoad none = Parse(text, {.min_tokens = 1000});
  CHECK(none.Message() ==
        "d.jsonl: no entry is left: 0 of 4 entries of d.jsonl (jsonl; 4 under 1000 tokens left "
        "out, tokens estimated as bytes / 4)");
}

TEST_CASE("a tokenizer can replace the estimate", "[dataset]") {
  const auto words = [](std::string_view text) {
    return static_cast<int64_t>(std::count(text.begin(), text.end(), ' ') + 1);
  };
  DatasetLoad load = Parse(
      "{\"prompt\": \"one two three four five six seven eight\"}\n"
      "{\"prompt\": \"one two\"}\n",
      {.max_tokens = 4, .count_tokens = words});
  INFO(load.Message());
  REQUIRE(load.dataset);
  CHECK_FALSE(load.dataset->estimated);
  REQUIRE(load.dataset->entries.size() == 1);
  CHECK(load.dataset->entries[0].input_tokens == 2);
  CHECK(load.dataset->Describe({.max_tokens = 4}).ends_with("tokens counted)"));
}

TEST_CASE("sampling is a seeded permutation per round of the entries", "[dataset]") {
  for (size_t count : {1, 2, 3, 7, 64, 1000, 1001}) {
    INFO(count);
    std::set<size_t> first, second;
    std::vector<size_t> order;
    for (size_t s = 0; s < count; ++s) {
      const size_t index = DatasetIndex(42, static_cast<int64_t>(s), count);
      REQUIRE(index < count);
      first.insert(index);
      order.push_back(index);
      second.insert(DatasetIndex(42, static_cast<int64_t>(count + s), count));
    }
    CHECK(first.size() == count);   // every entry once in the first round
    CHECK(second.size() == count);  // and again in the second
    for (size_t s = 0; s < count; ++s)
      CHECK(DatasetIndex(42, static_cast<int64_t>(s), count) == order[s]);
  }
  std::vector<size_t> seed1, seed2, round2;
  for (int64_t s = 0; s < 100; ++s) {
    seed1.push_back(DatasetIndex(1, s, 100));
    seed2.push_back(DatasetIndex(2, s, 100));
    round2.push_back(DatasetIndex(1, 100 + s, 100));
  }
  CHECK(seed1 != seed2);
  CHECK(seed1 != round2);
  std::vector<size_t> identity(100);
  std::iota(identity.begin(), identity.end(), 0);
  CHECK(seed1 != identity);
}

}  // namespace
}  // namespace stagegate::load
