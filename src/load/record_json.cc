#include "load/record_json.h"

#include <charconv>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "http/openai_request.h"

namespace stagegate::load {
namespace {

std::optional<double> GapMs(const std::optional<int64_t>& from, const std::optional<int64_t>& to) {
  if (!from || !to) return std::nullopt;
  return static_cast<double>(*to - *from) / 1e6;
}

// Appends `,"key":` (or `"key":` for the first member, when `first` is set).
void Key(std::string& out, const char* key, bool first = false) {
  if (!first) out += ',';
  out += '"';
  out += key;
  out += "\":";
}

// Tool calls are kept as JSON text the engine wrote; anything else (an older store) becomes [].
void AppendToolCalls(std::string& out, const std::string& text) {
  if (nlohmann::json::accept(text))
    out += text;
  else
    out += "[]";
}

void AppendServerTiming(std::string& out, const std::string& header) {
  out += '[';
  bool first = true;
  for (const http::ServerTiming& entry : http::ParseServerTiming(header)) {
    if (!first) out += ',';
    first = false;
    out += '{';
    Key(out, "name", true);
    AppendJsonString(out, entry.name);
    Key(out, "dur_ms");
    AppendJsonNumber(out, entry.duration_ms);
    if (!entry.description.empty()) {
      Key(out, "desc");
      AppendJsonString(out, entry.description);
    }
    out += '}';
  }
  out += ']';
}

// Appends the members that place a record: its run, phase, sequence, session and worker.
void AppendPlace(const RequestRecord& r, std::string& out) {
  Key(out, "run_id", true);
  AppendJsonString(out, r.run_id);
  Key(out, "phase_id");
  AppendJsonNumber(out, std::optional<int64_t>(r.phase_id));
  Key(out, "sequence");
  AppendJsonNumber(out, std::optional<int64_t>(r.sequence));
  Key(out, "session");
  AppendJsonNumber(out, r.session);
  Key(out, "turn");
  AppendJsonNumber(out, r.turn);
  Key(out, "worker");
  AppendJsonNumber(out, std::optional<int64_t>(r.worker));
  Key(out, "warmup");
  out += r.warmup ? "true" : "false";
}

// Appends the "input" object: what the request asked, the members it has.
void AppendInput(const RequestRecord& r, std::string& out) {
  out += '{';
  bool first = true;
  if (!r.task_id.empty()) {
    Key(out, "task_id", first);
    AppendJsonString(out, r.task_id);
    first = false;
  }
  if (!r.persona.empty()) {
    Key(out, "persona", first);
    AppendJsonString(out, r.persona);
    first = false;
  }
  if (r.requested_input_tokens) {
    Key(out, "synthetic_input_tokens", first);
    AppendJsonNumber(out, r.requested_input_tokens);
    first = false;
  }
  Key(out, "requested_output_tokens", first);
  AppendJsonNumber(out, r.requested_output_tokens);
  out += '}';
}

// Appends the "times_ns" object: the raw moments of the request.
void AppendTimes(const RequestRecord& r, std::string& out) {
  out += '{';
  Key(out, "intended", true);
  AppendJsonNumber(out, std::optional<int64_t>(r.intended_ns));
  Key(out, "sent");
  AppendJsonNumber(out, r.sent_ns);
  Key(out, "first_byte");
  AppendJsonNumber(out, r.first_byte_ns);
  Key(out, "first_token");
  AppendJsonNumber(out, r.first_token_ns);
  Key(out, "first_answer_token");
  AppendJsonNumber(out, r.first_answer_ns);
  Key(out, "end");
  AppendJsonNumber(out, r.end_ns);
  out += '}';
}

// Appends the "latency_ms" object: the latencies derived from those moments.
void AppendLatencies(const RequestRecord& r, std::string& out) {
  std::optional<int64_t> second_token;
  if (r.chunk_times_ns.size() >= 2) second_token = r.chunk_times_ns[1];
  out += '{';
  Key(out, "schedule_lag", true);
  AppendJsonNumber(out, GapMs(r.intended_ns, r.sent_ns));
  Key(out, "queue");
  AppendJsonNumber(out, r.queue_ns ? std::optional<double>(static_cast<double>(*r.queue_ns) / 1e6)
                                   : std::nullopt);
  Key(out, "ttft");
  AppendJsonNumber(out, GapMs(r.sent_ns, r.first_token_ns));
  Key(out, "ttst");
  AppendJsonNumber(out, GapMs(r.first_token_ns, second_token));
  Key(out, "e2e");
  AppendJsonNumber(out, GapMs(r.sent_ns, r.end_ns));
  Key(out, "corrected");
  AppendJsonNumber(out, GapMs(r.intended_ns, r.end_ns));
  out += '}';
}

// Appends how the request ended: its outcome, HTTP status, curl code, error and Retry-After.
void AppendOutcome(const RequestRecord& r, std::string& out) {
  Key(out, "outcome");
  AppendJsonString(out, OutcomeName(r.outcome));
  Key(out, "http_status");
  AppendJsonNumber(out, r.http_status);
  Key(out, "curl_code");
  AppendJsonNumber(out, r.curl_code);
  Key(out, "error");
  AppendJsonString(out, r.error_message);
  Key(out, "invalid_utf8");
  out += r.invalid_utf8 ? "true" : "false";
  Key(out, "retry_after_s");
  AppendJsonNumber(out, r.retry_after_s);
}

// Appends the "tokens" object: tokens in and out, and where each count came from.
void AppendTokens(const RequestRecord& r, std::string& out) {
  out += '{';
  Key(out, "input", true);
  AppendJsonNumber(out, r.input_tokens);
  Key(out, "input_source");
  AppendJsonString(out, r.input_token_source);
  Key(out, "cached");
  AppendJsonNumber(out, r.cached_tokens);
  Key(out, "output");
  AppendJsonNumber(out, r.output_tokens);
  Key(out, "output_source");
  AppendJsonString(out, r.token_source);
  out += '}';
}

// Appends the answer: its finish reason, text, reasoning, tool calls and Server-Timing entries.
void AppendAnswer(const RequestRecord& r, std::string& out) {
  Key(out, "finish_reason");
  AppendJsonString(out, r.finish_reason);
  Key(out, "answer");
  AppendJsonString(out, r.answer_text);
  Key(out, "reasoning");
  AppendJsonString(out, r.reasoning_text);
  Key(out, "tool_calls");
  AppendToolCalls(out, r.tool_calls_json);
  Key(out, "server_timing");
  AppendServerTiming(out, r.server_timing);
}

// Appends the chunk times as a JSON array of integers.
void AppendChunkTimes(const std::vector<int64_t>& times, std::string& out) {
  // Written in place: a line holds a time for every chunk, and a run millions of lines.
  const size_t start = out.size();
  out.resize(start + 1 + times.size() * 21);  // '[' and, a time, ',' and 20 digits
  char* cursor = out.data() + start;
  *cursor++ = '[';
  for (size_t i = 0; i < times.size(); ++i) {
    if (i > 0) *cursor++ = ',';
    cursor = std::to_chars(cursor, cursor + 20, times[i]).ptr;
  }
  out.resize(static_cast<size_t>(cursor - out.data()));
  out += ']';
}

}  // namespace

void AppendRecordLine(const RequestRecord& r, std::string& out) {
  out += '{';
  AppendPlace(r, out);
  Key(out, "input");
  AppendInput(r, out);
  Key(out, "stream");
  out += r.streamed ? "true" : "false";
  Key(out, "trace_id");
  AppendJsonString(out, r.trace_id);
  Key(out, "times_ns");
  AppendTimes(r, out);
  Key(out, "latency_ms");
  AppendLatencies(r, out);
  AppendOutcome(r, out);
  Key(out, "tokens");
  AppendTokens(r, out);
  AppendAnswer(r, out);
  Key(out, "chunk_times_ns");
  AppendChunkTimes(r.chunk_times_ns, out);
  out += "}\n";
}

Status WriteRequestsJsonl(const std::string& path, std::span<const RequestRecord> records) {
  // Line by line, not as one string: a long run has millions of records.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    std::string lines;
    lines.reserve(2 << 20);
    for (const RequestRecord& record : records) {
      AppendRecordLine(record, lines);
      if (lines.size() > (1 << 20)) {
        out << lines;
        lines.clear();
      }
    }
    out << lines;
    if (!out.flush()) return Status::IoError(temporary + ": write failed");
  }
  std::error_code renamed;
  std::filesystem::rename(temporary, path, renamed);
  if (renamed) return Status::IoError(path + ": " + renamed.message());
  return Status::Ok();
}

}  // namespace stagegate::load
