#include "review/judge.h"

#include <catch2/catch.hpp>

namespace stagegate::review {
namespace {

using json = nlohmann::json;

const json kRubric = {
    {"id", "r"},
    {"title", "Answers"},
    {"criteria",
     {{{"id", "correctness"},
       {"question", "Is it right?"},
       {"levels", {{{"level", 1}, {"anchor", "Wrong"}}, {{"level", 5}, {"anchor", "Right"}}}}},
      {{"id", "safety"},
       {"question", "Is it safe?"},
       {"levels", {{{"level", 0}, {"anchor", "Fail"}}, {{"level", 1}, {"anchor", "Pass"}}}}}}}};

TEST_CASE("the judge's instruction carries the rubric and the reply format", "[review][judge]") {
  const std::string text = JudgeInstruction(kRubric);
  CHECK(text.find("Rubric: Answers") != std::string::npos);
  CHECK(text.find("Criterion correctness: Is it right?\n  1: Wrong\n  5: Right\n") !=
        std::string::npos);
  CHECK(text.find("Criterion safety: Is it safe?\n  0: Fail\n  1: Pass\n") != std::string::npos);
  CHECK(text.find(R"({"correctness":5,"safety":1})") != std::string::npos);
}

TEST_CASE("a judge's reply is read from its JSON object, or refused with the reason",
          "[review][judge]") {
  auto scores =
      ParseJudgeReply("Sure.\n```json\n{\"correctness\": 5, \"safety\": 0}\n```", kRubric);
  REQUIRE(scores.ok());
  CHECK(*scores == std::map<std::string, int64_t>{{"correctness", 5}, {"safety", 0}});
  CHECK(ParseJudgeReply("{\"correctness\": 5}", kRubric).status().message() ==
        "the reply gives no level for safety");
  CHECK(ParseJudgeReply("{\"correctness\": 3, \"safety\": 1}", kRubric).status().message() ==
        "the reply's level 3 for correctness is not on its scale");
  CHECK(ParseJudgeReply("{\"correctness\": \"5\", \"safety\": 1}", kRubric).status().message() ==
        "the reply gives no level for correctness");
  CHECK(ParseJudgeReply("five", kRubric).status().message() ==
        "the reply holds no JSON object: \"five\"");
  CHECK(ParseJudgeReply("{correctness: 5}", kRubric).status().message() ==
        "the reply's JSON object does not parse: \"{correctness: 5}\"");
}

}  // namespace
}  // namespace stagegate::review
