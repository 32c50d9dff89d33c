// The load engine's scheduling and classification rules on a fake clock and a scripted
// transport: no socket, no sleep, and every time asserted to the nanosecond. The real-time
// witnesses of the same rules against the reference application are in engine_test.cc.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "http/scripted_transport.h"
#include "load/engine.h"
#include "load/schedule.h"

namespace stagegate::load {
namespace {

using http::ScriptedRequest;
using http::ScriptedResponse;

constexpr int64_t kMs = 1'000'000;

RequestSource Chat(bool stream = true) {
  RequestSpec spec{.url = "http://scripted.invalid/v1/chat/completions",
                   .body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})",
                   .stream = stream};
  return [spec](int64_t) { return spec; };
}

std::vector<Arrival> EveryMs(int64_t count, int64_t gap_ms) {
  std::vector<Arrival> arrivals;
  for (int64_t i = 0; i < count; ++i)
    arrivals.push_back({.sequence = i, .intended_ns = i * gap_ms * kMs});
  return arrivals;
}

/// One phase on one worker, on `clock`, answered by `script`.
LoadResult Run(FakeClock& clock, LoadOptions options, http::Script script,
               const RequestSource& source = Chat()) {
  options.workers = 1;
  const RunControl control{.clock = &clock,
                           .origin_ns = clock.NowNs(),
                           .transport = http::ScriptedTransport::Factory(clock, std::move(script))};
  Result<LoadResult> result = RunLoad(options, source, control);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return std::move(*result);
}

http::Script Streamed(int64_t ttft_ms, int64_t itl_ms, int tokens = 4) {
  std::vector<std::string> words;
  for (int i = 0; i < tokens; ++i)
    words.push_back("w" + std::to_string(i) + " ");
  return [=](const ScriptedRequest&) {
    return ScriptedResponse::StreamedAnswer(words, ttft_ms * kMs, itl_ms * kMs);
  };
}

TEST_CASE("scripted: an open loop sends each request at its intended time, and times are exact",
          "[load][fake]") {
  FakeClock clock;
  LoadOptions options{.arrivals = EveryMs(10, 100)};
  const LoadResult result = Run(clock, options, Streamed(50, 10));
  REQUIRE(result.records.size() == 10);
  for (const RequestRecord& r : result.records) {
    INFO("sequence " << r.sequence);
    CHECK(r.outcome == Outcome::kOk);
    CHECK(*r.sent_ns == r.intended_ns);  // no schedule lag
    CHECK(*r.first_token_ns - *r.sent_ns == 50 * kMs);
    CHECK(*r.end_ns - *r.sent_ns == 80 * kMs);  // 4 tokens, 10 ms apart
    CHECK(r.output_tokens == 4);
    CHECK(r.input_tokens == 10);
    CHECK(r.chunk_times_ns.size() == 4);
  }
  CHECK(result.records[3].intended_ns - result.records[2].intended_ns == 100 * kMs);
  // The phase ends with its last answer: 900 ms of arrivals and 80 ms for the last one.
  CHECK(result.ended_ns - result.started_ns == 980 * kMs);
}

TEST_CASE("scripted: under a cap an arrival waits for a slot, and the wait is its queue time",
          "[load][fake]") {
  FakeClock clock;
  LoadOptions options{.arrivals = EveryMs(4, 100), .max_concurrency = 1};
  const LoadResult result = Run(clock, options, Streamed(250, 0, 1));
  REQUIRE(result.records.size() == 4);
  for (int64_t i = 0; i < 4; ++i) {
    const RequestRecord& r = result.records[i];
    INFO("sequence " << i);
    CHECK(r.outcome == Outcome::kOk);
    // Each request takes 250 ms, so the i-th is sent at 250i, having waited 250i - 100i.
    CHECK(*r.sent_ns - result.started_ns == 250 * i * kMs);
    CHECK(r.queue_ns.value_or(0) == 150 * i * kMs);
  }
  CHECK(result.dropped == 0);
}

TEST_CASE("scripted: under a cap that drops, an arrival with no free slot is refused",
          "[load][fake]") {
  FakeClock clock;
  LoadOptions options{
      .arrivals = EveryMs(6, 100), .max_concurrency = 1, .when_full = WhenFull::kDrop};
  const LoadResult result = Run(clock, options, Streamed(250, 0, 1));
  REQUIRE(result.records.size() == 6);
  // Sent at 0 (busy to 250) and 300 (busy to 550); 100, 200, 400 and 500 find the slot taken.
  std::vector<Outcome> outcomes;
  for (const RequestRecord& r : result.records)
    outcomes.push_back(r.outcome);
  CHECK(outcomes == std::vector<Outcome>{Outcome::kOk, Outcome::kCancelled, Outcome::kCancelled,
                                         Outcome::kOk, Outcome::kCancelled, Outcome::kCancelled});
  CHECK(result.dropped == 4);
  CHECK_FALSE(result.records[1].sent_ns);
}

