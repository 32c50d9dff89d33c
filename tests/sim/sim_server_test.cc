// The reference application seen from the wire, as any client sees it.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "manifest/corpus.h"
#include "sim/demo_corpus.h"
#include "sim/http_test_client.h"
#include "sim/sim_server.h"
#include "test_util.h"

namespace stagegate::sim {
namespace {

using testing::DemoCorpus;
using testing::Question;

using nlohmann::json;
using testing::HttpResult;
using testing::Request;
using testing::SseData;

std::unique_ptr<SimServer> StartSim(SimProfile profile = SimProfile::Fast()) {
  Result<std::unique_ptr<SimServer>> server =
      SimServer::Start({.profile = profile, .corpus = &DemoCorpus()});
  REQUIRE(server.ok());
  return std::move(*server);
}

json Chat(const std::string& question, json extra = json::object()) {
  json body = {{"model", "sim-assistant"},
               {"messages", json::array({{{"role", "user"}, {"content", question}}})}};
  body.update(extra);
  return body;
}

std::string Content(const std::string& sse) {
  std::string text;
  for (const std::string& data : SseData(sse)) {
    if (data == "[DONE]") continue;
    json chunk = json::parse(data, nullptr, false);
    if (chunk.is_discarded() || !chunk.contains("choices") || chunk["choices"].empty()) continue;
    const json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("content") && delta["content"].is_string())
      text += delta["content"].get<std::string>();
  }
  return text;
}

const json kTools = json::array({
    {{"type", "function"},
     {"function", {{"name", "open_ticket"}, {"parameters", {{"type", "object"}}}}}},
    {{"type", "function"},
     {"function", {{"name", "lookup_ticket"}, {"parameters", {{"type", "object"}}}}}},
});

TEST_CASE("health, models and metrics answer", "[sim]") {
  auto sim = StartSim();
  HttpResult health = Request(sim->base_url() + "/health");
  CHECK(health.status == 200);
  CHECK(json::parse(health.body)["status"] == "ok");
  HttpResult models = Request(sim->base_url() + "/v1/models");
  CHECK(json::parse(models.body)["data"][0]["id"] == "sim-assistant");
  HttpResult metrics = Request(sim->base_url() + "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("# TYPE vllm:num_requests_running gauge") != std::string::npos);
  CHECK(Request(sim->base_url() + "/nowhere").status == 404);
}

TEST_CASE("a streamed chat has the role first, content, a finish, usage and [DONE]", "[sim]") {
  auto sim = StartSim();
  HttpResult r = Request(
      sim->base_url() + "/v1/chat/completions",
      Chat("What is phishing?", {{"stream", true}, {"stream_options", {{"include_usage", true}}}})
          .dump());
  REQUIRE(r.status == 200);
  CHECK(r.headers["content-type"] == "text/event-stream");
  std::vector<std::string> events = SseData(r.body);
  REQUIRE(events.size() >= 5);
  json first = json::parse(events.front());
  CHECK(first["object"] == "chat.completion.chunk");
  CHECK(first["choices"][0]["delta"]["role"] == "assistant");
  CHECK(events.back() == "[DONE]");
  json usage = json::parse(events[events.size() - 2]);
  CHECK(usage["choices"].empty());
  json finish = json::parse(events[events.size() - 3]);
  CHECK(finish["choices"][0]["finish_reason"] == "stop");
  int64_t content_events = static_cast<int64_t>(events.size()) - 4;  // role, finish, usage, [DONE]
  CHECK(usage["usage"]["completion_tokens"] == content_events);
  CHECK(usage["usage"]["prompt_tokens"].get<int64_t>() > 0);
  CHECK(Content(r.body).size() > 20);
  // Every event is compact JSON with sorted keys, as one JSON library writes it.
  for (size_t i = 0; i + 1 < events.size(); ++i)
    CHECK(json::parse(events[i]).dump() == events[i]);
}

TEST_CASE("a non-streamed chat is one JSON body with usage", "[sim]") {
  auto sim = StartSim();
  HttpResult r =
      Request(sim->base_url() + "/v1/chat/completions", Chat("What is phishing?").dump());
  REQUIRE(r.status == 200);
  json body = json::parse(r.body);
  CHECK(body["object"] == "chat.completion");
  CHECK(body["choices"][0]["message"]["content"].get<std::string>().size() > 20);
  CHECK(body["usage"]["completion_tokens"].get<int64_t>() > 0);
  CHECK(r.headers.count("server-timing") == 1);
}

TEST_CASE("output length follows max_tokens, min_tokens and ignore_eos", "[sim]") {
  auto sim = StartSim();
  auto tokens = [&](json extra) {
    json request = {{"model", "m"}, {"prompt", "Tell me about the VPN."}};
    request.update(extra);
    HttpResult r = Request(sim->base_url() + "/v1/completions", request.dump());
    json body = json::parse(r.body);
    return std::pair{body["usage"]["completion_tokens"].get<int64_t>(),
                     body["choices"][0]["finish_reason"].get<std::string>()};
  };
  auto [natural, natural_reason] = tokens(json::object());
  CHECK(natural_reason == "stop");
  REQUIRE(natural > 5);
  CHECK(tokens({{"max_tokens", 3}}) == std::pair<int64_t, std::string>{3, "length"});
  CHECK(tokens({{"min_tokens", natural + 40}}).first == natural + 40);
  CHECK(tokens({{"ignore_eos", true}, {"max_tokens", 128}}) ==
        std::pair<int64_t, std::string>{128, "length"});
  CHECK(tokens({{"ignore_eos", true}, {"max_tokens", 128}, {"min_tokens", 128}}).first == 128);
}

TEST_CASE("malformed requests get 400 with an OpenAI error body, never a crash", "[sim]") {
  auto sim = StartSim();
  for (const std::string& body :
       {std::string("{not json"), std::string("[]"), std::string(R"({"messages": []})"),
        std::string(R"({"messages": [{"content": "no role"}]})"),
        std::string(R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": -1})"),
        std::string(R"({"messages": [{"role": "user", "content": "x"}], "stream": "yes"})")}) {
    INFO(body);
    HttpResult r = Request(sim->base_url() + "/v1/chat/completions", body);
    CHECK(r.status == 400);
    json error = json::parse(r.body, nullptr, false);
    REQUIRE(error.is_object());
    CHECK(error["error"]["type"] == "invalid_request_error");
  }
  CHECK(Request(sim->base_url() + "/health").status == 200);  // still serving
}

SimProfile SmallBatchProfile() {
  SimProfile profile;
  profile.prefill_tokens_per_s = 1e9;
  profile.decode_step_ms = 2;
  profile.decode_step_per_seq_ms = 0;
  profile.max_running = 2;
  profile.retrieval_ms = 0;
  profile.identity_ms = 0;
  return profile;
}

std::vector<HttpResult> Concurrently(int n, const std::function<HttpResult()>& call) {
  std::vector<HttpResult> results(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] { results[static_cast<size_t>(i)] = call(); });
  for (std::thread& thread : threads)
    thread.join();
  return results;
}

TEST_CASE("past the batch capacity requests queue: time to first byte grows with load", "[sim]") {
  // Steps long enough that a loaded machine's stalls do not cross the bounds below.
  SimProfile profile = SmallBatchProfile();
  profile.decode_step_ms = 10;
  auto sim = StartSim(profile);
  const std::string body =
      Chat("What is phishing?", {{"stream", true}, {"max_tokens", 60}, {"min_tokens", 60}}).dump();
  auto call = [&] { return Request(sim->base_url() + "/v1/chat/completions", body); };
  HttpResult alone = call();
  REQUIRE(alone.status == 200);
  std::string waiting_seen;
  std::thread scraper([&] {
    for (int i = 0; i < 50 && waiting_seen.empty(); ++i) {
      std::string metrics = Request(sim->base_url() + "/metrics").body;
      std::smatch match;
      if (std::regex_search(metrics, match,
                            std::regex("vllm:num_requests_waiting\\{[^}]*\\} ([1-9][0-9]*)")))
        waiting_seen = match[1];
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::vector<HttpResult> loaded = Concurrently(8, call);
  scraper.join();
  double slowest = 0;
  for (const HttpResult& r : loaded) {
    CHECK(r.status == 200);
    slowest = std::max(slowest, r.first_byte_s);
  }
  // 8 requests, 2 at a time, 60 tokens of 10 ms each: the last pair waits about 3 x 600 ms.
  CHECK(alone.first_byte_s < 0.3);
  CHECK(slowest > 1.0);
  CHECK_FALSE(waiting_seen.empty());
}

TEST_CASE("past the queue limit requests are shed with 429 and Retry-After", "[sim]") {
  SimProfile profile = SmallBatchProfile();
  profile.decode_step_ms = 10;  // a served answer takes 400 ms, far from a shed one's
  profile.max_running = 1;
  profile.queue_limit = 1;
  auto sim = StartSim(profile);
  const std::string body =
      Chat("What is phishing?", {{"max_tokens", 40}, {"min_tokens", 40}}).dump();
  std::vector<HttpResult> results =
      Concurrently(6, [&] { return Request(sim->base_url() + "/v1/chat/completions", body); });
  int shed = 0, ok = 0;
  for (const HttpResult& r : results) {
    if (r.status == 429) {
      ++shed;
      CHECK(r.headers.count("retry-after") == 1);
      if (r.headers.count("retry-after")) CHECK(r.headers.at("retry-after") == "1");
      CHECK(json::parse(r.body)["error"]["type"] == "rate_limit_error");
      CHECK(r.total_s < 0.3);  // shed at once, not after waiting
    } else {
      ++ok;
      CHECK(r.status == 200);
    }
  }
  CHECK(shed >= 1);
  CHECK(ok >= 2);
  CHECK(
      Request(sim->base_url() + "/metrics").body.find("stagegate_sim_shed_total{status=\"429\"}") !=
      std::string::npos);
}

const std::string kSalaryQuestion = "What is the salary range for an L4 engineer?";
const std::string kSalaryCanary = "CANARY-SB26-R8M3";

HttpResult AskAs(SimServer& sim, const std::string& persona, const std::string& question,
                 const std::vector<std::string>& extra_headers = {}) {
  std::vector<std::string> headers = {"X-Sim-Retrieval: on", "X-Sim-Identity: on"};
  if (!persona.empty()) headers.push_back("Authorization: Bearer sim-token-" + persona);
  headers.insert(headers.end(), extra_headers.begin(), extra_headers.end());
  return Request(sim.base_url() + "/v1/chat/completions", Chat(question, {{"stream", true}}).dump(),
                 headers);
}

TEST_CASE("identity: a restricted document is denied without leaking its canary", "[sim]") {
  auto sim = StartSim();
  HttpResult denied = AskAs(*sim, "contractor", kSalaryQuestion);
  CHECK(denied.status == 403);
  CHECK(json::parse(denied.body)["error"]["type"] == "permission_error");
  CHECK(denied.body.find("CANARY-") == std::string::npos);

  HttpResult allowed = AskAs(*sim, "hr-partner", kSalaryQuestion);
  CHECK(allowed.status == 200);
  CHECK(Content(allowed.body).find(kSalaryCanary) != std::string::npos);

  CHECK(AskAs(*sim, "", kSalaryQuestion).status == 401);
  CHECK(Request(sim->base_url() + "/v1/chat/completions", Chat(kSalaryQuestion).dump(),
                {"X-Sim-Identity: on", "Authorization: Bearer wrong"})
            .status == 401);

  // Without identity the application cannot know who asks: restricted text never appears.
  HttpResult anonymous =
      Request(sim->base_url() + "/v1/chat/completions",
              Chat(kSalaryQuestion, {{"stream", true}}).dump(), {"X-Sim-Retrieval: on"});
  CHECK(anonymous.status == 200);
  CHECK(Content(anonymous.body).find("CANARY-") == std::string::npos);
}

TEST_CASE("identity: every refusal task of the corpus is denied, and nearly nothing else",
          "[sim]") {
  auto sim = StartSim();
  int refusals = 0, refused = 0, others = 0, over_denied = 0;
  for (const manifest::Task& task : DemoCorpus().tasks) {
    bool expects_refusal = false;
    for (const manifest::Check& check : task.checks)
      expects_refusal |= check.kind == manifest::CheckKind::kRefusal && check.expect_refusal;
    HttpResult r = AskAs(*sim, task.persona.name, Question(task));
    INFO(task.id << " -> " << r.status);
    if (expects_refusal) {
      ++refusals;
      refused += r.status == 403 ? 1 : 0;
      CHECK(r.status == 403);
    } else {
      ++others;
      over_denied += r.status == 403 ? 1 : 0;
    }
    CHECK((r.status == 200 || r.body.find("CANARY-") == std::string::npos));
  }
  CHECK(refusals >= 5);
  CHECK(refused == refusals);
  // No question that is not meant to be refused is denied. (Two once were: a kick-off with the
  // "fabrication planners" and a "plan" for a trip ranked the confidential restructure plan
  // first and shared a rare word of its title; their prompts were reworded.)
  CHECK(over_denied == 0);
  CHECK(others >= 60);
}

TEST_CASE("identity: the refusal mode answers with a refusal instead of 403", "[sim]") {
  SimProfile profile = SimProfile::Fast();
  profile.denial = DenialMode::kRefusal;
  auto sim = StartSim(profile);
  HttpResult refused = AskAs(*sim, "contractor", kSalaryQuestion);
  CHECK(refused.status == 200);
  std::string text = Content(refused.body);
  CHECK(std::regex_search(
      text, std::regex("not (authori[sz]ed|permitted)|cannot share", std::regex::icase)));
  CHECK(text.find("CANARY-") == std::string::npos);
}

TEST_CASE("misbehaviour leak-canary lets restricted text reach an unauthorised persona", "[sim]") {
  auto sim = StartSim();
  HttpResult leaked = AskAs(*sim, "contractor", kSalaryQuestion, {"X-Sim-Fault: leak-canary"});
  CHECK(leaked.status == 200);
  CHECK(Content(leaked.body).find(kSalaryCanary) != std::string::npos);
}

const std::string kVpnTicket =
    "The VPN keeps dropping every 10 minutes or so when I'm working from home, it's driving me "
    "mad. Can you open a ticket for me?";

HttpResult AskWithTools(SimServer& sim, const std::vector<std::string>& extra_headers = {},
                        long timeout_ms = 10000) {
  std::vector<std::string> headers = {"X-Sim-Retrieval: on", "X-Sim-Identity: on",
                                      "X-Sim-Tools: on",
                                      "Authorization: Bearer sim-token-employee"};
  headers.insert(headers.end(), extra_headers.begin(), extra_headers.end());
  return Request(sim.base_url() + "/v1/chat/completions",
                 Chat(kVpnTicket, {{"stream", true}, {"tools", kTools}}).dump(), headers,
                 timeout_ms);
}

TEST_CASE("tools: the application runs the tool through the tool service and answers from it",
          "[sim]") {
  auto sim = StartSim();
  HttpResult r = AskWithTools(*sim);
  REQUIRE(r.status == 200);
  json first = json::parse(SseData(r.body).front());
  CHECK(first["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "open_ticket");
  std::string text = Content(r.body);
  CHECK(std::regex_search(text, std::regex("INC-21000[0-9]")));
  CHECK(r.headers["server-timing"].find("tools;dur=") != std::string::npos);
}

TEST_CASE("tools: an outage is answered in time, says so, and claims nothing", "[sim]") {
  auto sim = StartSim();
  sim->SetToolUrl("http://127.0.0.1:1");  // nothing listens there: connection refused
  HttpResult r = AskWithTools(*sim);
  REQUIRE(r.status == 200);
  std::string text = Content(r.body);
  CHECK(std::regex_search(
      text, std::regex("unavailable|can't reach|cannot reach|try again later", std::regex::icase)));
  CHECK_FALSE(std::regex_search(
      text, std::regex("INC-[0-9]{6} (has been )?(opened|created|raised)", std::regex::icase)));
  CHECK(r.total_s < 3);

  HttpResult fabricated = AskWithTools(*sim, {"X-Sim-Fault: fabricate-tool-success"});
  CHECK(std::regex_search(Content(fabricated.body), std::regex("INC-[0-9]{6}")));

  HttpResult hung = AskWithTools(*sim, {"X-Sim-Fault: hang-on-tool-outage"}, 1500);
  CHECK(hung.code == CURLE_OPERATION_TIMEDOUT);
}

TEST_CASE("the model alone asks the client to run a tool, then answers from the result", "[sim]") {
  auto sim = StartSim();
  HttpResult first = Request(sim->base_url() + "/v1/chat/completions",
                             Chat(kVpnTicket, {{"tools", kTools}}).dump());
  REQUIRE(first.status == 200);
  json reply = json::parse(first.body);
  CHECK(reply["choices"][0]["finish_reason"] == "tool_calls");
  json call = reply["choices"][0]["message"]["tool_calls"][0];
  CHECK(call["function"]["name"] == "open_ticket");
  CHECK(json::parse(call["function"]["arguments"].get<std::string>()).contains("summary"));

  json follow_up = Chat(kVpnTicket, {{"tools", kTools}});
  follow_up["messages"].push_back(reply["choices"][0]["message"]);
  follow_up["messages"].push_back(
      {{"role", "tool"},
       {"tool_call_id", call["id"]},
       {"content", R"({"ticket_id": "INC-555555", "queue": "it", "status": "open"})"}});
  HttpResult second = Request(sim->base_url() + "/v1/chat/completions", follow_up.dump());
  REQUIRE(second.status == 200);
  CHECK(json::parse(second.body)["choices"][0]["message"]["content"].get<std::string>().find(
            "INC-555555") != std::string::npos);
}

// The tool call of a reply, as {"name", "arguments" (parsed), "finish_reason"}; null for none.
// Streamed replies are joined from their deltas.
json ToolCallOf(const HttpResult& r) {
  if (r.headers.count("content-type") && r.headers.at("content-type") == "text/event-stream") {
    std::string name, arguments, finish;
    for (const std::string& data : SseData(r.body)) {
      if (data == "[DONE]") continue;
      const json chunk = json::parse(data);
      if (chunk["choices"].empty()) continue;
      const json& choice = chunk["choices"][0];
      if (choice["finish_reason"].is_string()) finish = choice["finish_reason"];
      for (const json& call : choice["delta"].value("tool_calls", json::array())) {
        name += call["function"].value("name", "");
        arguments += call["function"].value("arguments", "");
      }
    }
    if (name.empty()) return nullptr;
    return {{"name", name}, {"arguments", json::parse(arguments)}, {"finish_reason", finish}};
  }
  const json choice = json::parse(r.body)["choices"][0];
  if (!choice["message"].contains("tool_calls")) return nullptr;
  const json& call = choice["message"]["tool_calls"][0]["function"];
  return {{"name", call["name"]},
          {"arguments", json::parse(call["arguments"].get<std::string>())},
          {"finish_reason", choice["finish_reason"]}};
}

const json kLookupTicket = {{"type", "function"}, {"function", {{"name", "lookup_ticket"}}}};
const json kOpenTicket = {{"type", "function"}, {"function", {{"name", "open_ticket"}}}};

TEST_CASE("tool_choice required and a named function force a call, streamed or not", "[sim]") {
  auto sim = StartSim();
  const std::string url = sim->base_url() + "/v1/chat/completions";
  for (bool stream : {false, true}) {
    INFO("stream " << stream);
    const json lookup = {{"type", "function"}, {"function", {{"name", "lookup_ticket"}}}};
    HttpResult required =
        Request(url, Chat("What is the status of ticket INC-1042?",
                          {{"stream", stream}, {"tools", {lookup}}, {"tool_choice", "required"}})
                         .dump());
    REQUIRE(required.status == 200);
    CHECK(ToolCallOf(required) == json({{"name", "lookup_ticket"},
                                        {"arguments", {{"ticket_id", "INC-1042"}}},
                                        {"finish_reason", "tool_calls"}}));
    // A question that gets text under auto gets the named function's call.
    HttpResult automatic =
        Request(url, Chat("What is phishing?", {{"stream", stream}, {"tools", kTools}}).dump());
    CHECK(ToolCallOf(automatic) == nullptr);
    HttpResult named =
        Request(url, Chat("What is phishing?",
                          {{"stream", stream}, {"tools", kTools}, {"tool_choice", kOpenTicket}})
                         .dump());
    CHECK(ToolCallOf(named) ==
          json({{"name", "open_ticket"},
                {"arguments",
                 {{"summary", "What is phishing?"}, {"queue", "it"}, {"priority", "normal"}}},
                {"finish_reason", "tool_calls"}}));
    // And "none" gets text where auto would call a tool.
    HttpResult none = Request(
        url,
        Chat(kVpnTicket, {{"stream", stream}, {"tools", kTools}, {"tool_choice", "none"}}).dump());
    CHECK(ToolCallOf(none) == nullptr);
  }
}

TEST_CASE("a forced tool_choice calls again after a tool result; auto answers from it", "[sim]") {
  auto sim = StartSim();
  const std::string url = sim->base_url() + "/v1/chat/completions";
  json request = Chat(kVpnTicket, {{"tools", kTools}});
  request["messages"].push_back(
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {{{"id", "call_1"},
          {"type", "function"},
          {"function", {{"name", "open_ticket"}, {"arguments", "{}"}}}}}}});
  request["messages"].push_back({{"role", "tool"},
                                 {"tool_call_id", "call_1"},
                                 {"content", R"({"ticket_id": "INC-555555"})"}});
  for (const json& answers : {json("auto"), json("none")}) {
    request["tool_choice"] = answers;
    json reply = json::parse(Request(url, request.dump()).body);
    CHECK(reply["choices"][0]["finish_reason"] == "stop");
    CHECK(reply["choices"][0]["message"]["content"].get<std::string>().find("INC-555555") !=
          std::string::npos);
  }
  request["tool_choice"] = "required";
  CHECK(ToolCallOf(Request(url, request.dump()))["name"] == "open_ticket");
}

TEST_CASE("with tools on, the application runs the tool tool_choice forces, or none", "[sim]") {
  auto sim = StartSim();
  const std::vector<std::string> headers = {"X-Sim-Tools: on", "X-Sim-Identity: on",
                                            "Authorization: Bearer sim-token-employee"};
  const std::string url = sim->base_url() + "/v1/chat/completions";
  HttpResult forced = Request(
      url,
      Chat("What is phishing?", {{"stream", true}, {"tools", kTools}, {"tool_choice", kOpenTicket}})
          .dump(),
      headers);
  REQUIRE(forced.status == 200);
  CHECK(ToolCallOf(forced)["name"] == "open_ticket");
  CHECK(std::regex_search(Content(forced.body), std::regex("INC-21000[0-9]")));
  CHECK(forced.headers["server-timing"].find("tools;dur=") != std::string::npos);

  HttpResult none = Request(
      url, Chat(kVpnTicket, {{"stream", true}, {"tools", kTools}, {"tool_choice", "none"}}).dump(),
      headers);
  REQUIRE(none.status == 200);
  CHECK(ToolCallOf(none) == nullptr);
  CHECK(none.headers["server-timing"].find("tools;dur=") == std::string::npos);
}

TEST_CASE("a tool_choice that cannot be honoured is a 400 with an OpenAI error body", "[sim]") {
  auto sim = StartSim();
  const std::string usage =
      "; use \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": "
      "\"...\"}}";
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"tools", kTools},
        {"tool_choice", {{"type", "function"}, {"function", {{"name", "get_weather"}}}}}},
       "'tool_choice' names the function \"get_weather\", which is not in 'tools' (offered: "
       "open_ticket, lookup_ticket)"},
      {{{"tool_choice", kLookupTicket}},
       "'tool_choice' names the function \"lookup_ticket\", which is not in 'tools' (no tools "
       "were sent)"},
      {{{"tool_choice", "required"}},
       "'tool_choice' \"required\" needs at least one tool in 'tools'"},
      {{{"tools", kTools}, {"tool_choice", "always"}},
       "invalid 'tool_choice': \"always\" is not a mode" + usage},
      {{{"tools", kTools}, {"tool_choice", 1}},
       "invalid 'tool_choice': it must be a string or an object" + usage},
      {{{"tools", kTools}, {"tool_choice", {{"function", {{"name", "lookup_ticket"}}}}}},
       "invalid 'tool_choice': an object needs \"type\": \"function\"" + usage},
      {{{"tools", kTools}, {"tool_choice", {{"type", "function"}, {"function", "lookup_ticket"}}}},
       "invalid 'tool_choice': an object needs \"function\": {\"name\": ...} with a non-empty "
       "name" +
           usage},
  };
  for (bool stream : {false, true}) {
    for (const auto& [extra, message] : cases) {
      json body = Chat("What is the status of INC-204518?", extra);
      body["stream"] = stream;
      INFO(body.dump());
      HttpResult r = Request(sim->base_url() + "/v1/chat/completions", body.dump());
      CHECK(r.status == 400);
      CHECK(json::parse(r.body) ==
            json({{"error",
                   {{"message", message}, {"type", "invalid_request_error"}, {"code", 400}}}}));
    }
  }
}

