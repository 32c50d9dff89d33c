#include "load/exchange.h"

#include <strings.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/strings.h"
#include "http/openai_answer.h"
#include "http/receive_time.h"

namespace stagegate::load {
namespace {

using json = nlohmann::json;

// A non-streamed answer or an error body larger than this is cut; an error body's first bytes
// are what a record needs.
constexpr size_t kMaxBodyBytes = 16 << 20;
constexpr size_t kMaxErrorBodyBytes = 4096;
// A stream is cut past this many bytes (an endless line or a runaway answer must not take the
// client's memory).
constexpr size_t kMaxStreamBytes = 64 << 20;

bool HeaderIs(std::string_view line, std::string_view name) {
  return line.size() > name.size() && line[name.size()] == ':' &&
         strncasecmp(line.data(), name.data(), name.size()) == 0;
}

std::string_view HeaderValue(std::string_view line) {
  line.remove_prefix(line.find(':') + 1);
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
    line.remove_prefix(1);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n' || line.back() == ' '))
    line.remove_suffix(1);
  return line;
}

std::string ToolCallsJson(const std::vector<http::ToolCallState>& calls) {
  json out = json::array();
  for (const http::ToolCallState& call : calls)
    out.push_back({{"index", call.index},
                   {"id", call.id},
                   {"type", call.type},
                   {"name", call.name},
                   {"arguments", call.arguments}});
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Takes every secret a server could echo out of the record's text: the run's (spec.redactor)
// and the request's own credentials. The one place where response text enters a record, so the
// store, requests.jsonl, run.json, reports, exports and triage never see them.
void Redact(const RequestSpec& spec, RequestRecord& record) {
  Redactor own;
  own.AddAll(UrlSecrets(spec.url));
  for (const std::string& header : spec.headers)
    own.Add(HeaderCredential(header));
  for (const Redactor* redactor : {spec.redactor, static_cast<const Redactor*>(&own)}) {
    if (redactor == nullptr || redactor->empty()) continue;
    for (std::string* text :
         {&record.error_message, &record.answer_text, &record.reasoning_text,
          &record.tool_calls_json, &record.finish_reason, &record.server_timing})
      *text = redactor->Apply(std::move(*text));
  }
}

}  // namespace

Exchange::Exchange(std::vector<Exchange*>* finished, ReceiveStats* receive_stats,
                   ReceiveTimes receive_times, ResponseBudget* budget)
    : finished_(finished),
      receive_stats_(receive_stats),
      receive_times_(receive_times),
      budget_(budget),
      easy_(curl_easy_init()) {}

void Exchange::Begin(const RequestSpec& spec, RequestRecord record, const http::TraceContext& trace,
                     const Timeouts& timeouts, const Clock& clock, int64_t origin_ns) {
  spec_ = &spec;
  clock_ = &clock;
  origin_ns_ = origin_ns;
  timeouts_ = timeouts;
  record_ = std::move(record);
  record_.task_id = spec.task_id;
  record_.persona = spec.persona;
  record_.streamed = spec.stream;
  record_.requested_input_tokens = spec.requested_input_tokens;
  record_.requested_output_tokens = spec.requested_output_tokens;
  record_.trace_id = trace.trace_id;
  sse_.Reset();
  decoder_ = http::OpenAiStreamDecoder();
  body_.clear();
  last_byte_ns_.reset();
  last_arrival_ns_ = 0;
  last_stamp_realtime_ns_ = -1;
  stream_bytes_ = 0;
  status_ = 0;
  given_status_.reset();
  status_read_ = false;
  streaming_body_ = false;
  body_truncated_ = false;
  over_budget_ = false;
  error_buffer_[0] = '\0';

  std::vector<std::string> headers = spec.headers;
  headers.push_back("Content-Type: application/json");
  headers.push_back(spec.stream ? "Accept: text/event-stream" : "Accept: application/json");
  headers.push_back("Expect:");  // never wait for 100-continue before a large body
  headers.push_back(trace.Header());
  headers_ = http::MakeHeaderList(headers);

  CURL* e = easy_.get();
  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, spec.url.c_str());
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, spec.body.data());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(spec.body.size()));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers_.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Exchange::OnHeaderData);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Exchange::OnBodyData);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error_buffer_);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts.connect_ms));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeouts.total_ms));
  curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &Exchange::OnRequestReady);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, this);
  if (receive_stats_ != nullptr) {
    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, &Exchange::OnSocketOpened);
    curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, this);
  }
  // Handed to curl now; OnRequestReady moves it to when the request is really written, so that
  // time spent connecting or waiting in the client is schedule lag, never server latency.
  record_.sent_ns = Now();
}

