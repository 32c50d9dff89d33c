#include "load/record_json.h"

#include "http/openai_request.h"

namespace stagegate::load {
namespace {

using json = nlohmann::json;

json Optional(const std::optional<int64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

json Gap(const std::optional<int64_t>& from, const std::optional<int64_t>& to) {
  if (!from || !to) return nullptr;
  return static_cast<double>(*to - *from) / 1e6;
}

}  // namespace

json RecordToJson(const RequestRecord& r) {
  json tool_calls = json::parse(r.tool_calls_json, nullptr, false);
  if (tool_calls.is_discarded()) tool_calls = json::array();
  json server_timing = json::array();
  for (const http::ServerTiming& entry : http::ParseServerTiming(r.server_timing)) {
    json item = {{"name", entry.name}};
    item["dur_ms"] = entry.duration_ms ? json(*entry.duration_ms) : json(nullptr);
    if (!entry.description.empty()) item["desc"] = entry.description;
    server_timing.push_back(std::move(item));
  }
  json input = json::object();
  if (!r.task_id.empty()) input["task_id"] = r.task_id;
  if (!r.persona.empty()) input["persona"] = r.persona;
  if (r.requested_input_tokens) input["synthetic_input_tokens"] = *r.requested_input_tokens;
  input["requested_output_tokens"] = Optional(r.requested_output_tokens);

  std::optional<int64_t> second_token;
  if (r.chunk_times_ns.size() >= 2) second_token = r.chunk_times_ns[1];
  json out = {
      {"run_id", r.run_id},
      {"phase_id", r.phase_id},
      {"sequence", r.sequence},
      {"worker", r.worker},
      {"warmup", r.warmup},
      {"input", input},
      {"stream", r.streamed},
      {"trace_id", r.trace_id},
      {"times_ns",
       {{"intended", r.intended_ns},
        {"sent", Optional(r.sent_ns)},
        {"first_byte", Optional(r.first_byte_ns)},
        {"first_token", Optional(r.first_token_ns)},
        {"first_answer_token", Optional(r.first_answer_ns)},
        {"end", Optional(r.end_ns)}}},
      {"latency_ms",
       {{"schedule_lag", Gap(r.intended_ns, r.sent_ns)},
        {"queue", r.queue_ns ? json(static_cast<double>(*r.queue_ns) / 1e6) : json(nullptr)},
        {"ttft", Gap(r.sent_ns, r.first_token_ns)},
        {"ttst", Gap(r.first_token_ns, second_token)},
        {"e2e", Gap(r.sent_ns, r.end_ns)},
        {"corrected", Gap(r.intended_ns, r.end_ns)}}},
      {"outcome", OutcomeName(r.outcome)},
      {"http_status", Optional(r.http_status)},
      {"curl_code", Optional(r.curl_code)},
      {"error", r.error_message},
      {"retry_after_s", r.retry_after_s ? json(*r.retry_after_s) : json(nullptr)},
      {"tokens",
       {{"input", Optional(r.input_tokens)},
        {"input_source", r.input_token_source},
        {"output", Optional(r.output_tokens)},
        {"output_source", r.token_source}}},
      {"finish_reason", r.finish_reason},
      {"answer", r.answer_text},
      {"reasoning", r.reasoning_text},
      {"tool_calls", tool_calls},
      {"server_timing", server_timing},
      {"chunk_times_ns", r.chunk_times_ns},
  };
  return out;
}

}  // namespace stagegate::load
