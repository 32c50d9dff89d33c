// Request bodies, --extra-inputs, W3C trace context, Server-Timing and Retry-After.

#include "http/openai_request.h"

#include <catch2/catch.hpp>

#include <set>

namespace stagegate::http {
namespace {

using json = nlohmann::json;

TEST_CASE("A streamed chat body carries the prompt, the model and the usage request", "[http]") {
  const json body = json::parse(BuildRequestBody(
      {.api = ApiKind::kChat, .model = "m1", .stream = true, .max_tokens = 64}, "hi \"there\""));
  CHECK(body == json::parse(R"({"messages":[{"role":"user","content":"hi \"there\""}],
    "model":"m1","stream":true,"stream_options":{"include_usage":true},"max_tokens":64})"));
}

TEST_CASE("Prompts with quotes, backslashes, control bytes and UTF-8 survive the body", "[http]") {
  std::string prompt = "say \"hi\" \\ then\n\ttab\r\x01\x1f\x7f end \xC3\xBC\xE2\x82\xAC";
  for (int c = 0; c < 0x20; ++c)
    prompt += static_cast<char>(c);
  for (ApiKind api : {ApiKind::kChat, ApiKind::kCompletions}) {
    const json body = json::parse(BuildRequestBody({.api = api, .model = "m"}, prompt));
    CHECK((api == ApiKind::kChat ? body["messages"][0]["content"] : body["prompt"]) == prompt);
    CHECK(body["model"] == "m");
  }
}

TEST_CASE("Extra inputs may replace the messages themselves", "[http]") {
  const json messages = json::array({{{"role", "system"}, {"content", "x"}}});
  const json body =
      json::parse(BuildRequestBody({.model = "m", .extra = {{"messages", messages}}}, "ignored"));
  CHECK(body["messages"] == messages);
}

TEST_CASE("A completions body uses prompt; an unstreamed body asks for no usage chunk", "[http]") {
  const json body = json::parse(BuildRequestBody(
      {.api = ApiKind::kCompletions, .model = "m2", .stream = false}, "complete me"));
  CHECK(body == json::parse(R"({"prompt":"complete me","model":"m2","stream":false})"));
  CHECK(ApiPath(ApiKind::kCompletions) == "/completions");
  CHECK(ApiPath(ApiKind::kChat) == "/chat/completions");
}

TEST_CASE("Extra inputs are merged last and win over the built fields", "[http]") {
  json extra = {{"ignore_eos", true}, {"max_tokens", 7}, {"stream_options", nullptr}};
  const json body = json::parse(
      BuildRequestBody({.model = "m", .stream = true, .max_tokens = 64, .extra = extra}, "p"));
  CHECK(body["ignore_eos"] == true);
  CHECK(body["max_tokens"] == 7);
  CHECK(body["stream_options"].is_null());
}

TEST_CASE("ParseExtraInputs reads JSON values and keeps other text as strings", "[http]") {
  Result<json> extra =
      ParseExtraInputs(R"(ignore_eos:true, min_tokens:128,stop:["\n", ","],meta:{"a":1,"b":[2,3]},)"
                       R"( note:plain words,temperature:0.5)");
  REQUIRE(extra.ok());
  CHECK(*extra == json::parse(R"({"ignore_eos":true,"min_tokens":128,"stop":["\n",","],
    "meta":{"a":1,"b":[2,3]},"note":"plain words","temperature":0.5})"));
  CHECK(ParseExtraInputs("").value() == json::object());
  CHECK(ParseExtraInputs("  ").value() == json::object());
}

TEST_CASE("ParseExtraInputs names every pair that is not key:value", "[http]") {
  Result<json> extra = ParseExtraInputs("ignore_eos,min_tokens:3,:5");
  REQUIRE_FALSE(extra.ok());
  CHECK(extra.status().message() ==
        "--extra-inputs: 'ignore_eos' is not key:value; ':5' is not key:value (expected e.g. "
        "ignore_eos:true,min_tokens:128)");
}

TEST_CASE("Trace contexts are W3C traceparent headers with fresh ids", "[http]") {
  std::mt19937_64 rng(42);
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) {
    TraceContext context = NewTraceContext(rng);
    CHECK(context.trace_id.size() == 32);
    CHECK(context.span_id.size() == 16);
    CHECK(context.trace_id.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(context.span_id.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(context.Header() ==
          "traceparent: 00-" + context.trace_id + "-" + context.span_id + "-01");
    ids.insert(context.trace_id);
  }
  CHECK(ids.size() == 100);
}

TEST_CASE("Server-Timing entries are parsed with durations, descriptions and quoting", "[http]") {
  const std::vector<ServerTiming> entries = ParseServerTiming(
      R"(retrieval;dur=12.5;desc="BM25, top 4", identity;DUR=0.3, cache;desc=hit, )"
      R"(tools;dur=abc;desc="say \"hi\"", ;dur=1)");
  REQUIRE(entries.size() == 4);
  CHECK(entries[0] == ServerTiming{"retrieval", 12.5, "BM25, top 4"});
  CHECK(entries[1] == ServerTiming{"identity", 0.3, ""});
  CHECK(entries[2] == ServerTiming{"cache", std::nullopt, "hit"});
  CHECK(entries[3] == ServerTiming{"tools", std::nullopt, "say \"hi\""});
  CHECK(ParseServerTiming("").empty());
}

TEST_CASE("Retry-After is read as delta-seconds only", "[http]") {
  CHECK(ParseRetryAfter("5") == 5.0);
  CHECK(ParseRetryAfter(" 0 ") == 0.0);
  CHECK_FALSE(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT").has_value());
  CHECK_FALSE(ParseRetryAfter("-1").has_value());
  CHECK_FALSE(ParseRetryAfter("1.5").has_value());
  CHECK_FALSE(ParseRetryAfter("").has_value());
}

}  // namespace
}  // namespace stagegate::http
