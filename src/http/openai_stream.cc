#include "http/openai_stream.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json_text.h"
#include "base/strings.h"

namespace stagegate::http {
namespace {

using simdjson::SUCCESS;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::key_value_pair;
using simdjson::dom::object;

// A member of a JSON object, or nullopt when missing.
using Member = std::optional<element>;

constexpr size_t kSnippetChars = 80;

// Above this capacity (bytes of JSON) a thread's parser is dropped before its next use.
constexpr size_t kKeptParserCapacity = 64 * 1024;

// The members named `keys` of `object`, in one pass. Of duplicate keys the last wins, as in
// nlohmann/json (used elsewhere in stagegate) and JavaScript's JSON.parse.
template <size_t N>
std::array<Member, N> Members(object object, const std::array<std::string_view, N>& keys) {
  std::array<Member, N> found;
  for (const key_value_pair field : object) {
    for (size_t i = 0; i < N; ++i) {
      if (field.key == keys[i]) {
        found[i] = field.value;
        break;
      }
    }
  }
  return found;
}

std::optional<object> ObjectOf(const Member& value) {
  object result;
  if (!value || value->get(result) != SUCCESS) return std::nullopt;
  return result;
}

// A string as a view into the parser's buffer: valid until the thread's next parse. "" when
// missing or not a string.
std::string_view StringOf(const Member& value) {
  std::string_view text;
  if (!value || value->get(text) != SUCCESS) return {};
  return text;
}

// A non-negative integer (a count or an index); absent when missing, negative, fractional or out
// of range.
std::optional<int64_t> CountOf(const Member& value) {
  int64_t count = 0;
  if (!value || value->get(count) != SUCCESS || count < 0) return std::nullopt;
  return count;
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

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

size_t SkipDigits(std::string_view text, size_t at) {
  while (at < text.size() && IsDigit(text[at]))
    ++at;
  return at;
}

// `json` with ".0" after each integer beyond the 64-bit range, or "" when there is none.
// simdjson 3.0 rejects a document holding such an integer (NUMBER_ERROR), where most readers
// (nlohmann/json, JSON.parse) take it as a double; rewritten, simdjson does the same, so one
// huge number in a field nobody reads does not lose a chunk.
std::string WidenHugeIntegers(std::string_view json) {
  constexpr std::string_view kMaxUnsigned = "18446744073709551615";
  constexpr std::string_view kMinSigned = "9223372036854775808";  // without its '-'
  std::string widened;
  size_t copied = 0;
  bool in_string = false;
  for (size_t at = 0; at < json.size(); ++at) {
    const char c = json[at];
    if (in_string) {
      if (c == '\\') ++at;
      in_string = c != '"';
      continue;
    }
    in_string = c == '"';
    if (c != '-' && !IsDigit(c)) continue;
    const size_t digits_begin = at + (c == '-' ? 1 : 0);
    const size_t digits_end = SkipDigits(json, digits_begin);
    size_t end = digits_end;
    bool integer = true;
    if (end < json.size() && json[end] == '.') {
      integer = false;
      end = SkipDigits(json, end + 1);
    }
    if (end < json.size() && (json[end] == 'e' || json[end] == 'E')) {
      integer = false;
      if (++end < json.size() && (json[end] == '+' || json[end] == '-')) ++end;
      end = SkipDigits(json, end);
    }
    const std::string_view digits = json.substr(digits_begin, digits_end - digits_begin);
    const std::string_view limit = c == '-' ? kMinSigned : kMaxUnsigned;
    if (integer &&
        (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit))) {
      widened.append(json.substr(copied, digits_end - copied)).append(".0");
      copied = digits_end;
    }
    at = end - 1;
  }
  if (copied == 0) return {};
  return widened.append(json.substr(copied));
}

// Parses `data` into `root`, which is valid until this thread's next Parse: the parser is the
// thread's, shared by its decoders, since a parser keeps buffers of about 15 bytes per byte of
// the largest document it has parsed, too much to give each of thousands of live streams its
// own. A parser grown by a rare huge chunk is replaced, so that memory is not kept.
simdjson::error_code Parse(std::string_view data, element& root) {
  thread_local simdjson::dom::parser parser;
  if (parser.capacity() > kKeptParserCapacity) parser = simdjson::dom::parser();
  simdjson::error_code error = parser.parse(data.data(), data.size()).get(root);
  if (error == simdjson::NUMBER_ERROR) {
    if (const std::string widened = WidenHugeIntegers(data); !widened.empty())
      error = parser.parse(widened).get(root);
  }
  return error;
}

// `value` as nlohmann/json's dump() writes it, the form error messages have always had (tests
// and stored records hold them): compact, object keys sorted bytewise with the last of
// duplicates kept. simdjson writes numbers with the same Grisu2 code as nlohmann (1.0, 1e+100).
void AppendDump(element value, std::string& out) {
  switch (value.type()) {
    case element_type::OBJECT: {
      object members;
      if (value.get(members) != SUCCESS) return;
      std::vector<key_value_pair> fields;
      for (const key_value_pair field : members)
        fields.push_back(field);
      std::stable_sort(fields.begin(), fields.end(),
                       [](const auto& a, const auto& b) { return a.key < b.key; });
      out += '{';
      bool first = true;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i + 1 < fields.size() && fields[i + 1].key == fields[i].key) continue;
        if (!first) out += ',';
        first = false;
        AppendJsonString(out, fields[i].key);
        out += ':';
        AppendDump(fields[i].value, out);
      }
      out += '}';
      return;
    }
    case element_type::ARRAY: {
      array items;
      if (value.get(items) != SUCCESS) return;
      out += '[';
      bool first = true;
      for (const element item : items) {
        if (!first) out += ',';
        first = false;
        AppendDump(item, out);
      }
      out += ']';
      return;
    }
    case element_type::STRING:
      AppendJsonString(out, StringOf(value));
      return;
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
    case element_type::BOOL:
    case element_type::NULL_VALUE:
      out += simdjson::to_string(value);
      return;
  }
}

