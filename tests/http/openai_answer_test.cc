#include "http/openai_answer.h"

#include <catch2/catch.hpp>

namespace stagegate::http {
namespace {

using Shape = WholeAnswer::Shape;

TEST_CASE("a whole chat answer gives its content, reasoning, tool calls and usage", "[http]") {
  const WholeAnswer a = DecodeWholeAnswer(R"({"choices": [{"index": 0, "finish_reason": "stop",
      "message": {"role": "assistant", "content": "Paris.", "reasoning_content": "capital",
                  "tool_calls": [{"id": "c1", "type": "function",
                                  "function": {"name": "lookup", "arguments": "{\"q\":1}"}}]}}],
      "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 8}}})");
  CHECK(a.shape == Shape::kAnswer);
  CHECK(a.content == "Paris.");
  CHECK(a.reasoning == "capital");
  CHECK(a.finish_reason == "stop");
  CHECK(a.tool_calls_json ==
        R"([{"arguments":"{\"q\":1}","id":"c1","index":0,"name":"lookup","type":"function"}])");
  CHECK(a.usage == StreamUsage{.prompt_tokens = 12, .completion_tokens = 3, .cached_tokens = 8});
}

TEST_CASE("a whole text completion gives its text; an error or a non-object says which", "[http]") {
  const WholeAnswer text = DecodeWholeAnswer(R"({"choices": [{"text": "four", "index": 0}]})");
  CHECK(text.shape == Shape::kAnswer);
  CHECK(text.content == "four");
  CHECK(text.tool_calls_json.empty());
  CHECK(text.usage == StreamUsage{});

  CHECK(DecodeWholeAnswer(R"({"error": {"message": "overloaded"}})").shape == Shape::kError);
  CHECK(ErrorBodyMessage(R"({"error": {"message": "overloaded"}})") == "overloaded");
  CHECK(ErrorBodyMessage(R"({"error": "busy"})") == "busy");
  CHECK(ErrorBodyMessage(R"({"message": "no model"})") == "no model");
  CHECK(ErrorBodyMessage(std::string(300, 'x')) == std::string(200, 'x'));
  // An answer that also carries an error field is still an answer.
  CHECK(DecodeWholeAnswer(R"({"error": null, "choices": [{"text": "a"}]})").shape ==
        Shape::kAnswer);
  for (const char* body : {"", "[1, 2]", "\"text\"", "{not json", "null"})
    CHECK(DecodeWholeAnswer(body).shape == Shape::kNotObject);
}

// Every field of the wrong type is read as absent, never thrown on: nlohmann's value(key, "")
// throws when the key holds a number, which a hostile server could use to end a run.
TEST_CASE("a whole answer with every field of the wrong type decodes without throwing", "[http]") {
  const char* body = R"({"choices": [{"finish_reason": 7,
      "message": {"content": 5, "reasoning": [], "tool_calls": [
          {"id": 5, "type": {}, "function": {"name": 1, "arguments": {"a": 1}}}, 3, "x",
          {"id": "ok", "function": "not an object"}]}}],
      "usage": {"prompt_tokens": "12", "completion_tokens": 2.5,
                "prompt_tokens_details": {"cached_tokens": -4}}})";
  WholeAnswer a;
  REQUIRE_NOTHROW(a = DecodeWholeAnswer(body));
  CHECK(a.shape == Shape::kAnswer);
  CHECK(a.content.empty());
  CHECK(a.reasoning.empty());
  CHECK(a.finish_reason.empty());
  CHECK(a.tool_calls_json == R"([{"arguments":"","id":"","index":0,"name":"","type":""},)"
                             R"({"arguments":"","id":"ok","index":1,"name":"","type":""}])");
  CHECK(a.usage == StreamUsage{});
  REQUIRE_NOTHROW(DecodeWholeAnswer(R"({"choices": [{"message": "text"}], "usage": [1]})"));
  REQUIRE_NOTHROW(ErrorBodyMessage(R"({"error": {"message": 3}, "message": {}})"));
}

}  // namespace
}  // namespace stagegate::http