Exchange::Request Exchange::request() const {
  return {.url = spec_->url,
          .body = spec_->body,
          .total_timeout_ms = timeouts_.total_ms,
          .headers = spec_->headers};
}

long Exchange::ResponseStatus() {
  if (given_status_) return *given_status_;
  long status = 0;
  curl_easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &status);
  return status;
}

int Exchange::OnRequestReady(void* self_ptr, char*, char*, int, int) {
  auto* self = static_cast<Exchange*>(self_ptr);
  self->record_.sent_ns = self->Now();
  return CURL_PREREQFUNC_OK;
}

int Exchange::OnSocketOpened(void*, curl_socket_t socket, curlsocktype) {
  // A socket that refuses stays usable: its reads are stamped with the clock.
  http::EnableReceiveTimestamps(socket);
  return CURL_SOCKOPT_OK;
}

int64_t Exchange::ArrivalNs() {
  const int64_t now = Now();
  if (receive_stats_ == nullptr) return now;
  int64_t at = now;
  const std::optional<int64_t> stamp = http::LastReceiveRealtimeNs(socket_);
  // One read's bytes may come in several deliveries: they keep the time the first one got.
  int64_t arrived = now + 1;  // none
  if (stamp && *stamp == last_stamp_realtime_ns_)
    arrived = last_arrival_ns_;
  else if (stamp)
    arrived = http::RealtimeToSteadyNs(*stamp, now + origin_ns_) - origin_ns_;
  // Bytes arrive after the request went out and before they are read: a stamp outside that
  // means the wall clock was set in between.
  if (arrived <= now && arrived >= record_.sent_ns.value_or(0)) {
    receive_stats_->AddReadDelay(now - arrived);
    last_stamp_realtime_ns_ = *stamp;
    last_arrival_ns_ = arrived;
    if (receive_times_ == ReceiveTimes::kKernel) at = arrived;
  } else {
    ++receive_stats_->client_stamped;
  }
  // A read stamped by the clock may be followed by one the kernel stamped a little earlier.
  return std::max({at, last_byte_ns_.value_or(at), record_.first_byte_ns.value_or(at)});
}

size_t Exchange::OnHeaderData(char* data, size_t size, size_t count, void* self_ptr) {
  auto* self = static_cast<Exchange*>(self_ptr);
  const size_t bytes = size * count;
  if (!self->record_.first_byte_ns) self->record_.first_byte_ns = self->ArrivalNs();
  const std::string_view line(data, bytes);
  if (HeaderIs(line, "retry-after")) {
    self->record_.retry_after_s = http::ParseRetryAfter(HeaderValue(line));
  } else if (HeaderIs(line, "server-timing")) {
    if (!self->record_.server_timing.empty()) self->record_.server_timing += ", ";
    self->record_.server_timing += HeaderValue(line);
  } else if (line.rfind("HTTP/", 0) == 0) {
    // A new header block (after a 1xx): what was gathered belonged to the interim response.
    self->record_.server_timing.clear();
    self->record_.retry_after_s.reset();
  }
  return bytes;
}