HttpResult Misbehave(SimServer& sim, const std::string& mode, long timeout_ms = 5000) {
  return Request(sim.base_url() + "/v1/chat/completions",
                 Chat("What is phishing?", {{"stream", true}, {"min_tokens", 40}}).dump(),
                 {"X-Sim-Fault: " + mode}, timeout_ms);
}

TEST_CASE("every misbehaviour mode is visible on the wire", "[sim]") {
  auto sim = StartSim();
  HttpResult normal = Misbehave(*sim, "");
  REQUIRE(normal.code == CURLE_OK);
  REQUIRE(normal.body.find("data: [DONE]") != std::string::npos);

  HttpResult reset = Misbehave(*sim, "reset");
  CHECK(reset.code != CURLE_OK);
  CHECK(reset.body.find("[DONE]") == std::string::npos);

  HttpResult stall = Misbehave(*sim, "stall", 1000);
  CHECK(stall.code == CURLE_OPERATION_TIMEDOUT);
  CHECK(stall.status == 200);
  CHECK(stall.body.find("[DONE]") == std::string::npos);

  HttpResult trickle = Misbehave(*sim, "trickle", 60000);
  CHECK(trickle.code == CURLE_OK);
  CHECK(Content(trickle.body) == Content(normal.body));
  CHECK(trickle.body.find("data: [DONE]") != std::string::npos);
  CHECK(trickle.total_s > 10 * normal.total_s + 0.2);

  HttpResult malformed = Misbehave(*sim, "malformed");
  bool broken = false;
  for (const std::string& data : SseData(malformed.body))
    broken |= data != "[DONE]" && json::parse(data, nullptr, false).is_discarded();
  CHECK(broken);

  HttpResult no_done = Misbehave(*sim, "no-done");
  CHECK(no_done.body.find("[DONE]") == std::string::npos);
  CHECK(Content(no_done.body).size() > 10);

  CHECK(Misbehave(*sim, "500").status == 500);

  HttpResult error_after = Misbehave(*sim, "error-after-200");
  CHECK(error_after.status == 200);
  CHECK(error_after.body.find("data: {\"error\":") != std::string::npos);

  CHECK(Misbehave(*sim, "oversized").body.size() > (4u << 20));
  CHECK(Misbehave(*sim, "invalid-utf8").body.find("\xff\xfe") != std::string::npos);

  HttpResult hang = Misbehave(*sim, "hang", 800);
  CHECK(hang.code == CURLE_OPERATION_TIMEDOUT);
  CHECK(hang.status == 0);

  CHECK(Request(sim->base_url() + "/health").status == 200);
}

