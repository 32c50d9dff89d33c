// The load engine end to end: RunLoad against the reference application (in-process, loopback,
// port 0) and, where the wire itself is under test, against a scripted one-connection server.

#include "load/engine.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "http/openai_request.h"
#include "load/metrics.h"
#include "load/schedule.h"
#include "sim/demo_corpus.h"
#include "sim/http_test_client.h"
#include "sim/sim_server.h"

namespace Catch {
template <>
struct StringMaker<stagegate::load::Outcome> {
  static std::string convert(stagegate::load::Outcome outcome) {
    return std::string(stagegate::load::OutcomeName(outcome));
  }
};
}  // namespace Catch

namespace stagegate::load {
namespace {

using nlohmann::json;

constexpr char kQuestion[] = "What is phishing?";

std::unique_ptr<sim::SimServer> StartSim(sim::SimProfile profile = sim::SimProfile::Fast(),
                                         const manifest::Corpus* corpus = nullptr) {
  Result<std::unique_ptr<sim::SimServer>> server =
      sim::SimServer::Start({.profile = std::move(profile), .corpus = corpus});
  INFO(server.status().message());
  REQUIRE(server.ok());
  return std::move(*server);
}

std::string ChatUrl(const std::string& base_url) {
  return base_url + "/v1" + http::ApiPath(http::ApiKind::kChat);
}

/// The same streamed chat request at every position of the schedule.
RequestSource ChatSource(const std::string& url, json extra = json::object(),
                         std::vector<std::string> headers = {},
                         const std::string& question = kQuestion) {
  std::optional<int64_t> max_tokens;
  if (extra.contains("max_tokens")) max_tokens = extra["max_tokens"].get<int64_t>();
  RequestSpec spec{.url = url,
                   .body = http::BuildRequestBody(
                       {.model = "sim-assistant", .extra = std::move(extra)}, question),
                   .headers = std::move(headers),
                   .requested_output_tokens = max_tokens};
  return [spec](int64_t) { return spec; };
}

RunControl Control(const std::atomic<bool>* stop = nullptr) {
  return RunControl{
      .clock = &SteadyClock::Get(), .origin_ns = SteadyClock::Get().NowNs(), .stop = stop};
}

/// A control whose stop is set when the phase has run `seconds`: a watchdog, so that a run that
/// should end by itself fails its test (result.interrupted) instead of hanging it.
RunControl Watchdog(std::atomic<bool>& fired, double seconds) {
  RunControl control = Control(&fired);
  control.tick_ms = 50;
  control.on_tick = [&fired, seconds](const LiveSnapshot& s) {
    if (s.elapsed_s > seconds) fired = true;
  };
  return control;
}

LoadResult Run(const LoadOptions& options, const RequestSource& source,
               const RunControl& control = Control()) {
  Result<LoadResult> result = RunLoad(options, source, control);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return std::move(*result);
}

/// One request on one worker.
RequestRecord SendOne(const RequestSource& source, Timeouts timeouts = {}) {
  LoadResult result =
      Run({.concurrency = 1, .requests = 1, .workers = 1, .timeouts = timeouts}, source);
  REQUIRE(result.records.size() == 1);
  return std::move(result.records[0]);
}

std::string Describe(const RequestRecord& r) {
  return "sequence " + std::to_string(r.sequence) + ": " + std::string(OutcomeName(r.outcome)) +
         ", status " + (r.http_status ? std::to_string(*r.http_status) : "-") + ", curl " +
         (r.curl_code ? std::to_string(*r.curl_code) : "-") + ", error '" + r.error_message +
         "', " + std::to_string(r.answer_text.size()) + " answer bytes";
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

std::vector<Arrival> Schedule(const OpenLoopOptions& options) {
  Result<std::vector<Arrival>> arrivals = BuildOpenLoop(options);
  INFO(arrivals.status().message());
  REQUIRE(arrivals.ok());
  return std::move(*arrivals);
}

std::vector<int64_t> Sequences(const std::vector<RequestRecord>& records) {
  std::vector<int64_t> sequences;
  for (const RequestRecord& r : records)
    sequences.push_back(r.sequence);
  return sequences;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    values[static_cast<size_t>(i)] = i;
  return values;
}

/// The most requests that were between their send and their end at any one moment.
int64_t MaxInFlight(const std::vector<RequestRecord>& records) {
  std::vector<std::pair<int64_t, int>> events;  // an end sorts before a send at the same time
  for (const RequestRecord& r : records) {
    if (!r.sent_ns) continue;
    REQUIRE(r.end_ns);
    events.push_back({*r.sent_ns, +1});
    events.push_back({*r.end_ns, -1});
  }
  std::sort(events.begin(), events.end());
  int64_t now = 0, most = 0;
  for (const auto& [time, step] : events)
    most = std::max(most, now += step);
  return most;
}

// ---- Raw loopback sockets, for what the reference application cannot show -------------------

/// A TCP socket bound to a free loopback port, listening unless `backlog` is negative. Closed on
/// destruction.
class LoopbackSocket {
 public:
  explicit LoopbackSocket(int backlog) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    if (backlog >= 0) REQUIRE(listen(fd_, backlog) == 0);
    socklen_t length = sizeof address;
    REQUIRE(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
  }
  ~LoopbackSocket() { Close(); }
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;

  int fd() const { return fd_; }
  uint16_t port() const { return port_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
  uint16_t port_ = 0;
};

/// A loopback port with nothing listening on it: bound, its number taken, then closed.
uint16_t RefusingPort() {
  LoopbackSocket bound(-1);
  return bound.port();
}

/// Serves one HTTP exchange on loopback from a script: reads the whole request (headers and a
/// Content-Length body), then writes each piece of `response` in turn, `gap_ms` apart, noting the
/// steady-clock time just before each write, and closes the connection. The results are read
/// through Join, after the client is done.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<std::string> response, int gap_ms = 0)
      : listener_(16), response_(std::move(response)), gap_ms_(gap_ms) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() { Join(); }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(listener_.port()) + "/v1/chat/completions";
  }
  /// Waits for the exchange to end; then request() and write_ns() are complete.
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  const std::string& request() const { return request_; }
  const std::vector<int64_t>& write_ns() const { return write_ns_; }
  /// How many pieces of the response have been written so far (read while it serves).
  int written() const { return written_.load(); }

 private:
  void Serve() {
    pollfd waiting{.fd = listener_.fd(), .events = POLLIN, .revents = 0};
    if (poll(&waiting, 1, 10000) != 1) return;  // no client came: the test fails on its own
    const int fd = accept(listener_.fd(), nullptr, nullptr);
    if (fd < 0) return;
    timeval limit{.tv_sec = 10, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    std::string text;
    size_t header_end = std::string::npos;
    size_t body_size = 0;
    char buffer[4096];
    while (header_end == std::string::npos || text.size() < header_end + 4 + body_size) {
      const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      text.append(buffer, static_cast<size_t>(n));
      if (header_end == std::string::npos &&
          (header_end = text.find("\r\n\r\n")) != std::string::npos) {
        std::string head = text.substr(0, header_end);
        std::transform(head.begin(), head.end(), head.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (size_t at = head.find("\r\ncontent-length:"); at != std::string::npos)
          body_size = std::stoul(head.substr(at + 17));
      }
    }
    request_ = text;
    for (size_t i = 0; i < response_.size(); ++i) {
      if (i > 0 && gap_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms_));
      write_ns_.push_back(SteadyClock::Get().NowNs());
      for (size_t sent = 0; sent < response_[i].size();) {
        const ssize_t n =
            send(fd, response_[i].data() + sent, response_[i].size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      ++written_;
    }
    shutdown(fd, SHUT_WR);
    close(fd);
  }

  LoopbackSocket listener_;
  std::vector<std::string> response_;
  int gap_ms_;
  std::atomic<int> written_{0};
  std::string request_;
  std::vector<int64_t> write_ns_;
  std::thread thread_;
};

// ---- Closed and open loops -------------------------------------------------------------------

TEST_CASE("a closed loop sends each sequence once, with ordered times, usage and trace ids",
          "[load]") {
  auto sim = StartSim();
  constexpr int64_t kTokens = 12;
  LoadResult result =
      Run({.concurrency = 4, .requests = 40, .workers = 2},
          ChatSource(ChatUrl(sim->base_url()), {{"max_tokens", kTokens}, {"ignore_eos", true}}));
  REQUIRE(result.records.size() == 40);
  CHECK(Sequences(result.records) == Iota(40));
  CHECK(result.workers == 2);
  CHECK(result.dropped == 0);
  CHECK_FALSE(result.interrupted);
  CHECK(result.started_ns <= result.ended_ns);

  std::set<std::string> trace_ids;
  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.http_status == 200);
    CHECK_FALSE(r.curl_code);
    CHECK(r.error_message.empty());
    REQUIRE(r.sent_ns);
    REQUIRE(r.first_byte_ns);
    REQUIRE(r.first_token_ns);
    REQUIRE(r.end_ns);
    CHECK(r.intended_ns <= *r.sent_ns);
    CHECK(*r.sent_ns <= *r.first_byte_ns);
    CHECK(*r.first_byte_ns <= *r.first_token_ns);
    CHECK(*r.first_token_ns <= *r.end_ns);
    REQUIRE_FALSE(r.chunk_times_ns.empty());
    CHECK(r.chunk_times_ns.front() == *r.first_token_ns);
    CHECK(std::is_sorted(r.chunk_times_ns.begin(), r.chunk_times_ns.end()));
    CHECK(r.chunk_times_ns.back() <= *r.end_ns);
    // ignore_eos with max_tokens: exactly that many tokens, one content event each.
    CHECK(r.output_tokens == kTokens);
    CHECK(r.token_source == "usage");
    CHECK(r.chunk_times_ns.size() == static_cast<size_t>(kTokens));
    CHECK(r.requested_output_tokens == kTokens);
    CHECK(r.finish_reason == "length");
    CHECK(r.input_token_source == "usage");
    CHECK(r.input_tokens.value_or(0) > 0);
    CHECK_FALSE(r.answer_text.empty());
    CHECK(StartsWith(r.server_timing, "queue;dur="));
    CHECK(r.streamed);
    CHECK_FALSE(r.warmup);
    CHECK((r.worker == 0 || r.worker == 1));
    CHECK(std::regex_match(r.trace_id, std::regex("[0-9a-f]{32}")));
    trace_ids.insert(r.trace_id);
  }
  CHECK(trace_ids.size() == 40);
  // The first request of each of the four slots is intended at the phase start; each later one
  // when its slot came free, which is after the start.
  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    if (r.sequence < 4)
      CHECK(r.intended_ns == result.started_ns);
    else
      CHECK(r.intended_ns > result.started_ns);
  }
}

TEST_CASE("an open loop intends each send at the schedule's time after the phase start", "[load]") {
  auto sim = StartSim();
  OpenLoopOptions schedule{.rate = 200, .requests = 20};
  SECTION("constant") {
    schedule.process = ArrivalProcess::kConstant;
  }
  SECTION("poisson") {
    schedule.process = ArrivalProcess::kPoisson;
    schedule.seed = 7;
  }
  const std::vector<Arrival> arrivals = Schedule(schedule);
  REQUIRE(arrivals.size() == 20);
  LoadResult result =
      Run({.arrivals = arrivals, .workers = 2}, ChatSource(ChatUrl(sim->base_url())));
  REQUIRE(result.records.size() == arrivals.size());
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const RequestRecord& r = result.records[i];
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.sequence == arrivals[i].sequence);
    CHECK(r.intended_ns == result.started_ns + arrivals[i].intended_ns);
    CHECK(r.intended_ns - result.records[0].intended_ns ==
          arrivals[i].intended_ns - arrivals[0].intended_ns);
    REQUIRE(r.sent_ns);
    CHECK(*r.sent_ns >= r.intended_ns);  // schedule lag is never negative
    CHECK_FALSE(r.queue_ns);             // no cap, so nothing waits for a slot
  }
}