size_t Exchange::OnBodyData(char* data, size_t size, size_t count, void* self_ptr) {
  auto* self = static_cast<Exchange*>(self_ptr);
  const size_t bytes = size * count;
  const int64_t now = self->ArrivalNs();
  if (!self->record_.first_byte_ns) self->record_.first_byte_ns = now;
  self->last_byte_ns_ = now;
  if (!self->status_read_) {
    self->status_ = self->ResponseStatus();
    self->status_read_ = true;
    self->streaming_body_ = self->spec_->stream && self->status_ >= 200 && self->status_ < 300;
  }
  if (self->streaming_body_) {
    self->stream_bytes_ += bytes;
    if (self->stream_bytes_ > kMaxStreamBytes) {
      self->body_truncated_ = true;
      return 0;  // curl ends the transfer with a write error
    }
    // The new bytes can add at most themselves to what the parser and the decoder keep.
    if (!self->Cover(self->sse_.pending_bytes() + self->decoder_.kept_bytes() + bytes)) {
      self->stream_bytes_ -= bytes;  // not read
      self->over_budget_ = true;
      return 0;
    }
    self->sse_.FeedEach(std::string_view(data, bytes), [self, now](const http::SseEvent& event) {
      self->decoder_.OnEvent(event, now);
    });
    return bytes;
  }
  const bool ok_status = self->status_ >= 200 && self->status_ < 300;
  if (ok_status && !self->Cover(self->body_.size() + bytes)) {
    self->over_budget_ = true;
    return 0;
  }
  const size_t limit = ok_status ? kMaxBodyBytes : kMaxErrorBodyBytes;
  if (self->body_.size() + bytes > limit) {
    self->body_.append(data, limit - self->body_.size());
    self->body_truncated_ = true;
    // An answer we cannot hold ends the transfer (curl reports a write error); an error body
    // only needs its start, so the rest is read and dropped.
    return ok_status ? 0 : bytes;
  }
  self->body_.append(data, bytes);
  return bytes;
}

bool Exchange::Cover(size_t bytes) {
  if (budget_ == nullptr || static_cast<int64_t>(bytes) <= granted_) return true;
  const int64_t grant = ResponseBudget::kGrantBytes;
  const int64_t more = (static_cast<int64_t>(bytes) - granted_ + grant - 1) / grant * grant;
  if (!budget_->TryTake(more)) return false;
  granted_ += more;
  return true;
}

bool Exchange::FirstTokenOverdue(int64_t now_ns) const {
  if (timeouts_.first_token_ms <= 0 || !record_.sent_ns) return false;
  if (status_read_ && !streaming_body_) return false;  // no tokens to wait for
  if (decoder_.first_token_ns()) return false;
  return now_ns - *record_.sent_ns > timeouts_.first_token_ms * 1'000'000;
}

void Exchange::Abort(Outcome outcome, const std::string& message) {
  const int64_t now = Now();
  TakeStreamResults();
  record_.outcome = outcome;
  record_.error_message = message;
  if (status_read_) record_.http_status = status_;
  Finish(now);
}

