#include "http/openai_stream.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "base/strings.h"

namespace stagegate::http {
namespace {

using json = nlohmann::json;

constexpr size_t kSnippetChars = 80;

// The member `key` of `object` (a JSON object), or nullptr.
const json* Member(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// A string member as a view into `object`; "" when missing or not a string.
std::string_view StringMember(const json& object, const char* key) {
  const json* value = Member(object, key);
  if (value == nullptr || !value->is_string()) return {};
  return value->get_ref<const std::string&>();
}

// A non-negative integer member (a count or an index); absent when missing, negative, fractional
// or out of range.
std::optional<int64_t> CountMember(const json& object, const char* key) {
  const json* value = Member(object, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_number_unsigned()) {
    const uint64_t count = value->get<uint64_t>();
    if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(count);
  }
  if (value->is_number_integer() && value->get<int64_t>() >= 0) return value->get<int64_t>();
  return std::nullopt;
}

// The first kSnippetChars characters of `text` (UTF-8 code points, so a character is never cut).
std::string Snippet(std::string_view text) {
  size_t chars = 0;
  size_t end = 0;
  for (; end < text.size(); ++end) {
    const bool continuation = (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80;
    if (!continuation && chars++ == kSnippetChars) break;
  }
  return std::string(text.substr(0, end));
}

// The message of an error chunk, or nullopt when `chunk` is not one. The three shapes servers
// send after HTTP 200: {"error": {"message": ...}} (OpenAI, vLLM mid-stream), {"error": "text"}
// (TGI) and {"object": "error", "message": ...} (vLLM). Without a usable message the error
// object itself is the message, so the record still says what came.
std::optional<std::string> ErrorMessage(const json& chunk) {
  constexpr auto kDump = [](const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  if (const json* error = Member(chunk, "error"); error != nullptr && !error->is_null()) {
    if (error->is_string()) return error->get<std::string>();
    if (error->is_object()) {
      if (std::string_view message = StringMember(*error, "message"); !message.empty())
        return std::string(message);
    }
    return kDump(*error);
  }
  if (StringMember(chunk, "object") == "error") {
    if (std::string_view message = StringMember(chunk, "message"); !message.empty())
      return std::string(message);
    return kDump(chunk);
  }
  return std::nullopt;
}

// The choice with index 0: by its "index" field, or by its position when that is unusable.
const json* FirstChoice(const json& chunk) {
  const json* choices = Member(chunk, "choices");
  if (choices == nullptr || !choices->is_array()) return nullptr;
  for (size_t position = 0; position < choices->size(); ++position) {
    const json& choice = (*choices)[position];
    if (!choice.is_object()) continue;
    if (CountMember(choice, "index").value_or(static_cast<int64_t>(position)) == 0) return &choice;
  }
  return nullptr;
}

// The tool call with `index` in `calls` (kept sorted by index), added when new.
ToolCallState& ToolCallAt(std::vector<ToolCallState>& calls, int64_t index) {
  auto it = std::lower_bound(calls.begin(), calls.end(), index,
                             [](const ToolCallState& call, int64_t i) { return call.index < i; });
  if (it == calls.end() || it->index != index) it = calls.insert(it, ToolCallState{.index = index});
  return *it;
}

// Merges the tool-call fragments of one delta; returns whether any carried argument text.
bool MergeToolCalls(const json& delta, std::vector<ToolCallState>& calls) {
  const json* fragments = Member(delta, "tool_calls");
  if (fragments == nullptr || !fragments->is_array()) return false;
  bool arguments = false;
  for (size_t position = 0; position < fragments->size(); ++position) {
    const json& fragment = (*fragments)[position];
    if (!fragment.is_object()) continue;
    // A server that omits the index sends each call whole, in order.
    const int64_t index = CountMember(fragment, "index").value_or(static_cast<int64_t>(position));
    ToolCallState& call = ToolCallAt(calls, index);
    if (std::string_view id = StringMember(fragment, "id"); !id.empty()) call.id = id;
    if (std::string_view type = StringMember(fragment, "type"); !type.empty()) call.type = type;
    const json* function = Member(fragment, "function");
    if (function == nullptr || !function->is_object()) continue;
    if (std::string_view name = StringMember(*function, "name"); !name.empty()) call.name = name;
    std::string_view fragment_arguments = StringMember(*function, "arguments");
    call.arguments.append(fragment_arguments);
    arguments = arguments || !fragment_arguments.empty();
  }
  return arguments;
}

}  // namespace

void OpenAiStreamDecoder::OnEvent(const SseEvent& event, int64_t now_ns) {
  if (state_ != State::kStreaming) return;
  const std::string_view data = Trim(event.data);
  if (data.empty()) return;  // a keep-alive
  if (data == "[DONE]") {
    End(State::kDone, "", now_ns);
    return;
  }
  ++chunks_;
  const json chunk = json::parse(data.begin(), data.end(), nullptr, /*allow_exceptions=*/false);
  if (chunk.is_discarded()) {
    End(State::kMalformed,
        "malformed JSON in chunk " + std::to_string(chunks_) + ": " + Snippet(data), now_ns);
    return;
  }
  if (!chunk.is_object()) {
    End(State::kMalformed,
        "chunk " + std::to_string(chunks_) + " is not a JSON object: " + Snippet(data), now_ns);
    return;
  }
  if (std::optional<std::string> message = ErrorMessage(chunk)) {
    End(State::kError, std::move(*message), now_ns);
    return;
  }
  if (const json* usage = Member(chunk, "usage"); usage != nullptr && usage->is_object()) {
    if (auto prompt = CountMember(*usage, "prompt_tokens")) usage_.prompt_tokens = prompt;
    if (auto completion = CountMember(*usage, "completion_tokens"))
      usage_.completion_tokens = completion;
  }
  const json* choice = FirstChoice(chunk);
  if (choice == nullptr) return;

  bool answer = false;
  bool token = false;
  if (const json* delta = Member(*choice, "delta"); delta != nullptr && delta->is_object()) {
    const std::string_view content = StringMember(*delta, "content");
    // Some servers send the reasoning under both names: count it once.
    std::string_view reasoning = StringMember(*delta, "reasoning_content");
    if (reasoning.empty()) reasoning = StringMember(*delta, "reasoning");
    content_.append(content);
    reasoning_.append(reasoning);
    answer = !content.empty();
    token = answer || !reasoning.empty();
    token = MergeToolCalls(*delta, tool_calls_) || token;
  }
  const std::string_view text = StringMember(*choice, "text");  // text_completion
  content_.append(text);
  answer = answer || !text.empty();
  token = token || answer;
  if (std::string_view reason = StringMember(*choice, "finish_reason"); !reason.empty())
    finish_reason_ = reason;

  if (token) {
    if (!first_token_ns_) first_token_ns_ = now_ns;
    content_times_ns_.push_back(now_ns);
  }
  if (answer && !first_answer_ns_) first_answer_ns_ = now_ns;
}

void OpenAiStreamDecoder::OnEnd(int64_t now_ns) {
  if (state_ == State::kStreaming) End(State::kMalformed, "stream ended without [DONE]", now_ns);
}

void OpenAiStreamDecoder::End(State state, std::string reason, int64_t now_ns) {
  state_ = state;
  error_ = std::move(reason);
  end_ns_ = now_ns;
}

}  // namespace stagegate::http