// ---- Outcomes ------------------------------------------------------------------------------

TEST_CASE("each misbehaviour of the server ends in its own outcome, keeping what arrived",
          "[load]") {
  auto sim = StartSim();
  const std::string url = ChatUrl(sim->base_url());
  const json long_answer = {{"min_tokens", 40}};
  const auto faulty = [&](const std::string& mode, json extra) {
    return ChatSource(url, std::move(extra), {"X-Sim-Fault: " + mode});
  };
  const RequestRecord normal = SendOne(ChatSource(url, long_answer));
  REQUIRE(normal.outcome == Outcome::kOk);
  REQUIRE(normal.chunk_times_ns.size() >= 40);

  SECTION("500: http_error with the status and the body's message") {
    const RequestRecord r = SendOne(faulty("500", long_answer));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kHttpError);
    CHECK(r.http_status == 500);
    CHECK(r.error_message == "HTTP 500: the model server failed");
    CHECK_FALSE(r.curl_code);
    CHECK(r.answer_text.empty());
    CHECK_FALSE(r.first_token_ns);
  }
  SECTION("reset: transport_error with curl's code, not an HTTP status") {
    const RequestRecord r = SendOne(faulty("reset", long_answer));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kTransportError);
    CHECK(r.curl_code == CURLE_RECV_ERROR);
    CHECK(StartsWith(r.error_message, "curl 56: "));
    // The 200 of the response head may have arrived before the reset; no other status can.
    CHECK((!r.http_status || *r.http_status == 200));
  }
  SECTION("malformed: malformed_stream naming the chunk, the text before it kept") {
    const RequestRecord r = SendOne(faulty("malformed", long_answer));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kMalformedStream);
    CHECK(r.http_status == 200);
    // The role chunk, two tokens, then the broken one.
    CHECK(StartsWith(r.error_message, "malformed JSON in chunk 4: {\"id\":"));
    CHECK_FALSE(r.answer_text.empty());
    CHECK(StartsWith(normal.answer_text, r.answer_text));
    CHECK(r.chunk_times_ns.size() == 2);
  }
  SECTION("no-done: malformed_stream with curl's word for the cut, the whole text kept") {
    const RequestRecord r = SendOne(faulty("no-done", long_answer));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kMalformedStream);
    CHECK(r.http_status == 200);
    CHECK(r.curl_code == CURLE_PARTIAL_FILE);
    CHECK(StartsWith(r.error_message, "stream ended without [DONE] (curl 18: "));
    CHECK(r.answer_text == normal.answer_text);
    CHECK(r.output_tokens == normal.output_tokens);
    CHECK(r.token_source == "usage");
  }
  SECTION("error-after-200: http_error with the stream's message, status 200, text kept") {
    const RequestRecord r = SendOne(faulty("error-after-200", long_answer));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kHttpError);
    CHECK(r.http_status == 200);
    CHECK(r.error_message == "error in the stream after HTTP 200: internal error while generating");
    CHECK_FALSE(r.curl_code);
    CHECK(r.chunk_times_ns.size() == 3);  // the error replaces the fourth token
    CHECK_FALSE(r.answer_text.empty());
    CHECK(StartsWith(normal.answer_text, r.answer_text));
  }
  SECTION("stall: timeout by the total timeout, the text before the stall kept") {
    const RequestRecord r =
        SendOne(faulty("stall", long_answer), {.first_token_ms = 10000, .total_ms = 300});
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kTimeout);
    CHECK(r.http_status == 200);
    CHECK(r.curl_code == CURLE_OPERATION_TIMEDOUT);
    CHECK(StartsWith(r.error_message, "total timeout after 300 ms (curl 28: "));
    CHECK_FALSE(r.answer_text.empty());
    CHECK(StartsWith(normal.answer_text, r.answer_text));
    CHECK(r.answer_text.size() < normal.answer_text.size());
    REQUIRE(r.sent_ns);
    REQUIRE(r.end_ns);
    // Never before the timeout, which curl times from the start of the transfer: a little before
    // `sent` (the request's first byte), by the connection's set-up (0.13 ms seen in one run).
    CHECK(*r.end_ns - *r.sent_ns >= 295'000'000);
  }
  SECTION("hang: timeout by the first-token timeout, with nothing received") {
    const RequestRecord r =
        SendOne(faulty("hang", long_answer), {.first_token_ms = 200, .total_ms = 10000});
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kTimeout);
    CHECK(r.error_message == "first token timeout after 200 ms");
    CHECK_FALSE(r.http_status);
    CHECK_FALSE(r.curl_code);
    CHECK_FALSE(r.first_byte_ns);
    CHECK(r.answer_text.empty());
    REQUIRE(r.sent_ns);
    REQUIRE(r.end_ns);
    CHECK(*r.end_ns - *r.sent_ns >= 200'000'000);
  }
  SECTION("trickle: ok, the stream reassembled from 32-byte pieces") {
    const json short_answer = {{"max_tokens", 4}, {"ignore_eos", true}};
    const RequestRecord reference = SendOne(ChatSource(url, short_answer));
    const RequestRecord r = SendOne(faulty("trickle", short_answer));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.answer_text == reference.answer_text);
    CHECK(r.chunk_times_ns.size() == 4);
    CHECK(r.output_tokens == 4);
  }
  SECTION("oversized: ok, a 4 MiB chunk is below every cap") {
    const RequestRecord r = SendOne(faulty("oversized", json::object()));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.answer_text == std::string(size_t{4} << 20, 'x'));
    CHECK(r.chunk_times_ns.size() == 1);
    CHECK(r.output_tokens == 1);
  }
  SECTION("invalid-utf8: FF FE in a chunk is not JSON, so malformed_stream, text before kept") {
    // The SSE layer passes the bytes through, but JSON is UTF-8 (RFC 8259): the chunk decoder
    // refuses the chunk as it refuses any text that is not JSON.
    const RequestRecord r = SendOne(faulty("invalid-utf8", long_answer));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kMalformedStream);
    CHECK(r.http_status == 200);
    CHECK(StartsWith(r.error_message, "malformed JSON in chunk 4: {\"id\":"));
    CHECK(r.chunk_times_ns.size() == 2);
    CHECK(StartsWith(normal.answer_text, r.answer_text));
    // The error quotes the chunk's start only, but the record says why it was refused.
    CHECK(r.invalid_utf8);
    CHECK_FALSE(normal.invalid_utf8);
  }
}

