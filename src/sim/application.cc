#include "sim/application.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "base/strings.h"
#include "base/token_estimate.h"
#include "sim/answer.h"
#include "sim/generation.h"
#include "sim/tool_choice.h"
#include "sim/tool_client.h"

namespace stagegate::sim {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int64_t kDefaultMaxTokens = 4096;

bool On(const HttpRequest& request, const std::string& header) {
  const std::string& value = request.Header(header);
  return value == "on" || value == "1" || value == "true";
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The text of a message's content: a string, or the text parts of an array of parts.
std::string ContentText(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const json& part : content) {
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") &&
          part["text"].is_string())
        text += part["text"].get<std::string>();
    }
  }
  return text;
}

bool Allowed(const manifest::Document& document, const manifest::Persona* persona) {
  if (document.access.empty()) return true;
  if (!persona) return false;
  for (const std::string& group : document.access) {
    for (const std::string& mine : persona->groups)
      if (group == mine) return true;
  }
  return false;
}

}  // namespace

/// One request on its way through identity, retrieval and tools to the model.
struct Application::Exchange {
  HttpRequest request;
  std::shared_ptr<HttpResponder> responder;
  bool chat = true;
  json body;
  std::string question;
  std::string prompt_text;  // everything the model reads
  std::string last_role;
  std::string fault;
  bool retrieval = false;
  bool identity = false;
  bool tools = false;
  std::vector<std::string> offered_tools;
  ToolChoice tool_choice;
  const manifest::Persona* persona = nullptr;
  std::vector<Passage> passages;
  std::optional<ToolOutcome> tool;
  std::optional<ToolCallOut> tool_call;
  bool tool_call_for_client = false;
  std::string server_timing;
  std::string refusal;  // set when access is denied with an answer rather than a status
  uint64_t seed = 0;
  std::unique_ptr<asio::steady_timer> timer;

  void AddTiming(const std::string& name, double ms) {
    server_timing += (server_timing.empty() ? "" : ", ") + name + ";dur=" + FormatNumber(ms, 3);
  }
  // Reads the conversation from `body`: a chat's messages, or a completion's prompt. Returns why
  // the request is bad, or "" when it is not.
  std::string ReadConversation();
  // Checks the body's other fields, and reads the tools it offers and its tool choice. Returns
  // why the request is bad, or "" when it is not.
  std::string ReadOptions();
};

std::string Application::Exchange::ReadConversation() {
  if (chat) {
    const json& messages = body.contains("messages") ? body["messages"] : json();
    if (!messages.is_array() || messages.empty()) return "'messages' must be a non-empty array";
    for (const json& message : messages) {
      if (!message.is_object() || !message.contains("role") || !message["role"].is_string())
        return "each message needs a string 'role'";
      std::string text = message.contains("content") ? ContentText(message["content"]) : "";
      last_role = message["role"].get<std::string>();
      if (last_role == "user") question = text;
      prompt_text += text + "\n";
    }
  } else {
    const json& prompt = body.contains("prompt") ? body["prompt"] : json();
    if (prompt.is_string()) {
      question = prompt.get<std::string>();
    } else if (prompt.is_array() && !prompt.empty() && prompt[0].is_string()) {
      question = prompt[0].get<std::string>();
    } else {
      return "'prompt' must be a string";
    }
    prompt_text = question;
  }
  return "";
}

std::string Application::Exchange::ReadOptions() {
  for (const char* key : {"max_tokens", "max_completion_tokens", "min_tokens"}) {
    if (body.contains(key) && !body[key].is_null() &&
        (!body[key].is_number_integer() || body[key].get<int64_t>() < 0))
      return std::string("'") + key + "' must be a non-negative integer";
  }
  if (body.contains("stream") && !body["stream"].is_boolean())
    return "'stream' must be true or false";
  if (body.contains("tools")) {
    if (!body["tools"].is_array()) return "'tools' must be an array";
    for (const json& tool : body["tools"]) {
      if (tool.is_object() && tool.contains("function") && tool["function"].is_object() &&
          tool["function"].contains("name") && tool["function"]["name"].is_string())
        offered_tools.push_back(tool["function"]["name"].get<std::string>());
      else
        return "each tool needs function.name";
    }
  }
  Result<ToolChoice> choice =
      ParseToolChoice(body.contains("tool_choice") ? body["tool_choice"] : json(), offered_tools);
  if (!choice.ok()) return choice.status().message();
  tool_choice = *choice;
  return "";
}

