#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagegate::load {

/// How a request ended. Failures are outcomes, recorded as data, never exceptions.
enum class Outcome {
  kOk,
  kHttpError,       // a status other than the ones below; the status is kept
  kShed,            // 429 or 503; Retry-After is kept
  kTimeout,         // connect, first token or total; which one is in error_message
  kTransportError,  // curl's code and message are kept, never disguised as an HTTP status
  kMalformedStream,
  kCancelled,
  kDenied,  // 401 or 403
  /// Cut by the client: the responses in flight held the phase's response-memory limit
  /// (ResponseBudget). Says nothing of the server; the text received so far is kept.
  kMemoryLimit,
};

std::string_view OutcomeName(Outcome outcome);
std::optional<Outcome> OutcomeFromName(std::string_view name);

/// Everything measured about one request. Times are nanoseconds from the run start on the
/// steady clock; an absent time means that moment never came.
struct RequestRecord {
  int64_t id = 0;  // assigned by the store
  std::string run_id;
  int64_t phase_id = 0;
  int64_t sequence = 0;  // position in the phase's schedule
  std::string task_id;   // "" for a synthetic prompt
  std::string persona;
  int64_t intended_ns = 0;
  std::optional<int64_t> sent_ns;
  std::optional<int64_t> first_byte_ns;
  std::optional<int64_t> first_token_ns;
  std::optional<int64_t> first_answer_ns;
  std::optional<int64_t> end_ns;
  Outcome outcome = Outcome::kOk;
  std::optional<int64_t> http_status;
  std::optional<int64_t> curl_code;
  std::string error_message;
  std::optional<double> retry_after_s;
  std::optional<int64_t> input_tokens;
  std::optional<int64_t> output_tokens;
  std::string token_source;  // "usage" or "counted"
  std::string finish_reason;
  std::string answer_text;
  std::string trace_id;  // the W3C trace id sent in `traceparent`

  // Added with schema 3.
  int64_t worker = 0;                              // the worker thread that sent it
  bool warmup = false;                             // excluded from statistics
  bool streamed = true;                            // asked for a streamed response
  std::optional<int64_t> queue_ns;                 // waited this long for a free slot under a cap
  std::optional<int64_t> requested_input_tokens;   // a synthetic prompt's designed length
  std::optional<int64_t> requested_output_tokens;  // max_tokens asked for
  std::string input_token_source;                  // "usage", "requested" or ""
  std::string reasoning_text;
  std::string tool_calls_json = "[]";   // [{"index","id","type","name","arguments"}]
  std::string server_timing;            // the Server-Timing header as received
  std::vector<int64_t> chunk_times_ns;  // each token event (content, reasoning, tool arguments)

  // Added with schema 8.
  /// The server sent bytes that are not UTF-8: in text kept here (answer, reasoning, error,
  /// finish reason, Server-Timing), which holds them replaced by U+FFFD (KeepValidUtf8), or in a
  /// stream chunk that was refused for it.
  bool invalid_utf8 = false;
  // Added with schema 9.
  /// Of the input tokens, how many the server took from its prefix cache
  /// (usage.prompt_tokens_details.cached_tokens), when it said.
  std::optional<int64_t> cached_tokens;
  /// A turn of a multi-turn session (LoadOptions::sessions): which session, which turn from 0.
  std::optional<int64_t> session, turn;
};

/// Replaces every ill-formed UTF-8 part of the record's text from the server by U+FFFD, and sets
/// invalid_utf8 when there was one, so that everything written from the record (requests.jsonl,
/// the store, reports) is valid UTF-8 and still says that the server's was not.
void KeepValidUtf8(RequestRecord& record);

}  // namespace stagegate::load
