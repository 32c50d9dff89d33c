#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stagegate::init {

/// What one look at an OpenAI-compatible endpoint found: `stagegate init` writes its scenario to
/// match. Each answer is absent when the probe could not tell (the server was not reached).
/// Every text that came from the server (ids, refusal, answer) holds the probe's API key nowhere:
/// it is redacted (Redactor) before the findings are returned. It is otherwise as the server sent
/// it, controls and all: show it through ShownText (base/strings.h).
struct EndpointFindings {
  std::string base_url;  // as probed: no trailing '/' nor '/v1'
  std::string problem;   // why the endpoint could not be probed at all; "" when it could
  std::optional<bool> models_listed;   // GET /v1/models answered with a list of models
  std::vector<std::string> models;     // their ids
  std::optional<bool> model_accepted;  // a chat request naming the model was answered 2xx
  std::string refusal;                 // the status and start of the body when it was not
  std::optional<bool> streams;         // the answer came as server-sent events ending in [DONE]
  std::optional<bool> usage;           // the stream carried a usage object with token counts
  std::optional<bool> metrics;         // GET /metrics answered a Prometheus exposition
  std::string answer;                  // the answer's text
  // How long the chat answer took, from the request to its last byte, and its output tokens
  // (the usage's completion_tokens, else the larger of the streamed content events and the
  // estimate from its text, EstimateTokens). Absent unless the model was accepted and the answer
  // held text: init sizes the scenario's overload phase from them (InitOverload).
  std::optional<double> answer_ms;
  std::optional<int64_t> answer_tokens;
};

/// `base_url` without a trailing '/' or '/v1' (stagegate adds /v1/... itself).
std::string EndpointRoot(std::string base_url);

/// Probes the endpoint at `base_url` once: the model list, one short streamed chat answer from
/// `model` (asking for usage), and /metrics. `api_key` ("" for none) goes as a bearer token, and
/// is redacted from everything the findings hold. Never throws; every request is bounded by
/// `timeout_ms`.
EndpointFindings ProbeEndpoint(const std::string& base_url, const std::string& model,
                               const std::string& api_key, int64_t timeout_ms);

/// The findings as lines for a person: what was found and what it means for a run. Each text
/// from the server is shown through ShownText (escaped, cut), a long model list cut too.
std::vector<std::string> DescribeFindings(const EndpointFindings& f, const std::string& model);

}  // namespace stagegate::init
