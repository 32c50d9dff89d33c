#include "http/openai_request.h"

#include <cctype>
#include <charconv>

#include "base/json_text.h"
#include "base/strings.h"

namespace stagegate::http {
namespace {

using json = nlohmann::json;

void AddCommon(const RequestBodyOptions& options, json& body) {
  body["model"] = options.model;
  body["stream"] = options.stream;
  if (options.stream) body["stream_options"] = {{"include_usage", true}};
  if (options.max_tokens) body["max_tokens"] = *options.max_tokens;
  for (const auto& [key, value] : options.extra.items())
    body[key] = value;
}

// Splits at `separator` outside quotes, brackets and braces.
std::vector<std::string_view> SplitTopLevel(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == separator && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::string Hex(uint64_t value, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(digits, '0');
  for (int i = digits - 1; i >= 0; --i, value >>= 4)
    out[i] = kDigits[value & 0xF];
  return out;
}

}  // namespace

std::string BuildRequestBody(const RequestBodyOptions& options, std::string_view prompt) {
  // Every field but the prompt goes through nlohmann; the prompt, the only large part, is
  // spliced in as an escaped string, which is several times faster than a JSON tree's dump on
  // the load engine's send path.
  json rest = json::object();
  AddCommon(options, rest);
  const char* key = options.api == ApiKind::kChat ? "messages" : "prompt";
  if (rest.contains(key)) {  // --extra-inputs replaced the prompt itself
    json body = rest;
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::string body =
      options.api == ApiKind::kChat ? R"({"messages":[{"role":"user","content":)" : R"({"prompt":)";
  body.reserve(body.size() + prompt.size() + 256);
  AppendJsonString(body, prompt);
  if (options.api == ApiKind::kChat) body += "}]";
  const std::string fields = rest.dump(-1, ' ', false, json::error_handler_t::replace);
  if (fields.size() > 2) body.append(",").append(fields, 1, fields.size() - 2);
  body += '}';
  return body;
}

std::string BuildChatBody(const RequestBodyOptions& options, const json& messages) {
  json body = json::object();
  body["messages"] = messages;
  AddCommon(options, body);
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ApiPath(ApiKind api) {
  return api == ApiKind::kChat ? "/chat/completions" : "/completions";
}

Result<json> ParseExtraInputs(std::string_view text) {
  json extra = json::object();
  if (Trim(text).empty()) return extra;
  std::vector<std::string> errors;
  for (std::string_view pair : SplitTopLevel(text, ',')) {
    pair = Trim(pair);
    const size_t colon = pair.find(':');
    if (colon == std::string_view::npos || Trim(pair.substr(0, colon)).empty()) {
      errors.push_back(std::string("'").append(pair).append("' is not key:value"));
      continue;
    }
    const std::string key(Trim(pair.substr(0, colon)));
    const std::string_view value = Trim(pair.substr(colon + 1));
    json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
    extra[key] = parsed.is_discarded() ? json(std::string(value)) : std::move(parsed);
  }
  if (!errors.empty())
    return Status::InvalidInput("--extra-inputs: " + Join(errors, "; ") +
                                " (expected e.g. ignore_eos:true,min_tokens:128)");
  return extra;
}

std::string TraceContext::Header() const {
  return "traceparent: 00-" + trace_id + "-" + span_id + "-01";
}

TraceContext NewTraceContext(std::mt19937_64& rng) {
  uint64_t high = rng(), low = rng(), span = rng();
  if (high == 0 && low == 0) low = 1;
  if (span == 0) span = 1;
  return TraceContext{.trace_id = Hex(high, 16) + Hex(low, 16), .span_id = Hex(span, 16)};
}

std::vector<ServerTiming> ParseServerTiming(std::string_view value) {
  std::vector<ServerTiming> entries;
  for (std::string_view entry_text : SplitTopLevel(value, ',')) {
    std::vector<std::string_view> params = SplitTopLevel(entry_text, ';');
    ServerTiming entry;
    entry.name = std::string(Trim(params[0]));
    if (entry.name.empty()) continue;
    for (size_t i = 1; i < params.size(); ++i) {
      const std::string_view param = Trim(params[i]);
      const size_t eq = param.find('=');
      if (eq == std::string_view::npos) continue;
      std::string key(Trim(param.substr(0, eq)));
      for (char& c : key)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string_view raw = Trim(param.substr(eq + 1));
      std::string text;
      if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
        raw = raw.substr(1, raw.size() - 2);
        for (size_t j = 0; j < raw.size(); ++j) {
          if (raw[j] == '\\' && j + 1 < raw.size()) ++j;
          text += raw[j];
        }
      } else {
        text = std::string(raw);
      }
      if (key == "dur" && !entry.duration_ms) {
        double duration = 0;
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), duration);
        if (error == std::errc() && end == text.data() + text.size()) entry.duration_ms = duration;
      } else if (key == "desc" && entry.description.empty()) {
        entry.description = text;
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::optional<double> ParseRetryAfter(std::string_view value) {
  value = Trim(value);
  int64_t seconds = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (error != std::errc() || end != value.data() + value.size() || seconds < 0)
    return std::nullopt;
  return static_cast<double>(seconds);
}

}  // namespace stagegate::http
