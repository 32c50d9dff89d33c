#include "init/endpoint_probe.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>

#include "base/redact.h"
#include "base/strings.h"
#include "base/token_estimate.h"
#include "http/blocking_call.h"
#include "http/openai_answer.h"
#include "http/openai_request.h"
#include "http/openai_stream.h"
#include "http/sse_parser.h"
#include "telemetry/prometheus.h"

namespace stagegate::init {
namespace {

using json = nlohmann::json;

std::vector<std::string> AuthHeaders(const std::string& api_key) {
  if (api_key.empty()) return {};
  return {"Authorization: Bearer " + api_key};
}

void ProbeModels(const std::string& root, const std::string& api_key, int64_t timeout_ms,
                 EndpointFindings& f) {
  Result<http::CallReply> reply = http::Call(
      {.url = root + "/v1/models", .headers = AuthHeaders(api_key), .timeout_ms = timeout_ms});
  if (!reply.ok()) {
    f.problem = reply.status().message();
    return;
  }
  const json list = json::parse(reply->body, nullptr, false);
  f.models_listed =
      reply->status == 200 && list.is_object() && list.contains("data") && list["data"].is_array();
  if (!*f.models_listed) return;
  for (const json& entry : list["data"])
    if (entry.is_object() && entry.contains("id") && entry["id"].is_string())
      f.models.push_back(entry["id"].get<std::string>());
}

void ProbeAnswer(const std::string& root, const std::string& model, const std::string& api_key,
                 int64_t timeout_ms, EndpointFindings& f) {
  http::RequestBodyOptions options{.model = model, .stream = true, .max_tokens = 16};
  std::vector<std::string> headers = AuthHeaders(api_key);
  headers.push_back("Content-Type: application/json");
  headers.push_back("Accept: text/event-stream");
  const auto start = std::chrono::steady_clock::now();
  Result<http::CallReply> reply =
      http::Call({.method = "POST",
                  .url = root + "/v1/chat/completions",
                  .headers = headers,
                  .body = http::BuildRequestBody(options, "Say hello in five words."),
                  .timeout_ms = timeout_ms});
  const double took_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!reply.ok()) {
    if (f.problem.empty()) f.problem = reply.status().message();
    return;
  }
  f.model_accepted = reply->status >= 200 && reply->status <= 299;
  if (!*f.model_accepted) {
    // Whole, not cut: the key is redacted from it before anything shows a part of it.
    f.refusal =
        "HTTP " + std::to_string(reply->status) + (reply->body.empty() ? "" : ": " + reply->body);
    return;
  }
  f.streams = AsciiLower(reply->content_type).find("text/event-stream") != std::string::npos;
  if (!*f.streams) {
    // A whole answer: the server ignored "stream": true.
    const http::WholeAnswer whole = http::DecodeWholeAnswer(reply->body);
    f.usage = whole.usage.completion_tokens.has_value();
    f.answer = whole.content;
    if (!f.answer.empty()) {
      const std::optional<int64_t> tokens = whole.usage.completion_tokens;
      f.answer_ms = took_ms;
      f.answer_tokens = tokens && *tokens > 0 ? *tokens : EstimateTokens(f.answer);
    }
    return;
  }
  http::SseParser parser;
  http::OpenAiStreamDecoder decoder;
  int64_t n = 0;
  parser.FeedEach(reply->body, [&](const http::SseEvent& event) { decoder.OnEvent(event, ++n); });
  decoder.OnEnd(++n);
  f.streams = decoder.state() == http::OpenAiStreamDecoder::State::kDone;
  f.usage = decoder.usage().completion_tokens.has_value();
  f.answer = decoder.content();
  if (decoder.state() != http::OpenAiStreamDecoder::State::kDone && !decoder.error().empty())
    f.refusal = decoder.error();
  if (*f.streams && !f.answer.empty()) {
    f.answer_ms = took_ms;
    const std::optional<int64_t> usage = decoder.usage().completion_tokens;
    // Without usage, a server that sends the answer in one event would count as one token.
    f.answer_tokens =
        usage && *usage > 0 ? *usage : std::max(decoder.content_events(), EstimateTokens(f.answer));
  }
}

void ProbeMetrics(const std::string& root, const std::string& api_key, int64_t timeout_ms,
                  EndpointFindings& f) {
  Result<http::CallReply> reply = http::Call(
      {.url = root + "/metrics", .headers = AuthHeaders(api_key), .timeout_ms = timeout_ms});
  if (!reply.ok()) return;
  Result<telemetry::Exposition> exposition = telemetry::ParsePrometheusText(reply->body);
  f.metrics = reply->status == 200 && exposition.ok() && !exposition->samples.empty();
}

// The ids of a model list shown, the rest counted.
constexpr size_t kShownModels = 20;

std::string YesNo(const std::optional<bool>& value, const std::string& yes, const std::string& no) {
  return !value ? "not known" : *value ? yes : no;
}

}  // namespace

