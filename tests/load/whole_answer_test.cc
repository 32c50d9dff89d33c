// A whole (not streamed) answer whose fields have the wrong types is a classified outcome, never a
// crash of the run: before one decoder served both, a tool call with a numeric id threw inside a
// worker thread.

#include <catch2/catch.hpp>

#include <string>

#include "base/clock.h"
#include "http/openai_request.h"
#include "http_test_server.h"
#include "load/engine.h"
#include "send_one.h"

namespace stagegate::load {
namespace {

// `body` as the reply; with `answer_at`, of a plain JSON API whose answer is there.
RequestRecord SendOne(const std::string& body, const std::string& answer_at = "") {
  testing::FixedResponseServer server([&](const std::string&) {
    return testing::HttpResponse("200 OK", body, "application/json");
  });
  RequestSpec spec{.url = server.base() + "/v1/chat/completions",
                   .body = http::BuildRequestBody({.model = "m", .stream = false}, "hi"),
                   .stream = false,
                   .answer_at = answer_at};
  return testing::SendOne(spec);
}

TEST_CASE("a whole answer with fields of the wrong type is recorded, not thrown on",
          "[load][hostile]") {
  const RequestRecord r =
      SendOne(R"({"choices": [{"finish_reason": 1, "message": {"content": "ok", "tool_calls": [)"
              R"({"id": 5, "type": 6, "function": {"name": 7, "arguments": {}}}]}}],)"
              R"("usage": {"completion_tokens": "9"}})");
  CHECK(r.outcome == Outcome::kOk);
  CHECK(r.answer_text == "ok");
  CHECK(r.finish_reason.empty());
  CHECK(r.tool_calls_json == R"([{"arguments":"","id":"","index":0,"name":"","type":""}])");
  CHECK(r.token_source != "usage");  // "9" is not a count
}

TEST_CASE("a whole answer that is an error or not JSON is classified", "[load][hostile]") {
  const RequestRecord error = SendOne(R"({"error": {"message": "model unloaded"}})");
  CHECK(error.outcome == Outcome::kHttpError);
  CHECK(error.error_message == "error after HTTP 200: model unloaded");
  const RequestRecord garbage = SendOne("<html>proxy</html>");
  CHECK(garbage.outcome == Outcome::kMalformedStream);
  CHECK(garbage.error_message == "response body is not a JSON object");
}

TEST_CASE("a plain JSON API's answer is the text at its pointer, and anything else is classified",
          "[load][hostile]") {
  const RequestRecord ok =
      SendOne(R"({"data": [{"text": "Reset it at the portal."}]})", "/data/0/text");
  CHECK(ok.outcome == Outcome::kOk);
  CHECK(ok.answer_text == "Reset it at the portal.");
  CHECK(!ok.streamed);
  // An OpenAI body is not read as one when a pointer is given.
  const RequestRecord openai =
      SendOne(R"({"choices": [{"message": {"content": "hello"}}]})", "/answer");
  CHECK(openai.outcome == Outcome::kMalformedStream);
  CHECK(openai.error_message == "the reply has no text at /answer");
  CHECK(openai.answer_text.empty());
  const RequestRecord number = SendOne(R"({"answer": 5})", "/answer");
  CHECK(number.outcome == Outcome::kMalformedStream);
  CHECK(number.error_message == "the reply has no text at /answer (it holds number)");
  const RequestRecord index = SendOne(R"({"data": ["a"]})", "/data/x");
  CHECK(index.outcome == Outcome::kMalformedStream);
  CHECK(index.error_message == "the reply has no text at /data/x");
  const RequestRecord beyond = SendOne(R"({"data": ["a"]})", "/data/3");
  CHECK(beyond.error_message == "the reply has no text at /data/3");
  const RequestRecord garbage = SendOne("<html>proxy</html>", "/answer");
  CHECK(garbage.outcome == Outcome::kMalformedStream);
  CHECK(garbage.error_message == "response body is not JSON");
  // A reply that is JSON but not an object may still hold the answer.
  CHECK(SendOne(R"(["first", "second"])", "/1").answer_text == "second");
}

}  // namespace
}  // namespace stagegate::load