std::string PersonaToken(const manifest::Persona& persona) {
  const char* value = std::getenv(persona.token_env.c_str());
  return value && *value ? value : "sim-token-" + persona.name;
}

Application::Application(asio::io_context& io, const SimProfile& profile,
                         const manifest::Corpus* corpus, std::string model_name)
    : io_(io),
      profile_(profile),
      corpus_(corpus),
      model_name_(std::move(model_name)),
      engine_(io, profile, metrics_),
      prefix_cache_(profile.prefix_cache_tokens) {
  if (corpus_) {
    index_ = std::make_unique<RetrievalIndex>(corpus_->documents);
    for (const manifest::Document& document : corpus_->documents) {
      std::vector<std::string> terms = SearchTerms(document.title + "\n" + document.body);
      std::sort(terms.begin(), terms.end());
      terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
      for (const std::string& term : terms)
        ++document_frequency_[term];
    }
    for (const manifest::Persona& persona : corpus_->personas)
      personas_by_token_[PersonaToken(persona)] = &persona;
  }
}

void Application::SendError(HttpResponder& responder, const std::string& path, int status,
                            const std::string& message) {
  HeaderList headers = {{"Content-Type", "application/json"}};
  if (status == 401) headers.push_back({"WWW-Authenticate", "Bearer"});
  responder.Send(status, headers, ErrorBody(status, message));
  metrics_.CountHttpRequest(path, status);
}

void Application::Handle(HttpRequest request, std::shared_ptr<HttpResponder> responder) {
  const std::string& path = request.path;
  const bool get = request.method == "GET";
  if (path == "/health" && get) {
    responder->Send(200, {{"Content-Type", "application/json"}}, R"({"status":"ok"})");
  } else if (path == "/v1/models" && get) {
    json models = {{"object", "list"},
                   {"data", json::array({{{"id", model_name_},
                                          {"object", "model"},
                                          {"created", 1764374400},
                                          {"owned_by", "stagegate-sim"}}})}};
    responder->Send(200, {{"Content-Type", "application/json"}}, models.dump());
  } else if (path == "/sim/ground-truth" && get) {
    responder->Send(200, {{"Content-Type", "application/json"}}, ground_truth_.Json());
  } else if (path == "/metrics" && get) {
    responder->Send(200, {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}},
                    metrics_.Render(model_name_));
  } else if (path == "/v1/chat/completions" || path == "/v1/completions") {
    if (request.method != "POST") return SendError(*responder, path, 405, "use POST");
    // Before the call: `path` is request's, and an argument may be moved from before another is
    // evaluated (clang evaluates them left to right).
    const bool chat = path == "/v1/chat/completions";
    return Completions(std::move(request), std::move(responder), chat);
  } else {
    // Unknown paths are counted under one label, so a scanner cannot grow the metrics.
    responder->Send(404, {{"Content-Type", "application/json"}},
                    ErrorBody(404, "no route " + request.method + " " + path));
    return metrics_.CountHttpRequest("other", 404);
  }
  metrics_.CountHttpRequest(path, 200);
}

