#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stagegate::http {

enum class ApiKind { kChat, kCompletions };

/// What goes into one request body. `extra` members are merged last and win, so a user can set
/// any field the server knows (`ignore_eos`, `min_tokens`, `temperature`, ...).
struct RequestBodyOptions {
  ApiKind api = ApiKind::kChat;
  std::string model;
  bool stream = true;
  std::optional<int64_t> max_tokens;
  nlohmann::json extra = nlohmann::json::object();
};

/// The JSON body for a prompt: chat as one user message, completions as `prompt`. Streaming
/// bodies ask for the usage chunk (`stream_options.include_usage`).
std::string BuildRequestBody(const RequestBodyOptions& options, std::string_view prompt);
/// As above, with chat messages given whole (a corpus task's conversation).
std::string BuildChatBody(const RequestBodyOptions& options, const nlohmann::json& messages);

/// The path of the API under a base URL such as http://host:port/v1.
std::string ApiPath(ApiKind api);

/// Parses `--extra-inputs`: comma-separated `key:value` pairs whose values are JSON
/// (`ignore_eos:true,min_tokens:128,stop:["\n"]`); a value that is not JSON is taken as a string.
/// Commas inside brackets, braces or quotes do not split. Errors name the offending pair.
Result<nlohmann::json> ParseExtraInputs(std::string_view text);

/// A W3C trace context for one request.
struct TraceContext {
  std::string trace_id;  // 32 lowercase hex digits, never all zero
  std::string span_id;   // 16 lowercase hex digits, never all zero
  /// "traceparent: 00-<trace>-<span>-01"
  std::string Header() const;
};
/// Draws a fresh context from `rng` (one generator per worker thread).
TraceContext NewTraceContext(std::mt19937_64& rng);

/// One entry of a Server-Timing header: `name;dur=12.5;desc="retrieval"`.
struct ServerTiming {
  std::string name;
  std::optional<double> duration_ms;
  std::string description;

  bool operator==(const ServerTiming&) const = default;
};
/// Parses a Server-Timing header value (entries separated by commas, parameters by semicolons,
/// quoted strings with backslash escapes). Malformed parts are skipped, never an error.
std::vector<ServerTiming> ParseServerTiming(std::string_view value);

/// Retry-After as seconds: delta-seconds only (an HTTP date is ignored); absent when unusable.
std::optional<double> ParseRetryAfter(std::string_view value);

}  // namespace stagegate::http