TEST_CASE("401 and 403 are denied, 429 and 503 are shed with Retry-After", "[load]") {
  SECTION("401: identity on, a token that names no persona") {
    auto sim = StartSim(sim::SimProfile::Fast(), &testing::DemoCorpus());
    const RequestRecord r =
        SendOne(ChatSource(ChatUrl(sim->base_url()), json::object(),
                           {"X-Sim-Identity: on", "Authorization: Bearer not-a-persona"}));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kDenied);
    CHECK(r.http_status == 401);
    CHECK(r.error_message == "HTTP 401: the bearer token matches no persona");
    CHECK_FALSE(r.retry_after_s);
  }
  SECTION("403: a persona asking for a document it may not read") {
    auto sim = StartSim(sim::SimProfile::Fast(), &testing::DemoCorpus());
    const RequestRecord r = SendOne(ChatSource(
        ChatUrl(sim->base_url()), json::object(),
        {"X-Sim-Retrieval: on", "X-Sim-Identity: on", "Authorization: Bearer sim-token-contractor"},
        "What is the salary range for an L4 engineer?"));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kDenied);
    CHECK(r.http_status == 403);
    CHECK(StartsWith(r.error_message,
                     "HTTP 403: you are not authorised to read documents restricted to "));
  }
  // A queue limit of 0 turns every request away at once.
  sim::SimProfile full = sim::SimProfile::Default();
  full.queue_limit = 0;
  full.retry_after_s = 7;
  SECTION("429 from a full queue") {
    full.shed_status = 429;
    auto sim = StartSim(full);
    const RequestRecord r = SendOne(ChatSource(ChatUrl(sim->base_url())));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kShed);
    CHECK(r.http_status == 429);
    CHECK(r.retry_after_s == 7.0);
    CHECK(r.error_message == "HTTP 429: the server is overloaded: the request queue is full");
  }
  SECTION("503 from a full queue") {
    full.shed_status = 503;
    auto sim = StartSim(full);
    const RequestRecord r = SendOne(ChatSource(ChatUrl(sim->base_url())));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kShed);
    CHECK(r.http_status == 503);
    CHECK(r.retry_after_s == 7.0);
    CHECK(r.error_message == "HTTP 503: the request waited too long in the queue");
  }
  SECTION("429 with a plain-text body: the body's start is the message") {
    ScriptedServer server(
        {"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 120\r\n"
         "Content-Type: text/plain\r\nContent-Length: 9\r\n"
         "Connection: close\r\n\r\nslow down"});
    const RequestRecord r = SendOne(ChatSource(server.url()));
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kShed);
    CHECK(r.http_status == 429);
    CHECK(r.retry_after_s == 120.0);
    CHECK(r.error_message == "HTTP 429: slow down");
  }
}