std::string EndpointRoot(std::string base_url) {
  while (!base_url.empty() && base_url.back() == '/')
    base_url.pop_back();
  if (base_url.ends_with("/v1")) base_url.resize(base_url.size() - 3);
  while (!base_url.empty() && base_url.back() == '/')
    base_url.pop_back();
  return base_url;
}

EndpointFindings ProbeEndpoint(const std::string& base_url, const std::string& model,
                               const std::string& api_key, int64_t timeout_ms) {
  EndpointFindings f{.base_url = EndpointRoot(base_url)};
  ProbeModels(f.base_url, api_key, timeout_ms, f);
  if (f.problem.empty()) {  // else not reached: nothing more to learn
    ProbeAnswer(f.base_url, model, api_key, timeout_ms, f);
    ProbeMetrics(f.base_url, api_key, timeout_ms, f);
  }
  // A server may echo the key anywhere (an id, an error, the answer), and what init prints goes
  // into CI logs: the findings never hold it.
  Redactor redactor;
  redactor.Add(api_key);
  for (std::string* text : {&f.problem, &f.refusal, &f.answer})
    *text = redactor.Apply(std::move(*text));
  for (std::string& id : f.models)
    id = redactor.Apply(std::move(id));
  return f;
}

std::vector<std::string> DescribeFindings(const EndpointFindings& f, const std::string& model) {
  std::vector<std::string> lines;
  if (!f.problem.empty()) {
    lines.push_back("could not reach " + f.base_url + ": " + ShownText(f.problem));
    lines.push_back(
        "the scenario is written for a streaming server with usage and no /metrics; run init "
        "again into an empty folder once the server is up, or edit target: by hand");
    return lines;
  }
  const std::string shown_model = ShownText(model);
  std::string listed = "model list (/v1/models): ";
  if (!f.models_listed || !*f.models_listed) {
    listed += "none";
  } else if (f.models.empty()) {
    listed += "empty";
  } else {
    std::vector<std::string> shown;
    for (size_t i = 0; i < f.models.size() && i < kShownModels; ++i)
      shown.push_back(ShownText(f.models[i]));
    listed += Join(shown, ", ");
    if (f.models.size() > kShownModels)
      listed += " and " + std::to_string(f.models.size() - kShownModels) + " more";
    if (std::find(f.models.begin(), f.models.end(), model) == f.models.end())
      listed += " (" + shown_model + " is not among them)";
    const auto unprintable = std::count_if(f.models.begin(), f.models.end(),
                                           [](const std::string& id) { return !IsShownAsIs(id); });
    if (unprintable > 0)
      listed += "; " + std::to_string(unprintable) +
                (unprintable == 1 ? " id holds" : " ids hold") +
                " characters a terminal would act on, shown escaped: init never writes such a "
                "name into the scenario, nor any text from the server";
  }
  lines.push_back(listed);
  lines.push_back(
      "model name " + shown_model + ": " +
      YesNo(f.model_accepted, "accepted",
            "refused (" + ShownText(f.refusal) + "): set target.model to a name it accepts"));
  lines.push_back("streaming: " + YesNo(f.streams, "works (TTFT and ITL can be measured)",
                                        "no: the scenario sets stream: false and judges e2e "
                                        "latency only"));
  lines.push_back("usage in the stream: " +
                  YesNo(f.usage, "present (token counts are the server's)",
                        "absent: output tokens are counted as stream events; give "
                        "input.tokenizer (the model's tokenizer.json) to count exactly"));
  lines.push_back("/metrics: " + YesNo(f.metrics, "present (the scenario scrapes it)",
                                       "absent: no server series in the report"));
  if (f.answer_ms && f.answer_tokens)
    lines.push_back("one answer alone: " + std::to_string(*f.answer_tokens) + " tokens in " +
                    FormatNumber(*f.answer_ms, 0) + " ms");
  if (!f.answer.empty()) lines.push_back("its answer began: \"" + ShownText(f.answer) + "\"");
  return lines;
}

}  // namespace stagegate::init