TEST_CASE("scripted: a closed loop sends the next request the moment one ends", "[load][fake]") {
  FakeClock clock;
  LoadOptions options{.concurrency = 2, .requests = 6};
  const LoadResult result = Run(clock, options, Streamed(100, 0, 1));
  REQUIRE(result.records.size() == 6);
  std::vector<int64_t> sent_ms;
  for (const RequestRecord& r : result.records)
    sent_ms.push_back((*r.sent_ns - result.started_ns) / kMs);
  std::sort(sent_ms.begin(), sent_ms.end());
  CHECK(sent_ms == std::vector<int64_t>{0, 0, 100, 100, 200, 200});
  CHECK(result.ended_ns - result.started_ns == 300 * kMs);
}

TEST_CASE("scripted: with ticks on the clock, each tick sees the phase at its exact time",
          "[load][fake]") {
  // 20 requests, one every 100 ms, each answered in 80 ms; ticks every 250 ms of the fake clock.
  // Each tick has every record that ended before it; the one at 1 s ends the schedule.
  FakeClock clock;
  const LoadOptions options{.arrivals = EveryMs(20, 100), .workers = 1};
  std::atomic<bool> end_schedule{false};
  std::vector<int64_t> tick_ms, ended_by_tick;
  int64_t ended = 0;
  RunControl control{.clock = &clock,
                     .origin_ns = clock.NowNs(),
                     .end_schedule = &end_schedule,
                     .tick_ms = 250,
                     .transport = http::ScriptedTransport::Factory(clock, Streamed(50, 10)),
                     .ticks_on_clock = true};
  control.on_records = [&](std::vector<RequestRecord> records) {
    ended += static_cast<int64_t>(records.size());
  };
  control.on_tick = [&](const LiveSnapshot& snapshot) {
    tick_ms.push_back((snapshot.now_ns - snapshot.phase_start_ns) / kMs);
    CHECK((snapshot.now_ns - snapshot.phase_start_ns) % kMs == 0);
    ended_by_tick.push_back(ended);
    if (tick_ms.back() == 1000) end_schedule.store(true);
  };
  Result<LoadResult> result = RunLoad(options, Chat(), control);
  REQUIRE(result.ok());
  CHECK(tick_ms == std::vector<int64_t>{250, 500, 750, 1000});
  // Requests sent at 0, 100, 200 end at 80, 180, 280 ms: two before the first tick.
  CHECK(ended_by_tick == std::vector<int64_t>{2, 5, 7, 10});
  // Sent: 0 to 900 ms. The one due at 1 s waits for the tick at 1 s, which ends the schedule,
  // so it and the 9 after it never go out; the phase ends there, its last answer in at 980 ms.
  int64_t sent = 0;
  for (const RequestRecord& r : result->records)
    sent += r.sent_ns.has_value();
  CHECK(sent == 10);
  CHECK(result->ended_ns - result->started_ns == 1000 * kMs);
}

TEST_CASE("scripted: a stream with no first token inside its timeout ends as a timeout",
          "[load][fake]") {
  FakeClock clock;
  LoadOptions options{.arrivals = EveryMs(1, 0), .timeouts = {.first_token_ms = 1000}};
  const LoadResult result = Run(clock, options, [](const ScriptedRequest&) {
    ScriptedResponse response = ScriptedResponse::StreamedAnswer({"late"}, 10 * kMs, 0);
    response.body.front().at_ns = 5000 * kMs;  // the headers come, the first token never in time
    response.body.back().at_ns = 5000 * kMs;
    return response;
  });
  REQUIRE(result.records.size() == 1);
  const RequestRecord& r = result.records[0];
  CHECK(r.outcome == Outcome::kTimeout);
  CHECK_THAT(r.error_message, Catch::Contains("first token"));
  CHECK_FALSE(r.first_token_ns);
  // Checked every 5 ms: ended after the timeout, by at most one check's interval.
  CHECK(*r.end_ns - *r.sent_ns > 1000 * kMs);
  CHECK(*r.end_ns - *r.sent_ns <= 1005 * kMs);
}