TEST_CASE("a refused connection is a transport_error with curl's code 7", "[load]") {
  const std::string url =
      "http://127.0.0.1:" + std::to_string(RefusingPort()) + "/v1/chat/completions";
  const RequestRecord r = SendOne(ChatSource(url));
  INFO(Describe(r));
  CHECK(r.outcome == Outcome::kTransportError);
  CHECK(r.curl_code == CURLE_COULDNT_CONNECT);
  CHECK(StartsWith(r.error_message, "curl 7: "));
  CHECK_FALSE(r.http_status);
  CHECK_FALSE(r.first_byte_ns);
  CHECK(r.sent_ns);
  CHECK(r.end_ns);
}

TEST_CASE("a connection never accepted is a timeout naming the connect timeout", "[load]") {
  // A listener with a backlog of 0 whose one queued connection is never accepted: the kernel
  // drops every later SYN, so a connect neither succeeds nor fails.
  LoopbackSocket listener(0);
  LoopbackSocket filler(-1);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(listener.port());
  REQUIRE(connect(filler.fd(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  const std::string url =
      "http://127.0.0.1:" + std::to_string(listener.port()) + "/v1/chat/completions";
  const RequestRecord r = SendOne(ChatSource(url), {.connect_ms = 200});
  INFO(Describe(r));
  CHECK(r.outcome == Outcome::kTimeout);
  CHECK(r.curl_code == CURLE_OPERATION_TIMEDOUT);
  CHECK(StartsWith(r.error_message, "connect timeout after 200 ms (curl 28: "));
  CHECK_FALSE(r.http_status);
}

// ---- Concurrency cap, warmup, grace, stop --------------------------------------------------

TEST_CASE("a concurrency cap drops or queues a burst, never exceeding the cap", "[load]") {
  // The default profile's model time (about 10 ms a token) keeps each request in flight far
  // longer than the 2 ms the burst of 20 arrivals takes.
  auto sim = StartSim(sim::SimProfile::Default());
  const std::vector<Arrival> burst = Schedule({.rate = 10000, .requests = 20});
  const RequestSource source =
      ChatSource(ChatUrl(sim->base_url()), {{"max_tokens", 12}, {"ignore_eos", true}});
  LoadOptions options{.arrivals = burst, .max_concurrency = 2, .workers = 2};

  SECTION("drop") {
    options.when_full = WhenFull::kDrop;
    LoadResult result = Run(options, source);
    REQUIRE(result.records.size() == burst.size());
    CHECK(Sequences(result.records) == Iota(20));
    int64_t dropped = 0, sent = 0;
    for (const RequestRecord& r : result.records) {
      INFO(Describe(r));
      if (r.outcome == Outcome::kCancelled) {
        ++dropped;
        CHECK(StartsWith(r.error_message, "dropped: "));
        CHECK_FALSE(r.sent_ns);
      } else {
        ++sent;
        CHECK(r.outcome == Outcome::kOk);
      }
    }
    CHECK(dropped > 0);
    CHECK(sent >= 2);
    CHECK(result.dropped == dropped);
    CHECK(MaxInFlight(result.records) <= 2);
  }
  SECTION("queue") {
    options.when_full = WhenFull::kQueue;
    LoadResult result = Run(options, source);
    REQUIRE(result.records.size() == burst.size());
    CHECK(Sequences(result.records) == Iota(20));
    CHECK(result.dropped == 0);
    int64_t queued = 0;
    for (const RequestRecord& r : result.records) {
      INFO(Describe(r));
      CHECK(r.outcome == Outcome::kOk);
      REQUIRE(r.sent_ns);
      if (!r.queue_ns) continue;
      ++queued;
      CHECK(*r.queue_ns >= 0);
      CHECK(*r.sent_ns - r.intended_ns >= *r.queue_ns);  // the lag includes the wait
    }
    CHECK(queued > 0);
    CHECK(MaxInFlight(result.records) <= 2);
  }
}

TEST_CASE("warmup requests are marked and left out of the metrics", "[load]") {
  auto sim = StartSim();
  LoadResult result = Run({.concurrency = 2, .requests = 12, .warmup_requests = 5, .workers = 2},
                          ChatSource(ChatUrl(sim->base_url())));
  REQUIRE(result.records.size() == 12);
  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    CHECK(r.warmup == (r.sequence < 5));
    CHECK(r.outcome == Outcome::kOk);
  }
  const PhaseMetrics metrics = ComputeMetrics(result.records, {});
  CHECK(metrics.warmup == 5);
  CHECK(metrics.offered == 7);
  CHECK(metrics.sent == 7);
  CHECK(metrics.completed == 7);
  CHECK(metrics.ttft_ms.count == 7);
}

// What a worker does between requests, in steady-clock time: how its CPU time compares with that
// depends on what else the machine runs, so CPU time is held only to what it cannot exceed.
TEST_CASE("busy polling keeps a worker awake and counts its empty polls apart from work",
          "[load]") {
  auto sim = StartSim();
  // Ten requests a second for 1 s: the worker has almost nothing to do between them.
  const std::vector<Arrival> arrivals =
      Schedule({.rate = 10, .process = ArrivalProcess::kConstant, .requests = 10});
  SECTION("busy polling") {
    LoadResult result = Run({.arrivals = arrivals, .workers = 1, .busy_poll = true},
                            ChatSource(ChatUrl(sim->base_url())));
    REQUIRE(result.records.size() == 10);
    for (const RequestRecord& r : result.records)
      CHECK(r.outcome == Outcome::kOk);
    const double wall_s = static_cast<double>(result.ended_ns - result.started_ns) / 1e9;
    // It never slept: most of its time went to polling that found nothing, and that is not
    // counted as busy.
    CHECK(result.idle_poll_s > 0.5 * wall_s);
    REQUIRE(result.worker_busy.size() == 1);
    CHECK(result.worker_busy[0] < 0.5);
  }
  SECTION("by default it sleeps between requests") {
    LoadResult result =
        Run({.arrivals = arrivals, .workers = 1}, ChatSource(ChatUrl(sim->base_url())));
    REQUIRE(result.records.size() == 10);
    const double wall_s = static_cast<double>(result.ended_ns - result.started_ns) / 1e9;
    CHECK(result.idle_poll_s < 0.2 * wall_s);
    CHECK(result.client_cpu_s < 0.5 * wall_s);
  }
}

TEST_CASE("on_records hands out each finished record once while the phase runs", "[load]") {
  auto sim = StartSim();
  // 40 requests a second for 1 s, two workers, a tick every 20 ms: many small batches.
  const std::vector<Arrival> arrivals =
      Schedule({.rate = 40, .process = ArrivalProcess::kConstant, .requests = 40});
  RunControl control = Control();
  control.tick_ms = 20;
  std::vector<std::vector<int64_t>> batches;
  control.on_records = [&](std::vector<RequestRecord> finished) {
    std::vector<int64_t> sequences;
    for (const RequestRecord& r : finished) {
      CHECK(r.end_ns.has_value());  // only finished requests
      sequences.push_back(r.sequence);
    }
    batches.push_back(sequences);
  };
  LoadResult result =
      Run({.arrivals = arrivals, .workers = 2}, ChatSource(ChatUrl(sim->base_url())), control);
  REQUIRE(result.records.size() == 40);
  std::set<int64_t> seen;
  for (const std::vector<int64_t>& batch : batches)
    for (int64_t sequence : batch)
      CHECK(seen.insert(sequence).second);  // never twice
  CHECK(batches.size() >= 5);               // handed out along the way, not at the end
  CHECK(seen.size() >= 30);                 // all but those finished after the last tick
  for (int64_t sequence : seen)
    CHECK(sequence < 40);
}

TEST_CASE("requests still in flight after the grace period are cancelled, text kept", "[load]") {
  auto sim = StartSim();
  const RequestSource stalled =
      ChatSource(ChatUrl(sim->base_url()), {{"min_tokens", 40}}, {"X-Sim-Fault: stall"});
  const Timeouts no_timeout{.first_token_ms = 10000, .total_ms = 0};
  std::atomic<bool> stop{false};
  RunControl control = Control(&stop);
  LoadOptions options{.concurrency = 4, .grace_s = 0.2, .workers = 2, .timeouts = no_timeout};
  std::string expected;

  SECTION("after the phase ends") {
    options.requests = 4;
    expected = "cancelled: still in flight 0.2 s after the phase ended";
  }
  SECTION("after the stop") {
    options.duration_s = 30;
    control.tick_ms = 10;
    control.on_tick = [&](const LiveSnapshot& s) {
      if (s.sent >= 4) stop = true;
    };
    expected = "cancelled: still in flight 0.2 s after the stop";
  }
  LoadResult result = Run(options, stalled, control);
  CHECK(result.interrupted == stop.load());
  REQUIRE(result.records.size() == 4);  // a stalled request never frees its slot
  CHECK(Sequences(result.records) == Iota(4));
  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kCancelled);
    CHECK(r.error_message == expected);
    CHECK(r.http_status == 200);
    CHECK_FALSE(r.answer_text.empty());
    REQUIRE(r.sent_ns);
    REQUIRE(r.end_ns);
    // The grace began once the schedule was done, after every request was handed to curl (its
    // intended time); sent_ns is later, when curl wrote the request on its new connection.
    CHECK(*r.end_ns - r.intended_ns >= 200'000'000);
  }
}

