#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "http/transport.h"

namespace stagegate::http {

/// What a scripted server answers to one request: when each part arrives, in ns after the
/// request was sent, and how the transfer ends. A response whose end comes after the request's
/// total timeout ends at the timeout instead, with curl's code for it.
struct ScriptedResponse {
  struct Chunk {
    int64_t at_ns = 0;
    std::string bytes;
  };
  long status = 200;
  std::vector<std::string> headers;  // "Name: value", delivered with the status line
  int64_t headers_at_ns = 0;
  std::vector<Chunk> body;  // in time order
  /// When the transfer ends: -1 with the last chunk (or the headers).
  int64_t end_at_ns = -1;
  /// How it ends. A code other than CURLE_OK before any header (CURLE_COULDNT_CONNECT,
  /// CURLE_OPERATION_TIMEDOUT) is a transfer that never got a response.
  CURLcode end = CURLE_OK;
  bool no_response = false;  // nothing arrives: only the end, at end_at_ns
  /// Never ends on its own (a server that hangs); only a timeout or a cancel ends it.
  bool hang = false;

  /// A transfer that fails with `code` at `at_ns`, before any response.
  static ScriptedResponse Failure(CURLcode code, int64_t at_ns);
  /// An OpenAI chat completion streamed as SSE: headers at `ttft_ns`, each of `tokens` as one
  /// chunk, the first with the headers and each next `itl_ns` later, then a usage chunk and
  /// [DONE] with the last token.
  static ScriptedResponse StreamedAnswer(const std::vector<std::string>& tokens, int64_t ttft_ns,
                                         int64_t itl_ns, int64_t prompt_tokens = 10);
  /// A whole (non-streamed) OpenAI chat completion with `content`, at `at_ns`.
  static ScriptedResponse WholeAnswer(const std::string& content, int64_t at_ns);
  /// An error status with a small JSON body, at `at_ns`; `headers` such as "Retry-After: 2".
  static ScriptedResponse Error(long status, int64_t at_ns, std::vector<std::string> headers = {});
};

/// A request as the script sees it.
struct ScriptedRequest {
  std::string url;
  std::string body;
  int64_t sent_ns = 0;               // on the transport's clock
  std::vector<std::string> headers;  // "Name: value", as the request carries them
};

/// The value of header `name` (any case) in `request`, or "" when it has none.
std::string HeaderOf(const ScriptedRequest& request, std::string_view name);

/// Decides the response to each request, when it is sent. Called on the worker's thread.
using Script = std::function<ScriptedResponse(const ScriptedRequest&)>;

/// A transport with no socket and no curl transfer: each request added is answered by `script`,
/// and its parts are delivered to the transfer (Transfer::OnStatus, OnHeader, OnBody, OnDone) at
/// their times on a FakeClock, which WaitAndDrive moves forward to the next thing due (a part, a
/// timeout, or the caller's deadline) instead of sleeping. A phase of any length runs in the
/// time its records take to compute, and every time in them is exact.
///
/// For one thread, as MultiTransport; a clock shared by several transports on several threads
/// moves as fast as the fastest, so a test that asserts exact times runs one worker.
class ScriptedTransport : public Transport {
 public:
  ScriptedTransport(FakeClock& clock, Script script);
  /// Transports for a worker each, on one clock and one script (which must then be
  /// thread-safe if the phase has several workers).
  static TransportFactory Factory(FakeClock& clock, Script script);

  bool Add(Transfer* transfer) override;
  void Remove(Transfer* transfer) override;
  void WaitAndDrive(int64_t deadline_ns, int max_wait_ms) override;
  void Wakeup() override {}

  /// Requests answered so far.
  int64_t requests() const { return requests_; }

 private:
  struct Playing {
    ScriptedResponse response;
    int64_t sent_ns = 0;
    int64_t timeout_at_ns = -1;  // -1: none
    bool headers_done = false;
    size_t next_chunk = 0;
    uint64_t order = 0;  // ties are delivered in the order the requests were added
  };
  /// When the next part of `playing`'s response is due, its timeout aside.
  static int64_t PartNs(const Playing& playing);
  /// When `playing` next has something to deliver: a part, or its timeout.
  static int64_t NextEventNs(const Playing& playing);
  /// Delivers what is due at `now_ns` to `transfer`; true when it ended.
  static bool Deliver(Transfer* transfer, Playing& playing, int64_t now_ns);

  FakeClock& clock_;
  Script script_;
  std::map<Transfer*, Playing> playing_;
  uint64_t added_ = 0;
  int64_t requests_ = 0;
};

}  // namespace stagegate::http