TEST_CASE("scripted: a response past the total timeout is cut at the timeout", "[load][fake]") {
  FakeClock clock;
  LoadOptions options{.arrivals = EveryMs(1, 0),
                      .timeouts = {.first_token_ms = 0, .total_ms = 2000}};
  const LoadResult result = Run(clock, options, Streamed(100, 1000, 5));  // ends at 4.1 s
  REQUIRE(result.records.size() == 1);
  const RequestRecord& r = result.records[0];
  CHECK(r.outcome == Outcome::kTimeout);
  CHECK(*r.end_ns - *r.sent_ns == 2000 * kMs);
  CHECK(r.chunk_times_ns.size() == 2);  // the tokens at 100 and 1100 ms arrived
}

TEST_CASE("scripted: a request still in flight after the grace period is cancelled then",
          "[load][fake]") {
  FakeClock clock;
  LoadOptions options{
      .arrivals = EveryMs(2, 100), .grace_s = 3, .timeouts = {.first_token_ms = 0, .total_ms = 0}};
  const LoadResult result = Run(clock, options, [](const ScriptedRequest&) {
    ScriptedResponse response = ScriptedResponse::StreamedAnswer({"a"}, 10 * kMs, 0);
    response.body.clear();
    response.hang = true;  // headers, then nothing, for ever
    return response;
  });
  REQUIRE(result.records.size() == 2);
  for (const RequestRecord& r : result.records) {
    CHECK(r.outcome == Outcome::kCancelled);
    CHECK_THAT(r.error_message, Catch::Contains("3 s after the phase ended"));
    // The last send (at 100 ms) ended the schedule; the grace period runs from there.
    CHECK(*r.end_ns - result.started_ns == 3100 * kMs);
  }
}

TEST_CASE("scripted: shed, denied, refused and broken answers are each classified",
          "[load][fake]") {
  FakeClock clock;
  LoadOptions options{.arrivals = EveryMs(5, 10)};
  int n = 0;
  const LoadResult result = Run(clock, options, [&n](const ScriptedRequest&) {
    switch (n++) {
      case 0:
        return ScriptedResponse::Error(429, 2 * kMs, {"Retry-After: 2"});
      case 1:
        return ScriptedResponse::Error(403, 3 * kMs);
      case 2:
        return ScriptedResponse::Failure(CURLE_COULDNT_CONNECT, 1 * kMs);
      case 3: {
        ScriptedResponse cut = ScriptedResponse::StreamedAnswer({"a", "b"}, 20 * kMs, 5 * kMs);
        cut.body.pop_back();  // no [DONE]: the server closed the stream early
        cut.end = CURLE_PARTIAL_FILE;
        return cut;
      }
      default:
        return ScriptedResponse::Error(500, 4 * kMs);
    }
  });
  REQUIRE(result.records.size() == 5);
  const std::vector<RequestRecord>& r = result.records;
  CHECK(r[0].outcome == Outcome::kShed);
  CHECK(r[0].http_status == 429);
  CHECK(r[0].retry_after_s == 2);
  CHECK(*r[0].end_ns - *r[0].sent_ns == 2 * kMs);
  CHECK(r[1].outcome == Outcome::kDenied);
  CHECK(r[1].http_status == 403);
  CHECK(r[2].outcome == Outcome::kTransportError);
  CHECK(r[2].curl_code == CURLE_COULDNT_CONNECT);
  CHECK_FALSE(r[2].http_status);
  CHECK(r[3].outcome == Outcome::kMalformedStream);
  CHECK(r[3].chunk_times_ns.size() == 2);
  CHECK(r[4].outcome == Outcome::kHttpError);
  CHECK(r[4].http_status == 500);
}

TEST_CASE("scripted: a whole answer is decoded and timed at its arrival", "[load][fake]") {
  FakeClock clock;
  LoadOptions options{.arrivals = EveryMs(1, 0)};
  const LoadResult result = Run(
      clock, options,
      [](const ScriptedRequest&) { return ScriptedResponse::WholeAnswer("Use MFA.", 120 * kMs); },
      Chat(false));
  REQUIRE(result.records.size() == 1);
  const RequestRecord& r = result.records[0];
  CHECK(r.outcome == Outcome::kOk);
  CHECK(*r.end_ns - *r.sent_ns == 120 * kMs);
  CHECK(r.output_tokens == 1);
}

}  // namespace
}  // namespace stagegate::load
