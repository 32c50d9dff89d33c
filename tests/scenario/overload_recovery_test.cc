// Recoverability's load rules on a fake clock and a scripted application: how an overload was
// shed (FindOverload) and how long latency took to come back (RecoverySamples, FindRecovery),
// from records the load engine made, every time exact. The real-time witnesses are the run
// command's tests against the reference application and the demo.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/fake_clock.h"
#include "http/scripted_transport.h"
#include "load/engine.h"
#include "load/schedule.h"
#include "scenario/findings.h"
#include "stats/recovery.h"

namespace stagegate::scenario {
namespace {

using http::ScriptedRequest;
using http::ScriptedResponse;

constexpr int64_t kMs = 1'000'000;

// One server that answers a request in 100 ms (10 requests a second), its first token 50 ms
// into that, first come first served. A request that would wait more than 500 ms for it is
// refused as the policy asks (429 with Retry-After, 2 ms after the send), or not as it asks
// (`shed` below).
struct Application {
  enum class Shed { kClearly, kSlowly, kWithoutRetryAfter, kNever };
  Shed shed = Shed::kClearly;
  int64_t free_at_ns = 0;  // on the clock: when the server is next free

  http::Script Overloaded() {
    return [this](const ScriptedRequest& request) {
      const int64_t start = std::max(request.sent_ns, free_at_ns);
      const int64_t wait = start - request.sent_ns;
      if (wait > 500 * kMs) {
        switch (shed) {
          case Shed::kClearly:
            return ScriptedResponse::Error(429, 2 * kMs, {"Retry-After: 1"});
          case Shed::kSlowly:
            return ScriptedResponse::Error(503, 800 * kMs, {"Retry-After: 1"});
          case Shed::kWithoutRetryAfter:
            return ScriptedResponse::Error(429, 2 * kMs);
          case Shed::kNever: {
            ScriptedResponse hang;
            hang.hang = true;
            return hang;
          }
        }
      }
      free_at_ns = start + 100 * kMs;
      return ScriptedResponse::StreamedAnswer({"a ", "b "}, wait + 50 * kMs, 50 * kMs);
    };
  }

  // After the overload, at 5 requests a second, every request has the server to itself; those
  // sent before `warm_at_ns` (on the clock) wait 600 ms for their first token, as an application
  // whose cache the overload emptied would, the others 50 ms.
  static http::Script Recovering(int64_t warm_at_ns) {
    return [warm_at_ns](const ScriptedRequest& request) {
      const int64_t ttft = request.sent_ns < warm_at_ns ? 600 * kMs : 50 * kMs;
      return ScriptedResponse::StreamedAnswer({"a ", "b "}, ttft, 50 * kMs);
    };
  }
};

const load::RequestSource kChat = [](int64_t) {
  return load::RequestSpec{.url = "http://scripted.invalid/v1/chat/completions",
                           .body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})",
                           .stream = true};
};

// One phase at `rate` for `duration_s`, on one worker, on `clock` from `origin_ns`.
load::LoadResult Phase(FakeClock& clock, int64_t origin_ns, double rate, double duration_s,
                       http::Script script) {
  Result<std::vector<load::Arrival>> arrivals =
      load::BuildOpenLoop({.rate = rate, .duration_s = duration_s});
  REQUIRE(arrivals.ok());
  const load::LoadOptions options{
      .arrivals = *arrivals, .workers = 1, .timeouts = {.first_token_ms = 1000, .total_ms = 2000}};
  const load::RunControl control{
      .clock = &clock,
      .origin_ns = origin_ns,
      .transport = http::ScriptedTransport::Factory(clock, std::move(script))};
  Result<load::LoadResult> result = load::RunLoad(options, kChat, control);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return std::move(*result);
}

const ThresholdCheck& Check(const OverloadFinding& finding, const std::string& prefix) {
  const auto found =
      std::find_if(finding.checks.begin(), finding.checks.end(),
                   [&](const ThresholdCheck& c) { return c.name.starts_with(prefix); });
  REQUIRE(found != finding.checks.end());
  return *found;
}