void Exchange::OnDone(CURLcode code) {
  const int64_t now = Now();
  if (status_read_ || code == CURLE_OK) {
    if (!status_read_) status_ = ResponseStatus();
    record_.http_status = status_;
  }
  if (code == CURLE_OK && streaming_body_) decoder_.OnEnd(now);
  TakeStreamResults();
  if (code == CURLE_PARTIAL_FILE && streaming_body_ &&
      decoder_.state() == http::OpenAiStreamDecoder::State::kStreaming) {
    // The server closed a stream before both [DONE] and the end of its body: a truncated stream,
    // with curl's word for it kept.
    decoder_.OnEnd(now);
    record_.outcome = Outcome::kMalformedStream;
    record_.curl_code = static_cast<int64_t>(code);
    record_.error_message = decoder_.error() + " (curl " + std::to_string(code) + ": " +
                            (error_buffer_[0] != '\0' ? error_buffer_ : curl_easy_strerror(code)) +
                            ")";
  } else if (code == CURLE_WRITE_ERROR && over_budget_) {
    record_.outcome = Outcome::kMemoryLimit;
    record_.error_message = "cut after " + std::to_string(stream_bytes_ + body_.size()) +
                            " bytes: the responses in flight held the client's limit of " +
                            FormatNumber(static_cast<double>(budget_->limit()) / (1 << 20)) +
                            " MiB (--max-response-memory); the rest was not read";
  } else if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && body_truncated_)) {
    ClassifyTransportFailure(code);
  } else if (status_ < 200 || status_ >= 300) {
    ClassifyHttpStatus();
  } else if (body_truncated_) {
    record_.outcome = Outcome::kMalformedStream;
    const size_t limit = streaming_body_ ? kMaxStreamBytes : kMaxBodyBytes;
    record_.error_message = std::string(streaming_body_ ? "stream" : "response body") +
                            " larger than " + std::to_string(limit >> 20) +
                            " MiB; the rest was not read";
  } else if (streaming_body_) {
    switch (decoder_.state()) {
      case http::OpenAiStreamDecoder::State::kDone:
        record_.outcome = Outcome::kOk;
        break;
      case http::OpenAiStreamDecoder::State::kError:
        record_.outcome = Outcome::kHttpError;
        record_.error_message =
            "error in the stream after HTTP " + std::to_string(status_) + ": " + decoder_.error();
        break;
      default:
        record_.outcome = Outcome::kMalformedStream;
        record_.error_message = decoder_.error();
        break;
    }
  } else {
    DecodeWholeBody();
  }
  Finish(code == CURLE_OK && last_byte_ns_ ? *last_byte_ns_ : now);
}

void Exchange::ClassifyTransportFailure(CURLcode code) {
  record_.curl_code = static_cast<int64_t>(code);
  const std::string detail = error_buffer_[0] != '\0' ? error_buffer_ : curl_easy_strerror(code);
  if (code == CURLE_OPERATION_TIMEDOUT) {
    long connect_code = 0;
    curl_easy_getinfo(easy_.get(), CURLINFO_HTTP_CONNECTCODE, &connect_code);
    curl_off_t connect_us = 0;
    curl_easy_getinfo(easy_.get(), CURLINFO_CONNECT_TIME_T, &connect_us);
    record_.outcome = Outcome::kTimeout;
    record_.error_message =
        (connect_us == 0 ? "connect timeout after " + std::to_string(timeouts_.connect_ms)
                         : "total timeout after " + std::to_string(timeouts_.total_ms)) +
        " ms (curl " + std::to_string(code) + ": " + detail + ")";
    return;
  }
  record_.outcome = Outcome::kTransportError;
  record_.error_message = "curl " + std::to_string(code) + ": " + detail;
}

void Exchange::ClassifyHttpStatus() {
  if (status_ == 401 || status_ == 403) {
    record_.outcome = Outcome::kDenied;
  } else if (status_ == 429 || status_ == 503) {
    record_.outcome = Outcome::kShed;
  } else {
    record_.outcome = Outcome::kHttpError;
  }
  record_.error_message = "HTTP " + std::to_string(status_);
  if (!body_.empty()) record_.error_message += ": " + http::ErrorBodyMessage(body_);
}