void Application::Completions(HttpRequest request, std::shared_ptr<HttpResponder> responder,
                              bool chat) {
  auto exchange = std::make_shared<Exchange>();
  Exchange& x = *exchange;
  x.chat = chat;
  x.fault = request.Header("x-sim-fault");
  if (x.fault.empty()) x.fault = profile_.fault;
  x.retrieval = On(request, "x-sim-retrieval") && corpus_;
  x.identity = On(request, "x-sim-identity") && corpus_;
  x.tools = On(request, "x-sim-tools");
  const std::string path = request.path;
  if (x.fault == "500") return SendError(*responder, path, 500, "the model server failed");
  if (x.fault == "hang") return;  // never answer; the connection stays open

  x.body = json::parse(request.body, nullptr, false);
  if (x.body.is_discarded() || !x.body.is_object())
    return SendError(*responder, path, 400, "the request body is not a JSON object");
  if (const std::string bad = x.ReadConversation(); !bad.empty())
    return SendError(*responder, path, 400, bad);
  if (const std::string bad = x.ReadOptions(); !bad.empty())
    return SendError(*responder, path, 400, bad);
  x.seed = x.body.contains("seed") && x.body["seed"].is_number_integer()
               ? x.body["seed"].get<uint64_t>()
               : Fnv1a(x.question);
  x.request = std::move(request);
  x.responder = std::move(responder);

  if (!x.identity) return AfterIdentity(exchange);
  Identify(exchange);
}

void Application::Identify(std::shared_ptr<Exchange> exchange) {
  Exchange& x = *exchange;
  const std::string& path = x.request.path;
  const std::string& authorization = x.request.Header("authorization");
  if (!authorization.starts_with("Bearer ") || authorization.size() <= 7)
    return SendError(*x.responder, path, 401, "identity is on: send a persona's bearer token");
  auto persona = personas_by_token_.find(authorization.substr(7));
  if (persona == personas_by_token_.end())
    return SendError(*x.responder, path, 401, "the bearer token matches no persona");
  x.persona = persona->second;
  x.timer = std::make_unique<asio::steady_timer>(io_);
  x.timer->expires_after(
      std::chrono::microseconds(static_cast<int64_t>(profile_.identity_ms * 1000)));
  auto started = Clock::now();
  x.timer->async_wait([this, exchange, started](asio::error_code) {
    exchange->AddTiming("identity", MillisSince(started));
    AfterIdentity(exchange);
  });
}

void Application::AfterIdentity(std::shared_ptr<Exchange> exchange) {
  Exchange& x = *exchange;
  if (!x.retrieval || x.question.empty()) return AfterRetrieval(exchange);
  if (!x.timer) x.timer = std::make_unique<asio::steady_timer>(io_);
  x.timer->expires_after(
      std::chrono::microseconds(static_cast<int64_t>(profile_.retrieval_ms * 1000)));
  auto started = Clock::now();
  x.timer->async_wait([this, exchange, started](asio::error_code) {
    Exchange& x = *exchange;
    const bool leak = x.fault == "leak-canary";
    const manifest::Persona* persona = x.persona;
    const bool identity = x.identity;
    // Without identity the application cannot know who asks, so restricted documents stay out.
    x.passages = index_->Search(x.question, 3, [&](const manifest::Document& document) {
      return leak || (identity ? Allowed(document, persona) : document.access.empty());
    });
    exchange->AddTiming("retrieval", MillisSince(started));
    const manifest::Document* forbidden =
        identity && !leak ? AskedForbidden(x.question, persona) : nullptr;
    if (forbidden) {
      // Name the groups, never the document: even a title can confirm what must stay secret.
      const std::string what = "documents restricted to " + Join(forbidden->access, ", ");
      if (profile_.denial == DenialMode::kStatus403)
        return SendError(*x.responder, x.request.path, 403,
                         "you are not authorised to read " + what);
      // A refusal answer: generated like any other, with no restricted text in it.
      x.passages.clear();
      x.refusal = RefusalAnswer(what);
    }
    AfterRetrieval(exchange);
  });
}

