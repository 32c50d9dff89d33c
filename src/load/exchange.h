#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/redact.h"
#include "http/curl_handles.h"
#include "http/openai_request.h"
#include "http/openai_stream.h"
#include "http/sse_parser.h"
#include "http/transport.h"
#include "load/receive_stats.h"
#include "load/request_record.h"
#include "load/response_budget.h"
#include "tokenize/tokenizer.h"

namespace stagegate::load {

/// What to send for one position of a schedule. Built once per request by the caller's request
/// source; the exchange keeps a reference until the request ends.
struct RequestSpec {
  std::string url;
  std::string body;
  std::vector<std::string> headers;  // "Name: value"; may carry a secret: never recorded
  bool stream = true;
  std::string task_id;  // "" for a synthetic prompt
  std::string persona;
  std::optional<int64_t> requested_input_tokens;
  std::optional<int64_t> requested_output_tokens;
  // Secrets a server could echo into the record (API keys, every persona token of the run): the
  // record's text is redacted of these, and of the request's own credentials (its Authorization
  // header, its URL's password), before it leaves the exchange. Null: only the request's own.
  // Must outlive the request.
  const Redactor* redactor = nullptr;
  /// The model's tokenizer, when given: an answer without usage has its output tokens counted
  /// with it (answer and reasoning, token_source "tokenizer") rather than as stream events, and
  /// a designed input length is the tokenizer's ("tokenizer"). Must outlive the request.
  const tokenize::Tokenizer* tokenizer = nullptr;
  /// A plain HTTP JSON API (not streamed): the JSON pointer of the answer's text in the reply.
  /// "" for the OpenAI API.
  std::string answer_at;
};

/// The three timeouts, each measured from the actual send. 0 turns one off.
struct Timeouts {
  int64_t connect_ms = 2000;
  int64_t first_token_ms = 15000;
  int64_t total_ms = 60000;
};

/// One request in flight on a worker: a reusable curl easy handle (kept across requests, so its
/// buffers are not re-allocated), the SSE parser and the stream decoder, and the record being
/// filled. Every timestamp is taken on arrival of the bytes, in ns from the run's origin: the
/// kernel's receive stamp of the read that brought them when there is one (ReceiveTimes), else
/// the clock when the read returned.
///
/// Not thread-safe: an exchange lives on its worker's thread. The spec and the clock passed to
/// Begin must outlive the request.
class Exchange : public http::Transfer {
 public:
  /// Where an ended exchange reports itself: the worker's list of finished exchanges. With
  /// `receive_stats`, its connections ask the kernel for receive stamps, every read is counted
  /// there, and `receive_times` says whose stamp a read's bytes get; without, the clock's. Stamps
  /// from the kernel are on CLOCK_MONOTONIC only through the steady clock: pass receive_stats
  /// only with the steady clock. With `budget` (shared with the phase's other exchanges, and
  /// outliving this one), what the response keeps is taken from it, given back when the request
  /// ends; a response the budget cannot hold is cut and ends in kMemoryLimit.
  explicit Exchange(std::vector<Exchange*>* finished, ReceiveStats* receive_stats = nullptr,
                    ReceiveTimes receive_times = ReceiveTimes::kKernel,
                    ResponseBudget* budget = nullptr);

  /// Sets up the request. `record` arrives with the schedule's fields (sequence, intended time,
  /// warmup, ...); sent_ns is taken here, so call this right before MultiTransport::Add.
  void Begin(const RequestSpec& spec, RequestRecord record, const http::TraceContext& trace,
             const Timeouts& timeouts, const Clock& clock, int64_t origin_ns);

  CURL* easy() override { return easy_.get(); }
  void OnDone(CURLcode code) override;
  void OnSocket(int socket) override { socket_ = socket; }
  Request request() const override;
  void OnSent() override { OnRequestReady(this, nullptr, nullptr, 0, 0); }
  void OnStatus(long status) override { given_status_ = status; }
  size_t OnHeader(std::string_view line) override {
    return OnHeaderData(const_cast<char*>(line.data()), 1, line.size(), this);
  }
  size_t OnBody(std::string_view bytes) override {
    return OnBodyData(const_cast<char*>(bytes.data()), 1, bytes.size(), this);
  }

  /// Ends the request from outside (after MultiTransport::Remove): a first-token timeout or a
  /// cancel. Keeps everything received so far.
  void Abort(Outcome outcome, const std::string& message);

  /// Still waiting for the first token at `now_ns` (run time) past the first-token timeout.
  bool FirstTokenOverdue(int64_t now_ns) const;

  /// The finished record. Call once, after OnDone or Abort.
  RequestRecord TakeRecord() { return std::move(record_); }

  /// The worker's bookkeeping: this exchange's index in its in-flight list.
  size_t in_flight_slot = 0;

 private:
  static int OnRequestReady(void* self, char* connection_ip, char* local_ip, int remote_port,
                            int local_port);
  static size_t OnHeaderData(char* data, size_t size, size_t count, void* self);
  static size_t OnBodyData(char* data, size_t size, size_t count, void* self);
  static int OnSocketOpened(void* self, curl_socket_t socket, curlsocktype purpose);
  int64_t Now() const { return clock_->NowNs() - origin_ns_; }
  /// When the bytes of the read being delivered arrived (see the class comment).
  int64_t ArrivalNs();
  void Finish(int64_t end_ns);
  void ClassifyTransportFailure(CURLcode code);
  /// The response's status: the transport's (OnStatus) when it gave one, else curl's.
  long ResponseStatus();
  void ClassifyHttpStatus();
  void DecodeWholeBody();
  /// A plain JSON API's reply: the answer is the string at the spec's answer_at.
  void DecodePlainBody();
  void TakeStreamResults();
  /// Makes the bytes taken from the budget cover `bytes` kept; false when the budget is spent.
  bool Cover(size_t bytes);

  std::vector<Exchange*>* finished_;
  ReceiveStats* receive_stats_;
  ReceiveTimes receive_times_;
  ResponseBudget* budget_;
  int64_t granted_ = 0;  // taken from budget_ by this request
  // The connection's socket, as the transport last named it. Kept from one request to the next:
  // curl names a socket again only when it is new to this easy handle, so a request that reuses
  // its predecessor's connection is not told.
  int socket_ = -1;
  int64_t last_stamp_realtime_ns_ = -1;  // the latest kernel stamp used by this request
  int64_t last_arrival_ns_ = 0;          // ... and the run time it gave
  http::EasyHandle easy_;
  http::HeaderList headers_;
  char error_buffer_[CURL_ERROR_SIZE] = {};
  const RequestSpec* spec_ = nullptr;
  const Clock* clock_ = nullptr;
  int64_t origin_ns_ = 0;
  Timeouts timeouts_;
  RequestRecord record_;
  http::SseParser sse_;
  http::OpenAiStreamDecoder decoder_;
  std::string body_;                     // a non-streamed or error body, bounded
  std::optional<int64_t> last_byte_ns_;  // e2e ends at the last body byte, not at curl's notice
  size_t stream_bytes_ = 0;
  long status_ = 0;
  std::optional<long> given_status_;  // from OnStatus: a transport without curl
  bool status_read_ = false;
  bool streaming_body_ = false;  // 2xx and asked for a stream: bytes go to the SSE parser
  bool body_truncated_ = false;
  bool over_budget_ = false;  // cut because budget_ could not cover what the response kept
};

}  // namespace stagegate::load