void Exchange::DecodeWholeBody() {
  if (!spec_->answer_at.empty()) return DecodePlainBody();
  http::WholeAnswer answer = http::DecodeWholeAnswer(body_);
  if (answer.shape == http::WholeAnswer::Shape::kNotObject) {
    record_.outcome = Outcome::kMalformedStream;
    record_.error_message = "response body is not a JSON object";
    return;
  }
  if (answer.shape == http::WholeAnswer::Shape::kError) {
    record_.outcome = Outcome::kHttpError;
    record_.error_message =
        "error after HTTP " + std::to_string(status_) + ": " + http::ErrorBodyMessage(body_);
    return;
  }
  record_.answer_text = std::move(answer.content);
  record_.reasoning_text = std::move(answer.reasoning);
  if (!answer.tool_calls_json.empty()) record_.tool_calls_json = std::move(answer.tool_calls_json);
  record_.finish_reason = std::move(answer.finish_reason);
  if (answer.usage.prompt_tokens) {
    record_.input_tokens = answer.usage.prompt_tokens;
    record_.input_token_source = "usage";
  }
  if (answer.usage.completion_tokens) {
    record_.output_tokens = answer.usage.completion_tokens;
    record_.token_source = "usage";
  }
  record_.cached_tokens = answer.usage.cached_tokens;
  record_.outcome = Outcome::kOk;
}

void Exchange::DecodePlainBody() {
  const nlohmann::json reply = nlohmann::json::parse(body_, nullptr, false);
  record_.outcome = Outcome::kMalformedStream;
  if (reply.is_discarded()) {
    record_.error_message = "response body is not JSON";
    return;
  }
  const nlohmann::json* answer = nullptr;
  try {
    const nlohmann::json::json_pointer at(spec_->answer_at);
    if (reply.contains(at)) answer = &reply.at(at);
  } catch (const nlohmann::json::exception&) {
    // An array index that is not a number ("/data/x" in an array): no answer there.
  }
  if (answer == nullptr || !answer->is_string()) {
    record_.error_message =
        "the reply has no text at " + spec_->answer_at +
        (answer == nullptr ? "" : " (it holds " + std::string(answer->type_name()) + ")");
    return;
  }
  record_.answer_text = answer->get<std::string>();
  record_.outcome = Outcome::kOk;
}

// Copies what the stream decoder gathered into the record; also for failed and aborted streams,
// so the text kept so far is not lost.
void Exchange::TakeStreamResults() {
  if (!streaming_body_) return;
  record_.answer_text = decoder_.content();
  record_.reasoning_text = decoder_.reasoning();
  if (!decoder_.tool_calls().empty())
    record_.tool_calls_json = ToolCallsJson(decoder_.tool_calls());
  record_.finish_reason = decoder_.finish_reason();
  record_.first_token_ns = decoder_.first_token_ns();
  record_.first_answer_ns = decoder_.first_answer_ns();
  record_.chunk_times_ns = decoder_.content_times_ns();
  record_.invalid_utf8 = record_.invalid_utf8 || decoder_.invalid_utf8();
  const http::StreamUsage& usage = decoder_.usage();
  if (usage.prompt_tokens) {
    record_.input_tokens = usage.prompt_tokens;
    record_.input_token_source = "usage";
  }
  record_.cached_tokens = usage.cached_tokens;
  if (usage.completion_tokens) {
    record_.output_tokens = usage.completion_tokens;
    record_.token_source = "usage";
  } else {
    record_.output_tokens = decoder_.content_events();
    record_.token_source = "counted";
  }
}

void Exchange::Finish(int64_t end_ns) {
  record_.end_ns = end_ns;
  if (budget_ != nullptr) budget_->Give(granted_);
  granted_ = 0;
  KeepValidUtf8(record_);
  Redact(*spec_, record_);
  if (!record_.input_tokens && record_.requested_input_tokens) {
    record_.input_tokens = record_.requested_input_tokens;
    record_.input_token_source = spec_->tokenizer ? "tokenizer" : "requested";
  }
  // Counted once the end is stamped, so the counting is not in the latencies.
  if (spec_->tokenizer && record_.outcome == Outcome::kOk && record_.token_source != "usage") {
    record_.output_tokens = spec_->tokenizer->Count(record_.answer_text) +
                            spec_->tokenizer->Count(record_.reasoning_text);
    record_.token_source = "tokenizer";
  }
  headers_.reset();
  finished_->push_back(this);
}

}  // namespace stagegate::load