const manifest::Document* Application::AskedForbidden(const std::string& question,
                                                      const manifest::Persona* persona) const {
  // A question asks for a restricted document when that document is among the best three for it
  // and the question names it: shares a word of its title that is rare in the corpus (in at most
  // a quarter of the documents; "plan" names nothing) and is not a number ("my leave for 2027" is
  // not about a plan with 2027 in its title). Measured on the demo corpus: every refusal task is
  // denied, and 2 of 66 other tasks (both rank the confidential restructure plan first).
  std::vector<std::string> asked = SearchTerms(question);
  const size_t rare = std::max<size_t>(1, corpus_->documents.size() / 4);
  for (const Passage& hit : index_->Search(question, 3)) {
    if (Allowed(*hit.document, persona)) continue;
    for (const std::string& term : SearchTerms(hit.document->title)) {
      bool numeric =
          std::all_of(term.begin(), term.end(), [](unsigned char c) { return std::isdigit(c); });
      auto frequency = document_frequency_.find(term);
      bool names = frequency != document_frequency_.end() && frequency->second <= rare;
      if (!numeric && names && std::find(asked.begin(), asked.end(), term) != asked.end())
        return hit.document;
    }
  }
  return nullptr;
}

void Application::AfterRetrieval(std::shared_ptr<Exchange> exchange) {
  Exchange& x = *exchange;
  if (x.offered_tools.empty() || !x.refusal.empty()) return Answer(exchange);
  if (!x.tools) {
    // The model alone: it asks the client to run the tool, or answers from the tool's result.
    // A forced choice forces a call on every turn, after a tool result too, as it does on OpenAI
    // and vLLM: a client sends "auto" or "none" for the turn that should answer.
    if (x.last_role == "tool" && !x.tool_choice.forces_call()) {
      const json& messages = x.body["messages"];
      const json& last = messages.back();
      ToolOutcome outcome;
      outcome.ok = true;
      std::string content = last.contains("content") ? ContentText(last["content"]) : "";
      outcome.result = json::parse(content, nullptr, false);
      if (outcome.result.is_discarded()) outcome.result = {{"text", content}};
      if (messages.size() >= 2 && messages[messages.size() - 2].contains("tool_calls")) {
        const json& calls = messages[messages.size() - 2]["tool_calls"];
        if (calls.is_array() && !calls.empty() && calls[0].contains("function"))
          outcome.name = calls[0]["function"].value("name", "");
      }
      x.tool = outcome;
      return Answer(exchange);
    }
    std::optional<ToolCall> call = CallTool(x.question, x.offered_tools, x.tool_choice);
    if (call) {
      x.tool_call =
          ToolCallOut{"call_" + std::to_string(next_id_), call->name, call->arguments.dump()};
      x.tool_call_for_client = true;
    }
    return Answer(exchange);
  }
  std::optional<ToolCall> call = CallTool(x.question, x.offered_tools, x.tool_choice);
  if (!call) return Answer(exchange);
  x.tool_call = ToolCallOut{"call_" + std::to_string(next_id_), call->name, call->arguments.dump()};
  json request = {{"arguments", call->arguments}, {"persona", x.persona ? x.persona->name : ""}};
  auto started = Clock::now();
  PostJson(
      io_, tool_url_ + "/tools/" + call->name, request.dump(),
      std::chrono::milliseconds(static_cast<int64_t>(profile_.tool_timeout_ms)),
      [this, exchange, call = *call, started](ToolResponse response) {
        Exchange& x = *exchange;
        x.AddTiming("tools", MillisSince(started));
        ToolOutcome outcome{.name = call.name, .arguments = call.arguments};
        json body = response.ok ? json::parse(response.body, nullptr, false) : json();
        if (response.ok && response.status == 200 && body.is_object() && body.contains("result")) {
          outcome.ok = true;
          outcome.result = body["result"];
        } else {
          outcome.ok = false;
          outcome.error = response.ok
                              ? "the tool service answered " + std::to_string(response.status)
                              : response.error;
        }
        if (!outcome.ok && x.fault == "hang-on-tool-outage") return;  // never answers
        if (!outcome.ok && x.fault == "fabricate-tool-success") {
          outcome.ok = true;
          outcome.result = {{"ticket_id", "INC-" + std::to_string(299000 + x.seed % 1000)},
                            {"queue", "it"},
                            {"status", "open"},
                            {"summary", x.question}};
        }
        x.tool = std::move(outcome);
        Answer(exchange);
      });
}