TEST_CASE("a stop ends a long run early and keeps a record of every request sent", "[load]") {
  auto sim = StartSim();
  std::atomic<bool> stop{false};
  RunControl control = Control(&stop);
  control.tick_ms = 5;
  int64_t last_sent = 0;
  control.on_tick = [&](const LiveSnapshot& s) {
    last_sent = s.sent;
    if (s.done >= 20) stop = true;
  };
  LoadResult result = Run({.concurrency = 4, .duration_s = 20, .workers = 2},
                          ChatSource(ChatUrl(sim->base_url())), control);
  CHECK(result.interrupted);
  REQUIRE(result.records.size() >= 20);
  CHECK(static_cast<int64_t>(result.records.size()) >= last_sent);
  // Worker w sends sequences w, w + 2, w + 4, ...: a lost record leaves a gap in its series.
  std::map<int64_t, std::vector<int64_t>> by_worker;
  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.sent_ns);
    CHECK(r.end_ns);
    by_worker[r.worker].push_back(r.sequence);
  }
  CHECK(by_worker.size() == 2);
  for (const auto& [worker, sequences] : by_worker) {
    INFO("worker " << worker);
    for (size_t i = 0; i < sequences.size(); ++i)
      CHECK(sequences[i] == worker + 2 * static_cast<int64_t>(i));
  }
}

TEST_CASE("a stop cancels queued arrivals without counting them as dropped by the cap", "[load]") {
  // Two slots for a burst of 20 slow requests: most arrivals wait in the queue when the stop
  // comes after the first two are done. The queued ones are cancelled by the stop; the cap
  // refused none of them, since it queues rather than drops.
  auto sim = StartSim(sim::SimProfile::Default());
  const std::vector<Arrival> burst = Schedule({.rate = 10000, .requests = 20});
  std::atomic<bool> stop{false};
  RunControl control = Control(&stop);
  control.tick_ms = 5;
  control.on_tick = [&](const LiveSnapshot& s) {
    if (s.done >= 2) stop = true;
  };
  LoadResult result = Run(
      {.arrivals = burst,
       .max_concurrency = 2,
       .when_full = WhenFull::kQueue,
       .grace_s = 2,
       .workers = 2},
      ChatSource(ChatUrl(sim->base_url()), {{"max_tokens", 12}, {"ignore_eos", true}}), control);
  CHECK(result.interrupted);
  REQUIRE(result.records.size() == burst.size());  // every arrival was due before the stop
  CHECK(Sequences(result.records) == Iota(20));
  int64_t cancelled = 0;
  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    if (r.outcome == Outcome::kCancelled) {
      ++cancelled;
      CHECK(r.error_message == "cancelled: queued when the run stopped");
      CHECK_FALSE(r.sent_ns);
    } else {
      CHECK(r.outcome == Outcome::kOk);
    }
  }
  CHECK(cancelled > 0);
  CHECK(MaxInFlight(result.records) <= 2);
  // LoadResult::dropped is "refused under a concurrency cap": a queue refuses nothing.
  CHECK(result.dropped == 0);
}