TEST_CASE("an overload shed clearly passes every shedding rule, with exact counts",
          "[scenario][fake]") {
  // 40 requests a second for 1 s, one every 25 ms, at an application of 10 a second. The first 7
  // wait at most 450 ms; from then on the server is free 500 ms after every fourth arrival, so
  // one in four is taken (sequences 8, 12, ..., 36) and the other three would wait 525 to 575
  // ms: 15 answered, 25 shed.
  FakeClock clock;
  Application app;
  const load::LoadResult overload = Phase(clock, clock.NowNs(), 40, 1, app.Overloaded());
  REQUIRE(overload.records.size() == 40);
  const OverloadFinding finding = FindOverload(overload.records, {.max_shed_latency_ms = 500}, {});
  CHECK(finding.offered == 40);
  CHECK(finding.ok == 15);
  CHECK(finding.shed == 25);
  CHECK(finding.shed_with_retry_after == 25);
  CHECK(finding.timeouts == 0);
  CHECK(finding.other_failures == 0);
  CHECK(finding.statuses == std::map<int64_t, int64_t>{{429, 25}});
  CHECK(finding.shed_latency_ms.max == 2);
  CHECK(finding.shed_latency_ms.min == 2);
  std::set<int64_t> answered;
  for (const load::RequestRecord& r : overload.records)
    if (r.outcome == load::Outcome::kOk) answered.insert(r.sequence);
  CHECK(answered == std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 20, 24, 28, 32, 36});
  for (const ThresholdCheck& check : finding.checks) {
    INFO(check.name);
    CHECK(check.passed);
  }
  CHECK(*Check(finding, "shed answers p95").measured == 2);
}

TEST_CASE("an overload shed slowly, without Retry-After or not at all fails the rule it breaks",
          "[scenario][fake]") {
  FakeClock clock;
  Application app;
  SECTION("shed after 800 ms, over the 500 ms allowed") {
    app.shed = Application::Shed::kSlowly;
    const load::LoadResult overload = Phase(clock, clock.NowNs(), 40, 1, app.Overloaded());
    const OverloadFinding f = FindOverload(overload.records, {.max_shed_latency_ms = 500}, {});
    CHECK(f.shed == 25);
    CHECK(f.statuses == std::map<int64_t, int64_t>{{503, 25}});
    const ThresholdCheck& fast = Check(f, "shed answers p95 <= 500 ms");
    CHECK_FALSE(fast.passed);
    CHECK(*fast.measured == 800);
    CHECK(Check(f, "every shed answer carries Retry-After").passed);
    CHECK(Check(f, "no request hangs").passed);
  }
  SECTION("shed without Retry-After, which the policy requires") {
    app.shed = Application::Shed::kWithoutRetryAfter;
    const load::LoadResult overload = Phase(clock, clock.NowNs(), 40, 1, app.Overloaded());
    const OverloadFinding f = FindOverload(overload.records, {.require_retry_after = true}, {});
    CHECK(f.shed == 25);
    CHECK(f.shed_with_retry_after == 0);
    const ThresholdCheck& retry = Check(f, "every shed answer carries Retry-After");
    CHECK_FALSE(retry.passed);
    CHECK(*retry.measured == 25);
    CHECK(Check(f, "shed answers p95").passed);
    // Not required: the same answers pass, and the check is not made.
    const OverloadFinding lax = FindOverload(overload.records, {.require_retry_after = false}, {});
    CHECK(std::none_of(lax.checks.begin(), lax.checks.end(), [](const ThresholdCheck& c) {
      return c.name.find("Retry-After") != c.name.npos;
    }));
    CHECK(std::all_of(lax.checks.begin(), lax.checks.end(),
                      [](const ThresholdCheck& c) { return c.passed; }));
  }
  SECTION("never answered: each hangs until its first-token timeout") {
    app.shed = Application::Shed::kNever;
    const load::LoadResult overload = Phase(clock, clock.NowNs(), 40, 1, app.Overloaded());
    const OverloadFinding f = FindOverload(overload.records, {}, {});
    CHECK(f.ok == 15);
    CHECK(f.shed == 0);
    CHECK(f.timeouts == 25);
    const ThresholdCheck& hangs =
        Check(f, "no request hangs (until a timeout, or past the grace period)");
    CHECK_FALSE(hangs.passed);
    CHECK(*hangs.measured == 25);
    for (const load::RequestRecord& r : overload.records)
      if (r.outcome == load::Outcome::kTimeout) {
        REQUIRE(r.sent_ns);
        REQUIRE(r.end_ns);
        // The first-token timeout, found by the scan of waiting requests every 5 ms.
        CHECK(*r.end_ns - *r.sent_ns > 1000 * kMs);
        CHECK(*r.end_ns - *r.sent_ns <= 1005 * kMs);
      }
  }
}

