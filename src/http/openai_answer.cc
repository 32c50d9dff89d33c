#include "http/openai_answer.h"

#include <nlohmann/json.hpp>

namespace stagegate::http {
namespace {

using json = nlohmann::json;

// `object[key]` when it is an integer, else nullopt.
std::optional<int64_t> Integer(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::string Text(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string ToolCalls(const json& calls) {
  json out = json::array();
  int64_t index = 0;
  for (const json& call : calls) {
    if (!call.is_object()) continue;
    const json function = call.value("function", json::object());
    out.push_back({{"index", index++},
                   {"id", Text(call, "id")},
                   {"type", Text(call, "type")},
                   {"name", function.is_object() ? Text(function, "name") : ""},
                   {"arguments", function.is_object() ? Text(function, "arguments") : ""}});
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

void TakeChoice(const json& choice, WholeAnswer& answer) {
  const auto message = choice.find("message");
  if (message != choice.end() && message->is_object()) {
    answer.content = Text(*message, "content");
    for (const char* key : {"reasoning_content", "reasoning"})
      if (answer.reasoning.empty()) answer.reasoning = Text(*message, key);
    if (const auto calls = message->find("tool_calls");
        calls != message->end() && calls->is_array())
      answer.tool_calls_json = ToolCalls(*calls);
  } else {
    answer.content = Text(choice, "text");
  }
  answer.finish_reason = Text(choice, "finish_reason");
}

}  // namespace

WholeAnswer DecodeWholeAnswer(std::string_view body) {
  WholeAnswer answer;
  const json parsed = json::parse(body, nullptr, false);
  if (!parsed.is_object()) return answer;
  const json* choice = nullptr;
  if (const auto choices = parsed.find("choices"); choices != parsed.end() && choices->is_array() &&
                                                   !choices->empty() && (*choices)[0].is_object())
    choice = &(*choices)[0];
  if (choice == nullptr && parsed.contains("error")) {
    answer.shape = WholeAnswer::Shape::kError;
    return answer;
  }
  answer.shape = WholeAnswer::Shape::kAnswer;
  if (choice != nullptr) TakeChoice(*choice, answer);
  if (const auto usage = parsed.find("usage"); usage != parsed.end() && usage->is_object()) {
    answer.usage.prompt_tokens = Integer(*usage, "prompt_tokens");
    answer.usage.completion_tokens = Integer(*usage, "completion_tokens");
    const auto details = usage->find("prompt_tokens_details");
    if (details != usage->end() && details->is_object())
      if (const std::optional<int64_t> cached = Integer(*details, "cached_tokens");
          cached && *cached >= 0)
        answer.usage.cached_tokens = cached;
  }
  return answer;
}

std::string ErrorBodyMessage(std::string_view body) {
  const json parsed = json::parse(body, nullptr, false);
  if (parsed.is_object()) {
    if (const auto error = parsed.find("error"); error != parsed.end()) {
      if (error->is_string()) return error->get<std::string>();
      if (error->is_object() && !Text(*error, "message").empty()) return Text(*error, "message");
    }
    if (const std::string message = Text(parsed, "message"); !message.empty()) return message;
  }
  return std::string(body.substr(0, 200));
}

}  // namespace stagegate::http