TEST_CASE("end_schedule ends an open loop early: nothing more is sent, nothing is interrupted",
          "[load]") {
  auto sim = StartSim();
  // 100 requests a second for 20 s; the schedule is ended once 30 are done.
  const std::vector<Arrival> arrivals =
      Schedule({.rate = 100, .process = ArrivalProcess::kConstant, .requests = 2000});
  std::atomic<bool> end{false};
  RunControl control = Control();
  control.end_schedule = &end;
  control.tick_ms = 5;
  int64_t sent_at_end = 0;
  control.on_tick = [&](const LiveSnapshot& s) {
    if (!end && s.done >= 30) {
      end = true;
      sent_at_end = s.sent;
    }
  };
  LoadResult result =
      Run({.arrivals = arrivals, .workers = 2}, ChatSource(ChatUrl(sim->base_url())), control);
  CHECK_FALSE(result.interrupted);
  REQUIRE(result.records.size() >= 30);
  // Sent up to the moment it was ended, give or take the arrivals due within a tick.
  CHECK(static_cast<int64_t>(result.records.size()) <= sent_at_end + 4);
  CHECK(result.records.size() < 200);
  CHECK(Sequences(result.records) == Iota(static_cast<int64_t>(result.records.size())));
  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kOk);  // what was sent finished: nothing was cut
  }
}

TEST_CASE("end_schedule cancels arrivals queued under a cap and ends a closed loop", "[load]") {
  auto sim = StartSim(sim::SimProfile::Default());
  const std::vector<Arrival> burst = Schedule({.rate = 10000, .requests = 20});
  std::atomic<bool> end{false};
  RunControl control = Control();
  control.end_schedule = &end;
  control.tick_ms = 5;
  control.on_tick = [&](const LiveSnapshot& s) {
    if (s.done >= 2) end = true;
  };
  LoadResult queued = Run({.arrivals = burst, .max_concurrency = 2, .grace_s = 2, .workers = 2},
                          ChatSource(ChatUrl(sim->base_url()), {{"max_tokens", 12}}), control);
  CHECK_FALSE(queued.interrupted);
  int64_t cancelled = 0;
  for (const RequestRecord& r : queued.records)
    if (r.outcome == Outcome::kCancelled) {
      ++cancelled;
      CHECK(r.error_message == "cancelled: queued when the level ended early");
    }
  CHECK(cancelled > 0);

  end = false;
  LoadResult closed = Run({.concurrency = 2, .duration_s = 20, .workers = 2},
                          ChatSource(ChatUrl(sim->base_url()), {{"max_tokens", 12}}), control);
  CHECK_FALSE(closed.interrupted);
  CHECK(closed.records.size() < 20);
  for (const RequestRecord& r : closed.records)
    CHECK(r.outcome == Outcome::kOk);
}

TEST_CASE("a closed loop limited by duration sends nothing intended after its end", "[load]") {
  auto sim = StartSim();
  constexpr double kDurationS = 0.3;
  LoadResult result = Run({.concurrency = 2, .duration_s = kDurationS, .workers = 2},
                          ChatSource(ChatUrl(sim->base_url())));
  CHECK_FALSE(result.interrupted);
  REQUIRE(result.records.size() > 2);
  const int64_t end = result.started_ns + static_cast<int64_t>(kDurationS * 1e9);
  std::map<int64_t, std::vector<int64_t>> by_worker;
  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.intended_ns < end);
    by_worker[r.worker].push_back(r.sequence);
  }
  for (const auto& [worker, sequences] : by_worker) {
    INFO("worker " << worker);
    for (size_t i = 0; i < sequences.size(); ++i)
      CHECK(sequences[i] == worker + 2 * static_cast<int64_t>(i));
  }
}

TEST_CASE("a late send keeps its intended time, so its lag shows the client's stall", "[load]") {
  // The request source holds the only worker for 50 ms before sequence 2, so sequences 2 and 3
  // go out late. Their records must say so: hiding that is coordinated omission.
  auto sim = StartSim();
  const std::vector<Arrival> arrivals = Schedule({.rate = 100, .requests = 5});  // 10 ms apart
  const RequestSource plain = ChatSource(ChatUrl(sim->base_url()));
  const RequestSource stalling = [&](int64_t sequence) {
    if (sequence == 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return plain(sequence);
  };
  LoadResult result = Run({.arrivals = arrivals, .workers = 1}, stalling);
  REQUIRE(result.records.size() == arrivals.size());
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const RequestRecord& r = result.records[i];
    INFO(Describe(r));
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.intended_ns == result.started_ns + arrivals[i].intended_ns);
    REQUIRE(r.sent_ns);
  }
  const std::vector<RequestRecord>& r = result.records;
  CHECK(*r[2].sent_ns - r[2].intended_ns >= 50'000'000);
  CHECK(*r[3].sent_ns - r[3].intended_ns >= 40'000'000);  // due 10 ms after sequence 2
  CHECK(ComputeMetrics(r, {}).schedule_lag_ms.max >= 50);
}

TEST_CASE("a run stopped before it starts sends nothing", "[load]") {
  auto sim = StartSim();
  std::atomic<bool> stop{true};
  LoadResult result = Run({.concurrency = 4, .requests = 10, .workers = 2},
                          ChatSource(ChatUrl(sim->base_url())), Control(&stop));
  CHECK(result.interrupted);
  CHECK(result.records.empty());
}

// ---- Shards --------------------------------------------------------------------------------

TEST_CASE("shards of an open loop send exactly the unsharded schedule between them", "[load]") {
  auto sim = StartSim();
  const RequestSource source = ChatSource(ChatUrl(sim->base_url()));
  const OpenLoopOptions whole{
      .rate = 200, .process = ArrivalProcess::kPoisson, .requests = 15, .seed = 3};
  const std::vector<Arrival> unsharded = Schedule(whole);
  std::vector<int64_t> union_of_shards;
  for (int64_t index = 0; index < 2; ++index) {
    OpenLoopOptions part = whole;
    part.shard = {.index = index, .count = 2};
    const std::vector<Arrival> arrivals = Schedule(part);
    LoadResult result = Run({.arrivals = arrivals, .workers = 2, .shard = part.shard}, source);
    REQUIRE(result.records.size() == arrivals.size());
    for (size_t i = 0; i < arrivals.size(); ++i) {
      INFO(Describe(result.records[i]));
      CHECK(result.records[i].outcome == Outcome::kOk);
      CHECK(result.records[i].sequence == arrivals[i].sequence);
      CHECK(result.records[i].sequence % 2 == index);
      union_of_shards.push_back(result.records[i].sequence);
    }
  }
  std::sort(union_of_shards.begin(), union_of_shards.end());
  std::vector<int64_t> expected;
  for (const Arrival& arrival : unsharded)
    expected.push_back(arrival.sequence);
  CHECK(union_of_shards == expected);
}