std::string Dump(element value) {
  std::string text;
  AppendDump(value, text);
  return text;
}

// The message of an error chunk, or nullopt when `chunk` is not one. The three shapes servers
// send after HTTP 200: {"error": {"message": ...}} (OpenAI, vLLM mid-stream), {"error": "text"}
// (TGI) and {"object": "error", "message": ...} (vLLM). Without a usable message the error
// object itself is the message, so the record still says what came.
std::optional<std::string> ErrorMessage(element chunk, const Member& error, const Member& type,
                                        const Member& message) {
  if (error && !error->is_null()) {
    if (error->is_string()) return std::string(StringOf(error));
    if (std::optional<object> fields = ObjectOf(error)) {
      const auto [inner_message] = Members<1>(*fields, {"message"});
      if (std::string_view text = StringOf(inner_message); !text.empty()) return std::string(text);
    }
    return Dump(*error);
  }
  if (StringOf(type) == "error") {
    if (std::string_view text = StringOf(message); !text.empty()) return std::string(text);
    return Dump(chunk);
  }
  return std::nullopt;
}

// The choice with index 0: by its "index" field, or by its position when that is unusable.
std::optional<object> FirstChoice(const Member& choices) {
  array list;
  if (!choices || choices->get(list) != SUCCESS) return std::nullopt;
  int64_t position = -1;
  for (const element item : list) {
    ++position;
    object choice;
    if (item.get(choice) != SUCCESS) continue;
    const auto [index] = Members<1>(choice, {"index"});
    if (CountOf(index).value_or(position) == 0) return choice;
  }
  return std::nullopt;
}

// The tool call with `index` in `calls` (kept sorted by index), added when new.
ToolCallState& ToolCallAt(std::vector<ToolCallState>& calls, int64_t index) {
  auto it = std::lower_bound(calls.begin(), calls.end(), index,
                             [](const ToolCallState& call, int64_t i) { return call.index < i; });
  if (it == calls.end() || it->index != index) it = calls.insert(it, ToolCallState{.index = index});
  return *it;
}

