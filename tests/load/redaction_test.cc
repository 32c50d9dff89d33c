// Secrets a server echoes back never reach a record: the request's own credentials (its
// Authorization header, its URL's password) and the run's other secrets (spec.redactor).

#include <catch2/catch.hpp>

#include <atomic>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/strings.h"
#include "http/openai_request.h"
#include "http_test_server.h"
#include "load/engine.h"
#include "send_one.h"

namespace stagegate::load {
namespace {

using nlohmann::json;
using testing::SendOne;

// The request's Authorization header values, as a server that echoes them would quote them.
std::string AuthorizationOf(const std::string& request) {
  std::string found;
  for (const std::string& line : Split(request.substr(0, request.find("\r\n\r\n")), '\n')) {
    std::string lower = line;
    for (char& c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind("authorization:", 0) == 0) found += std::string(Trim(line.substr(14))) + ";";
  }
  return found;
}

std::string Json(const std::string& status, const json& body) {
  return testing::HttpResponse(status, body.dump(), "application/json");
}

TEST_CASE("credentials a server echoes into an error or an answer are redacted", "[load][redact]") {
  Redactor run_secrets;
  run_secrets.Add("tok-other-persona");
  std::atomic<bool> answer = false;
  testing::FixedResponseServer server([&](const std::string& request) {
    const std::string echoed = AuthorizationOf(request) + " and tok-other-persona";
    if (!answer)
      return Json("401 Unauthorized", {{"error", {{"message", "bad credentials: " + echoed}}}});
    return Json(
        "200 OK",
        {{"choices",
          {{{"message",
             {{"content", "your key is " + echoed},
              {"reasoning_content", "I saw " + echoed},
              {"tool_calls",
               {{{"id", "c1"},
                 {"type", "function"},
                 {"function", {{"name", "f"}, {"arguments", "{\"k\":\"" + echoed + "\"}"}}}}}}}},
            {"finish_reason", "stop"}}}}});
  });
  RequestSpec spec{.url = server.base() + "/v1/chat/completions",
                   .body = http::BuildRequestBody({.model = "m", .stream = false}, "hi"),
                   .headers = {"Authorization: Bearer sk-echo-Zq81"},
                   .stream = false,
                   .redactor = &run_secrets};
  SECTION("in an error body") {
    const RequestRecord r = SendOne(spec);
    CHECK(r.outcome == Outcome::kDenied);
    CHECK(r.error_message == "HTTP 401: bad credentials: Bearer [redacted]; and [redacted]");
  }
  SECTION("in an answer, its reasoning and its tool calls") {
    answer = true;
    const RequestRecord r = SendOne(spec);
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.answer_text == "your key is Bearer [redacted]; and [redacted]");
    CHECK(r.reasoning_text == "I saw Bearer [redacted]; and [redacted]");
    CHECK(r.tool_calls_json.find("sk-echo") == std::string::npos);
    CHECK(r.tool_calls_json.find("tok-other") == std::string::npos);
    CHECK(r.tool_calls_json.find("[redacted]") != std::string::npos);
  }
  SECTION("the password of the URL, which curl sends as basic auth") {
    spec.url = "http://alice:pw%2Fsecret@" + server.base().substr(7) + "/v1/chat/completions";
    spec.headers.clear();
    const RequestRecord r = SendOne(spec);
    // base64("alice:pw/secret") is what the server saw and echoed.
    CHECK(server.requests().back().find("Authorization: Basic YWxpY2U6cHcvc2VjcmV0") !=
          std::string::npos);
    CHECK(r.error_message == "HTTP 401: bad credentials: Basic [redacted]; and [redacted]");
  }
}

}  // namespace
}  // namespace stagegate::load