TEST_CASE("recovery is timed from the overload's end to the first window back within limits",
          "[scenario][fake]") {
  // The overload above, then 5 requests a second for 4 s on the same clock. Requests sent until
  // 2.5 s after the overload started wait 600 ms for their first token (a TTFT limit of 300 ms);
  // the later ones 50 ms.
  FakeClock clock;
  const int64_t origin = clock.NowNs();
  Application app;
  const load::LoadResult overload = Phase(clock, origin, 40, 1, app.Overloaded());
  const int64_t overload_end = overload.started_ns + 1000 * kMs;  // as the runner times it
  const stats::RecoveryCriteria criteria{
      .window_s = 1, .max_ttft_p95_ms = 300, .max_e2e_p95_ms = 1000, .min_requests = 3};

  SECTION("it recovers once the slow answers have left the window") {
    const int64_t warm_at = origin + overload.started_ns + 2500 * kMs;
    const load::LoadResult recovery = Phase(clock, origin, 5, 4, Application::Recovering(warm_at));
    REQUIRE(recovery.records.size() == 20);
    // The overload's last answer ended 1.5 s after it started; the recovery started after it.
    const int64_t r0 = recovery.started_ns;
    REQUIRE(r0 >= overload.started_ns + 1500 * kMs);
    REQUIRE(r0 < overload.started_ns + 1700 * kMs);
    // Sent at r0 + 200 ms i: i = 0..4 went before warm_at and end at r0 + 200 i + 650 ms, the
    // last at r0 + 1450 ms; every other ends at r0 + 200 i + 100 ms. The first 1 s window that
    // holds none of the slow ones ends at the answer of i = 12, at r0 + 2500 ms: (r0 + 1500,
    // r0 + 2500] holds i = 8 to 12.
    const stats::RecoveryFinding found =
        stats::FindRecovery(RecoverySamples(recovery.records, overload_end, {}), criteria);
    REQUIRE(found.recovered_after_s);
    CHECK(*found.recovered_after_s ==
          Approx(static_cast<double>(r0 + 2500 * kMs - overload_end) / 1e9).epsilon(1e-12));
    REQUIRE(found.ttft_p95_ms);
    REQUIRE(found.e2e_p95_ms);
    CHECK(*found.ttft_p95_ms == Approx(50).epsilon(1e-12));
    CHECK(*found.e2e_p95_ms == Approx(100).epsilon(1e-12));
  }
  SECTION("it does not recover while every answer is slow") {
    const load::LoadResult recovery =
        Phase(clock, origin, 5, 4, Application::Recovering(origin + 3'600'000 * kMs));
    const stats::RecoveryFinding found =
        stats::FindRecovery(RecoverySamples(recovery.records, overload_end, {}), criteria);
    CHECK_FALSE(found.recovered_after_s);
    REQUIRE(found.ttft_p95_ms);
    CHECK(*found.ttft_p95_ms == Approx(600).epsilon(1e-12));
    CHECK(
        stats::DescribeRecovery(found, criteria, 4.5).starts_with("did not recover within 4.5 s"));
  }
}

TEST_CASE("a rightly denied request does not hold recovery back, and has no latency in it",
          "[scenario][recovery]") {
  // Answers 100 ms apart, each 50 ms from send to first token and 80 ms to its end; the third
  // asks for the salary bands as a contractor and is denied (403), which that task expects.
  std::vector<load::RequestRecord> records;
  for (int64_t i = 0; i < 8; ++i) {
    load::RequestRecord r;
    r.task_id = i == 2 ? "hr-salary-band-l4" : "it-vpn";
    r.sent_ns = i * 100 * kMs;
    if (i == 2) {
      r.outcome = load::Outcome::kDenied;
      r.first_token_ns = *r.sent_ns + 90 * kMs;  // a slow 403: its time is not an answer's
      r.end_ns = *r.sent_ns + 95 * kMs;
    } else {
      r.outcome = load::Outcome::kOk;
      r.first_token_ns = *r.sent_ns + 50 * kMs;
      r.end_ns = *r.sent_ns + 80 * kMs;
    }
    records.push_back(r);
  }
  const stats::RecoveryCriteria criteria{
      .window_s = 0.35, .max_ttft_p95_ms = 60, .max_e2e_p95_ms = 90, .min_requests = 3};
  const std::vector<stats::RecoverySample> rightly =
      RecoverySamples(records, 0, {"hr-salary-band-l4"});
  REQUIRE(rightly.size() == 8);
  CHECK(rightly[2].ok);
  CHECK_FALSE(rightly[2].ttft_ms);
  CHECK_FALSE(rightly[2].e2e_ms);
  // The first window of three: answers 0 and 1 and the denial, ending at 0.295 s.
  const stats::RecoveryFinding found = stats::FindRecovery(rightly, criteria);
  REQUIRE(found.recovered_after_s);
  CHECK(*found.recovered_after_s == Approx(0.295).epsilon(1e-12));
  // A denial of a task that should be answered is a failure: the first window without it holds
  // answers 3 to 6, ending at 0.68 s.
  const stats::RecoveryFinding wrongly =
      stats::FindRecovery(RecoverySamples(records, 0, {}), criteria);
  CHECK_FALSE(RecoverySamples(records, 0, {})[2].ok);
  REQUIRE(wrongly.recovered_after_s);
  CHECK(*wrongly.recovered_after_s == Approx(0.68).epsilon(1e-12));
}

}  // namespace
}  // namespace stagegate::scenario