// Merges the tool-call fragments of one delta; returns whether any carried argument text.
bool MergeToolCalls(const Member& tool_calls, std::vector<ToolCallState>& calls) {
  array fragments;
  if (!tool_calls || tool_calls->get(fragments) != SUCCESS) return false;
  bool arguments = false;
  int64_t position = -1;
  for (const element item : fragments) {
    ++position;
    object fragment;
    if (item.get(fragment) != SUCCESS) continue;
    const auto [index, id, type, function] =
        Members<4>(fragment, {"index", "id", "type", "function"});
    // A server that omits the index sends each call whole, in order.
    ToolCallState& call = ToolCallAt(calls, CountOf(index).value_or(position));
    if (std::string_view text = StringOf(id); !text.empty()) call.id = text;
    if (std::string_view text = StringOf(type); !text.empty()) call.type = text;
    const std::optional<object> function_fields = ObjectOf(function);
    if (!function_fields) continue;
    const auto [name, function_arguments] = Members<2>(*function_fields, {"name", "arguments"});
    if (std::string_view text = StringOf(name); !text.empty()) call.name = text;
    const std::string_view fragment_arguments = StringOf(function_arguments);
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
  element root;
  if (const simdjson::error_code parsed = Parse(data, root); parsed != SUCCESS) {
    invalid_utf8_ = parsed == simdjson::UTF8_ERROR;
    End(State::kMalformed,
        "malformed JSON in chunk " + std::to_string(chunks_) + ": " + Snippet(data), now_ns);
    return;
  }
  object chunk;
  if (root.get(chunk) != SUCCESS) {
    End(State::kMalformed,
        "chunk " + std::to_string(chunks_) + " is not a JSON object: " + Snippet(data), now_ns);
    return;
  }
  const auto [error, type, message, usage, choices] =
      Members<5>(chunk, {"error", "object", "message", "usage", "choices"});
  if (std::optional<std::string> text = ErrorMessage(root, error, type, message)) {
    End(State::kError, std::move(*text), now_ns);
    return;
  }
  if (std::optional<object> counts = ObjectOf(usage)) {
    const auto [prompt, completion, details] =
        Members<3>(*counts, {"prompt_tokens", "completion_tokens", "prompt_tokens_details"});
    if (std::optional<int64_t> tokens = CountOf(prompt)) usage_.prompt_tokens = tokens;
    if (std::optional<int64_t> tokens = CountOf(completion)) usage_.completion_tokens = tokens;
    if (std::optional<object> prompt_details = ObjectOf(details)) {
      const auto [cached] = Members<1>(*prompt_details, {"cached_tokens"});
      if (std::optional<int64_t> tokens = CountOf(cached)) usage_.cached_tokens = tokens;
    }
  }
  const std::optional<object> choice = FirstChoice(choices);
  if (!choice) return;

  const auto [delta, text, finish_reason] = Members<3>(*choice, {"delta", "text", "finish_reason"});
  bool answer = false;
  bool token = false;
  if (std::optional<object> fields = ObjectOf(delta)) {
    const auto [content, reasoning_content, reasoning, tool_calls] =
        Members<4>(*fields, {"content", "reasoning_content", "reasoning", "tool_calls"});
    const std::string_view content_text = StringOf(content);
    // Some servers send the reasoning under both names: count it once.
    std::string_view reasoning_text = StringOf(reasoning_content);
    if (reasoning_text.empty()) reasoning_text = StringOf(reasoning);
    content_.append(content_text);
    reasoning_.append(reasoning_text);
    answer = !content_text.empty();
    token = answer || !reasoning_text.empty();
    token = MergeToolCalls(tool_calls, tool_calls_) || token;
  }
  const std::string_view completion_text = StringOf(text);  // text_completion
  content_.append(completion_text);
  answer = answer || !completion_text.empty();
  token = token || answer;
  if (std::string_view reason = StringOf(finish_reason); !reason.empty()) finish_reason_ = reason;

  if (token) {
    if (!first_token_ns_) first_token_ns_ = now_ns;
    content_times_ns_.push_back(now_ns);
  }
  if (answer && !first_answer_ns_) first_answer_ns_ = now_ns;
}

size_t OpenAiStreamDecoder::kept_bytes() const {
  size_t bytes = content_.size() + reasoning_.size() + error_.size();
  for (const ToolCallState& call : tool_calls_)
    bytes += call.arguments.size() + call.id.size() + call.name.size();
  return bytes;
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
