#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "http/sse_parser.h"

namespace stagegate::http {

/// A streamed tool call, its fragments merged.
struct ToolCallState {
  int64_t index = 0;
  std::string id;
  std::string type;
  std::string name;
  std::string arguments;  // the concatenated argument fragments

  bool operator==(const ToolCallState&) const = default;
};

/// Token counts from the server's `usage` object (the last one seen); absent when not given.
struct StreamUsage {
  std::optional<int64_t> prompt_tokens, completion_tokens;
  std::optional<int64_t> cached_tokens;  // usage.prompt_tokens_details.cached_tokens

  bool operator==(const StreamUsage&) const = default;
};

/// Decodes the events of an OpenAI-compatible streaming response (chat.completion.chunk or
/// text_completion) into the answer and the times that latency metrics need. Pure: it is told
/// the time of each event and never reads a clock. Never throws, and any chunk is handled.
///
/// What each chunk contributes:
/// - Choice index 0 only (by its "index" field, or by position when that is missing or not an
///   integer): delta.content, delta.reasoning_content or else delta.reasoning, delta.tool_calls,
///   text (text_completion), finish_reason. Other choices are ignored.
/// - `usage`, also on a chunk with empty choices; `"usage": null` means none.
/// - An error: `{"error": {"message": ...}}`, `{"error": "text"}` (TGI) or `{"object": "error",
///   "message": ...}` (vLLM) ends the stream in kError with the message.
/// - `[DONE]` ends the stream in kDone. An event whose data is empty or blank is a keep-alive and
///   is ignored; the event type is not looked at.
/// Shapes: data that is not JSON, or JSON that is not an object, ends the stream in kMalformed;
/// so does JSON nested over 1024 levels deep (the parser's limit). Inside an object any field of
/// an unexpected type counts as absent (content: 5 adds nothing; choices: "x" carries no choice),
/// so a usable chunk is never lost to one odd field. Of duplicate keys the last counts; an
/// integer beyond 64 bits is read as a double (so it is no count or index).
///
/// A token event is an event whose choice 0 carries non-empty content, reasoning or tool-call
/// arguments. content_times_ns() has one entry per token event, so its first entry is
/// first_token_ns() and its gaps are the inter-token latencies.
///
/// Not thread-safe; one decoder per response. Chunks are parsed (simdjson) by a parser owned by
/// the calling thread and shared with the other decoders that thread runs, so memory does not
/// grow with the number of live decoders: each thread keeps about 15 bytes per byte of the
/// largest chunk it has decoded, up to a 64 KiB chunk (larger ones are freed at the thread's
/// next chunk). A decoder may move between threads but is used by one thread at a time.
class OpenAiStreamDecoder {
 public:
  enum class State { kStreaming, kDone, kError, kMalformed };

  /// Handles one SSE event received at `now_ns` (steady clock, ns from run start). Ignores
  /// events once the state is not kStreaming.
  void OnEvent(const SseEvent& event, int64_t now_ns);
  /// The body ended (EOF) at `now_ns`: while still kStreaming (no [DONE], no error) the state
  /// becomes kMalformed with reason "stream ended without [DONE]".
  void OnEnd(int64_t now_ns);

  State state() const { return state_; }
  /// The error object's message (kError) or why the stream is malformed (kMalformed); else "".
  const std::string& error() const { return error_; }
  /// The answer and the reasoning so far, also after an error or a malformed chunk.
  const std::string& content() const { return content_; }
  const std::string& reasoning() const { return reasoning_; }
  /// Merged by index, in index order.
  const std::vector<ToolCallState>& tool_calls() const { return tool_calls_; }
  /// The last non-empty finish_reason; "" when none came.
  const std::string& finish_reason() const { return finish_reason_; }
  const StreamUsage& usage() const { return usage_; }
  /// The first token event (content, reasoning or tool-call arguments).
  std::optional<int64_t> first_token_ns() const { return first_token_ns_; }
  /// The first event with non-empty content (the answer proper, after any reasoning).
  std::optional<int64_t> first_answer_ns() const { return first_answer_ns_; }
  /// When each token event arrived.
  const std::vector<int64_t>& content_times_ns() const { return content_times_ns_; }
  int64_t content_events() const { return static_cast<int64_t>(content_times_ns_.size()); }
  /// A chunk was refused because it is not UTF-8 (so not JSON): the error quotes only its start.
  bool invalid_utf8() const { return invalid_utf8_; }
  /// Bytes of text kept so far: content, reasoning, tool-call arguments and the error.
  size_t kept_bytes() const;
  /// Non-blank data events handled before the end, [DONE] excluded, a malformed one included:
  /// the N of "chunk N" in the malformed reason.
  int64_t chunks() const { return chunks_; }
  /// When the state left kStreaming: [DONE], an error, a malformed chunk, or OnEnd.
  std::optional<int64_t> end_ns() const { return end_ns_; }

 private:
  void End(State state, std::string reason, int64_t now_ns);

  State state_ = State::kStreaming;
  std::string error_;
  std::string content_;
  std::string reasoning_;
  std::vector<ToolCallState> tool_calls_;
  std::string finish_reason_;
  StreamUsage usage_;
  std::optional<int64_t> first_token_ns_;
  std::optional<int64_t> first_answer_ns_;
  std::vector<int64_t> content_times_ns_;
  int64_t chunks_ = 0;
  std::optional<int64_t> end_ns_;
  bool invalid_utf8_ = false;
};

}  // namespace stagegate::http