TEST_CASE("shards of a count-limited closed loop send 0..N-1 between them", "[load]") {
  auto sim = StartSim();
  const RequestSource source = ChatSource(ChatUrl(sim->base_url()));
  std::vector<int64_t> union_of_shards;
  for (int64_t index = 0; index < 2; ++index) {
    const Shard shard{.index = index, .count = 2};
    // Concurrency 3 splits 2 + 1: the first shard runs two workers, the second one.
    LoadResult result =
        Run({.concurrency = 3, .requests = 11, .workers = 2, .shard = shard}, source);
    CHECK(result.workers == (index == 0 ? 2 : 1));
    CHECK(static_cast<int64_t>(result.records.size()) == ShardCount(11, shard));
    for (const RequestRecord& r : result.records) {
      INFO(Describe(r));
      CHECK(r.outcome == Outcome::kOk);
      CHECK(r.sequence % 2 == index);
      union_of_shards.push_back(r.sequence);
    }
  }
  std::sort(union_of_shards.begin(), union_of_shards.end());
  CHECK(union_of_shards == Iota(11));
}

TEST_CASE("an open-loop shard with no arrivals ends at once with no records", "[load]") {
  // One arrival over two shards leaves the second shard an empty schedule.
  OpenLoopOptions part{.rate = 10, .requests = 1, .shard = {.index = 1, .count = 2}};
  const std::vector<Arrival> arrivals = Schedule(part);
  REQUIRE(arrivals.empty());
  std::atomic<bool> watchdog{false};
  LoadResult result =
      Run({.arrivals = arrivals, .workers = 2, .shard = part.shard},
          ChatSource("http://127.0.0.1:9/v1/chat/completions"), Watchdog(watchdog, 3));
  CHECK_FALSE(result.interrupted);
  CHECK(result.records.empty());
  CHECK(result.workers == 1);
}

TEST_CASE("a closed loop over more shards than its concurrency neither hangs nor loses requests",
          "[load]") {
  // Concurrency 1 over 2 shards gives the second shard no concurrency (ShardConcurrency), yet
  // ShardCount gives it the odd sequences. Either the engine refuses such a split (InvalidInput)
  // or the shards together still send 0..N-1, as the unsharded run would; ending quietly with the
  // odd sequences unsent is neither. The stop is a watchdog, so that a hang fails the test
  // instead of blocking it.
  auto sim = StartSim();
  const RequestSource source = ChatSource(ChatUrl(sim->base_url()));
  std::vector<int64_t> union_of_shards;
  bool refused = false;
  for (int64_t index = 0; index < 2; ++index) {
    INFO("shard " << index);
    std::atomic<bool> watchdog{false};
    Result<LoadResult> result = RunLoad(
        {.concurrency = 1, .requests = 4, .workers = 2, .shard = {.index = index, .count = 2}},
        source, Watchdog(watchdog, 3));
    if (!result.ok()) {
      CHECK(result.status().code() == Status::Code::kInvalidInput);
      refused = true;
      continue;
    }
    CHECK_FALSE(result->interrupted);
    for (const RequestRecord& r : result->records)
      union_of_shards.push_back(r.sequence);
  }
  std::sort(union_of_shards.begin(), union_of_shards.end());
  if (!refused) CHECK(union_of_shards == Iota(4));
}

// ---- Timing ground truth and the wire ------------------------------------------------------

TEST_CASE("token times are causal: never before the server sent the chunk", "[load]") {
  // The default profile spreads tokens over engine steps (8 ms and more); 50 streams exceed its
  // 32 running sequences, so some also queue.
  auto sim = StartSim(sim::SimProfile::Default());
  constexpr int64_t kTokens = 16;
  const RunControl control = Control();
  LoadResult result =
      Run({.concurrency = 50, .requests = 50, .workers = 2},
          ChatSource(ChatUrl(sim->base_url()), {{"max_tokens", kTokens}, {"ignore_eos", true}},
                     {"X-Sim-Timestamps: on"}),
          control);
  REQUIRE(result.records.size() == 50);

  const testing::HttpResult truth_response =
      testing::Request(sim->base_url() + "/sim/ground-truth");
  REQUIRE(truth_response.status == 200);
  const json truth = json::parse(truth_response.body);
  CHECK(truth["dropped"] == 0);
  std::map<std::string, std::vector<int64_t>> sent_by_trace;
  for (const json& request : truth["requests"])
    sent_by_trace[request["trace_id"].get<std::string>()] =
        request["chunk_sent_ns"].get<std::vector<int64_t>>();
  CHECK(sent_by_trace.size() == 50);

  for (const RequestRecord& r : result.records) {
    INFO(Describe(r));
    REQUIRE(r.outcome == Outcome::kOk);
    REQUIRE(r.first_token_ns);
    REQUIRE(r.first_byte_ns);
    REQUIRE(r.chunk_times_ns.size() == static_cast<size_t>(kTokens));
    CHECK(r.chunk_times_ns.front() == *r.first_token_ns);
    CHECK(r.first_answer_ns == r.first_token_ns);  // no reasoning: the first token is the answer
    CHECK(*r.first_byte_ns <= *r.first_token_ns);
    CHECK(std::is_sorted(r.chunk_times_ns.begin(), r.chunk_times_ns.end()));
    const auto truth_of = sent_by_trace.find(r.trace_id);
    REQUIRE(truth_of != sent_by_trace.end());
    const std::vector<int64_t>& server_sent = truth_of->second;
    REQUIRE(server_sent.size() == r.chunk_times_ns.size());
    for (size_t k = 0; k < server_sent.size(); ++k) {
      INFO("chunk " << k);
      CHECK(r.chunk_times_ns[k] + control.origin_ns >= server_sent[k]);
    }
  }
  // Every read came with the kernel's receive stamp (the first of a process may not).
  CHECK(result.receive.kernel_stamped >= 50 * kTokens);
  CHECK(result.receive.client_stamped <= 2);
  const PhaseMetrics metrics = ComputeMetrics(result.records, {});
  CHECK(metrics.completed == 50);
  CHECK(metrics.itl_ms.count == 50 * (kTokens - 1));
  CHECK(metrics.itl_ms.Percentile(50) > 0);
}