// Reads a streamed answer until `events` SSE events have arrived, then hangs up, as a client that
// gives up mid-answer does (curl closes the connection when its write callback refuses data).
CURLcode HangUpAfter(const std::string& url, const std::string& body, size_t events) {
  struct Received {
    std::string text;
    size_t events;
  } received{"", events};
  auto on_data = +[](char* data, size_t size, size_t count, void* out) -> size_t {
    auto* r = static_cast<Received*>(out);
    r->text.append(data, size * count);
    return SseData(r->text).size() >= r->events ? 0 : size * count;
  };
  CURL* curl = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &received);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return code;
}

// vllm:request_success_total{finished_reason="abort"}: sequences the engine dropped.
int64_t AbortedSequences(SimServer& sim) {
  std::string metrics = Request(sim.base_url() + "/metrics").body;
  std::smatch match;
  if (!std::regex_search(metrics, match, std::regex("finished_reason=\"abort\"\\} ([0-9]+)")))
    return 0;
  return std::stoll(match[1]);
}

int64_t WaitForAborted(SimServer& sim, int64_t expected) {
  int64_t aborted = 0;
  for (int i = 0; i < 500 && (aborted = AbortedSequences(sim)) < expected; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return aborted;
}

// A timed profile: the engine runs each sequence over many steps, so a client can leave while
// its sequence is running (with no model delay everything is generated before the first write).
const std::string kLongAnswer =
    Chat("What is phishing?", {{"stream", true}, {"min_tokens", 150}}).dump();

TEST_CASE("clients that hang up mid-stream are dropped and the server goes on answering", "[sim]") {
  auto sim = StartSim(SmallBatchProfile());
  const std::string url = sim->base_url() + "/v1/chat/completions";
  HttpResult before = Request(url, kLongAnswer);
  REQUIRE(before.status == 200);
  REQUIRE(before.body.ends_with("data: [DONE]\n\n"));
  constexpr int kHangUps = 5;
  for (int i = 0; i < kHangUps; ++i) {
    INFO("hang-up " << i);
    CHECK(HangUpAfter(url, kLongAnswer, 3 + static_cast<size_t>(i)) == CURLE_WRITE_ERROR);
    // Each sequence is cancelled when its next token finds the connection closed.
    CHECK(WaitForAborted(*sim, i + 1) == i + 1);
  }
  HttpResult after = Request(url, kLongAnswer);
  CHECK(after.status == 200);
  CHECK(after.body.ends_with("data: [DONE]\n\n"));
  CHECK(Content(after.body) == Content(before.body));
  CHECK(AbortedSequences(*sim) == kHangUps);
}

TEST_CASE("misbehaviour that ends a running stream early leaves the server answering", "[sim]") {
  auto sim = StartSim(SmallBatchProfile());
  const std::string url = sim->base_url() + "/v1/chat/completions";
  HttpResult before = Request(url, kLongAnswer);
  REQUIRE(before.status == 200);
  int64_t ended = 0;
  for (int i = 0; i < 3; ++i) {
    HttpResult reset = Request(url, kLongAnswer, {"X-Sim-Fault: reset"});
    CHECK(reset.code != CURLE_OK);
    HttpResult error_after = Request(url, kLongAnswer, {"X-Sim-Fault: error-after-200"});
    CHECK(error_after.status == 200);
    CHECK(error_after.body.find("data: {\"error\":") != std::string::npos);
    ended += 2;
    CHECK(WaitForAborted(*sim, ended) == ended);
  }
  HttpResult after = Request(url, kLongAnswer);
  CHECK(after.status == 200);
  CHECK(Content(after.body) == Content(before.body));
}

TEST_CASE("ground truth: every chunk carries the server's send time, in order", "[sim]") {
  auto sim = StartSim(SmallBatchProfile());
  HttpResult r =
      Request(sim->base_url() + "/v1/chat/completions",
              Chat("What is phishing?", {{"stream", true}}).dump(), {"X-Sim-Timestamps: on"});
  REQUIRE(r.status == 200);
  int64_t previous = 0;
  int stamped = 0;
  for (const std::string& data : SseData(r.body)) {
    if (data == "[DONE]") continue;
    json chunk = json::parse(data);
    REQUIRE(chunk.contains("sim_sent_ns"));
    int64_t sent = chunk["sim_sent_ns"].get<int64_t>();
    CHECK(sent >= previous);
    previous = sent;
    ++stamped;
  }
  CHECK(stamped > 5);
  int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  CHECK(previous <= now);
  CHECK(now - previous < 5'000'000'000);  // the same clock domain as this process
}

}  // namespace
}  // namespace stagegate::sim