void Application::Answer(std::shared_ptr<Exchange> exchange) {
  Exchange& x = *exchange;
  Reply reply;
  reply.chat = x.chat;
  reply.stream = x.body.value("stream", false);
  reply.include_usage = x.body.contains("stream_options") && x.body["stream_options"].is_object() &&
                        x.body["stream_options"].value("include_usage", false);
  reply.timestamps = On(x.request, "x-sim-timestamps");
  if (reply.timestamps) {
    reply.truth = &ground_truth_;
    reply.trace_id = TraceIdOf(x.request.Header("traceparent"));
  }
  reply.model = x.body.contains("model") && x.body["model"].is_string()
                    ? x.body["model"].get<std::string>()
                    : model_name_;
  reply.id = (x.chat ? "chatcmpl-sim-" : "cmpl-sim-") + std::to_string(next_id_++);
  reply.fault = x.fault;
  reply.server_timing = x.server_timing;

  std::string text;
  if (!x.refusal.empty()) {
    text = x.refusal;
  } else if (x.tool_call && x.tool_call_for_client) {
    reply.tool_call = x.tool_call;
    reply.tool_call_for_client = true;
    reply.finish_reason = "tool_calls";
    // The arguments stream in small fragments, as a model writes them.
    const std::string& arguments = x.tool_call->arguments;
    for (size_t at = 0; at < arguments.size(); at += 8)
      reply.tokens.push_back(arguments.substr(at, 8));
  } else {
    AnswerInput input{.question = x.question,
                      .retrieval = x.retrieval,
                      .passages = x.passages,
                      .persona = x.persona ? x.persona->name : "",
                      .tool = x.tool,
                      .seed = x.seed};
    text = ComposeAnswer(input);
    reply.tool_call = x.tool_call;
  }
  if (!reply.tool_call_for_client) {
    if (x.fault == "oversized") text = std::string(4 << 20, 'x');
    reply.tokens = x.fault == "oversized" ? std::vector<std::string>{text} : SplitIntoTokens(text);
    auto number = [&](const char* key) -> std::optional<int64_t> {
      if (x.body.contains(key) && x.body[key].is_number_integer())
        return x.body[key].get<int64_t>();
      return std::nullopt;
    };
    std::optional<int64_t> max_tokens = number("max_completion_tokens");
    if (!max_tokens) max_tokens = number("max_tokens");
    const int64_t limit = max_tokens.value_or(kDefaultMaxTokens);
    int64_t target = static_cast<int64_t>(reply.tokens.size());
    if (x.body.value("ignore_eos", false) && max_tokens) target = *max_tokens;
    if (std::optional<int64_t> min_tokens = number("min_tokens"))
      target = std::max(target, *min_tokens);
    if (target > limit) target = limit;
    if (target < static_cast<int64_t>(reply.tokens.size())) {
      reply.tokens.resize(static_cast<size_t>(target));
      reply.finish_reason = "length";
    }
    for (size_t i = reply.tokens.size(); static_cast<int64_t>(i) < target; ++i)
      reply.tokens.push_back(FillerToken(x.seed, i));
    if (target == limit && x.body.value("ignore_eos", false)) reply.finish_reason = "length";
  }
  std::string model_input = x.prompt_text;
  for (const Passage& passage : x.passages)
    model_input += passage.text;
  if (x.tool && x.tool->ok) model_input += x.tool->result.dump();
  const tokenize::Tokenizer* tokenizer = tokenizer_;
  reply.prompt_tokens = tokenizer ? tokenizer->Count(model_input) : EstimateTokens(model_input);
  if (profile_.prefix_cache_tokens > 0)
    reply.cached_tokens = prefix_cache_.Use(
        model_input, reply.prompt_tokens,
        tokenizer ? [tokenizer](std::string_view text) { return tokenizer->Count(text); }
                  : std::function<int64_t(std::string_view)>());
  Generate(io_, engine_, metrics_, std::move(reply), x.responder, profile_.retry_after_s);
}

}  // namespace stagegate::sim