TEST_CASE("a token that arrives while the worker is busy keeps its arrival time", "[load]") {
  // The only worker stalls in the request source before sequence 1: it waits there until the
  // server has written sequence 0's first token, then 30 ms more, so the token arrives while the
  // worker is busy. The last chunk comes 70 ms after the token, after the stall, so the token has
  // a read of its own. With the kernel's receive stamps the token keeps its arrival; stamped when
  // read, it is late by the rest of the stall. The read delay shows the stall either way.
  // The stall only shows this when sequence 0's request was on the wire before sequence 1 fell
  // due (the worker cannot send while it stalls). A machine too busy to send it in time makes the
  // attempt say nothing; it is made again with sequence 1 due four times later, up to 5 times.
  const std::vector<std::string> script = {
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":"
      "\"stop\"}]}\n\ndata: [DONE]\n\n"};
  for (const ReceiveTimes mode : {ReceiveTimes::kKernel, ReceiveTimes::kRead}) {
    const bool kernel = mode == ReceiveTimes::kKernel;
    INFO((kernel ? "kernel receive times" : "read times"));
    for (int attempt = 0;; ++attempt) {
      INFO("attempt " << attempt + 1);
      ScriptedServer server(script, 70);
      const RequestSpec stream{.url = server.url(),
                               .body = http::BuildRequestBody({.model = "m"}, "Say hello.")};
      RequestSpec refused = stream;
      refused.url = "http://127.0.0.1:" + std::to_string(RefusingPort()) + "/v1/chat/completions";
      bool token_in_stall = false;
      const RequestSource source = [&](int64_t sequence) {
        if (sequence == 0) return stream;
        for (int i = 0; i < 2'000 && server.written() < 2; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        token_in_stall = server.written() >= 2;
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        return refused;
      };
      const RunControl control = Control();
      const int64_t due_ns = int64_t{15'000'000} << (2 * attempt);
      LoadResult result = Run(
          {.arrivals = {{.sequence = 0, .intended_ns = 0}, {.sequence = 1, .intended_ns = due_ns}},
           .workers = 1,
           .receive_times = mode},
          source, control);
      server.Join();
      if (!token_in_stall && attempt < 4) continue;
      REQUIRE(token_in_stall);
      REQUIRE(result.records.size() == 2);
      const RequestRecord& r = result.records[0];
      INFO(Describe(r));
      REQUIRE(r.outcome == Outcome::kOk);
      REQUIRE(r.chunk_times_ns.size() == 2);
      const std::vector<int64_t>& written = server.write_ns();
      REQUIRE(written.size() == 3);
      const int64_t late = r.chunk_times_ns[0] + control.origin_ns - written[1];
      INFO("first token stamped " << late << " ns after the server wrote it");
      CHECK(late >= 0);
      if (kernel) {
        CHECK(late < 2'000'000);
        CHECK(*r.first_token_ns == r.chunk_times_ns[0]);
      } else {
        CHECK(late >= 15'000'000);
      }
      CHECK(result.receive.kernel_stamped >= 2);
      CHECK(result.receive.read_delay_max_ns >= 15'000'000);
      CHECK(*result.receive.ReadDelayQuantileUs(1.0) >= 15'000);
      break;
    }
  }
}

TEST_CASE("the request on the wire carries traceparent, the spec's headers and a usage body",
          "[load]") {
  // A stream of two tokens, 30 ms apart, so that each arrives in its own read.
  ScriptedServer server(
      {"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nServer-Timing: app;dur=1.5\r\n"
       "Connection: close\r\n\r\n",
       "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
       "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n",
       "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
       "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"},
      30);
  const std::string body = http::BuildRequestBody({.model = "m", .max_tokens = 2}, "Say hello.");
  const RequestSpec spec{.url = server.url(),
                         .body = body,
                         .headers = {"Authorization: Bearer test-key", "X-Custom: 42"}};
  const RunControl control = Control();
  LoadResult result = Run(
      {.concurrency = 1, .requests = 1, .workers = 1}, [&](int64_t) { return spec; }, control);
  server.Join();
  REQUIRE(result.records.size() == 1);
  const RequestRecord& r = result.records[0];
  INFO(Describe(r));
  INFO(server.request());

  const std::string& request = server.request();
  const size_t head_end = request.find("\r\n\r\n");
  REQUIRE(head_end != std::string::npos);
  const std::string head = request.substr(0, head_end + 2);
  CHECK(StartsWith(head, "POST /v1/chat/completions HTTP/1.1\r\n"));
  std::smatch traceparent;
  REQUIRE(std::regex_search(
      head, traceparent, std::regex("\r\ntraceparent: 00-([0-9a-f]{32})-([0-9a-f]{16})-01\r\n")));
  CHECK(traceparent[1] == r.trace_id);
  CHECK(traceparent[2] != std::string(16, '0'));
  CHECK(head.find("\r\nContent-Type: application/json\r\n") != std::string::npos);
  CHECK(head.find("\r\nAccept: text/event-stream\r\n") != std::string::npos);
  CHECK(head.find("\r\nAuthorization: Bearer test-key\r\n") != std::string::npos);
  CHECK(head.find("\r\nX-Custom: 42\r\n") != std::string::npos);
  CHECK(head.find("\r\nExpect:") == std::string::npos);
  CHECK(request.substr(head_end + 4) == body);
  CHECK(body.find("\"stream\":true") != std::string::npos);
  CHECK(body.find("\"stream_options\":{\"include_usage\":true}") != std::string::npos);

  CHECK(r.outcome == Outcome::kOk);
  CHECK(r.http_status == 200);
  CHECK(r.answer_text == "Hello");
  CHECK(r.finish_reason == "stop");
  CHECK(r.output_tokens == 2);
  CHECK(r.input_tokens == 7);
  CHECK(r.server_timing == "app;dur=1.5");
  // Nothing is stamped before the server wrote it.
  const std::vector<int64_t>& written = server.write_ns();
  REQUIRE(written.size() == 4);
  REQUIRE(r.first_byte_ns);
  REQUIRE(r.end_ns);
  REQUIRE(r.chunk_times_ns.size() == 2);
  CHECK(*r.first_byte_ns + control.origin_ns >= written[0]);
  CHECK(r.chunk_times_ns[0] + control.origin_ns >= written[1]);
  CHECK(r.chunk_times_ns[1] + control.origin_ns >= written[2]);
  CHECK(*r.end_ns + control.origin_ns >= written[3]);
}

}  // namespace
}  // namespace stagegate::load
