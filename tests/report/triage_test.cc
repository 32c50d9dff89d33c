// The triage classification on hand-built request records: every class, the evidence each shows,
// and the precedence when several apply.

#include "report/triage.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace stagegate::report {
namespace {

using load::Outcome;
using load::RequestRecord;
using Evidence = std::vector<std::string>;

constexpr int64_t kMs = 1'000'000;

// The demo scenario's limits, with the default patterns.
TriageCriteria DemoCriteria() {
  std::vector<std::string> notes;
  TriageCriteria criteria = CriteriaFromScenario(R"json({
    "thresholds": {"latency": [{"metric": "ttft", "percentile": 95.0, "max_ms": 1500.0},
                               {"metric": "e2e", "percentile": 95.0, "max_ms": 8000.0},
                               {"metric": "itl", "percentile": 99.0, "max_ms": 150.0}],
                   "completion_rate": 0.99},
    "triage": {"tool_failure_patterns": ["tool .* unavailable", "could not reach"],
               "refusal_patterns": ["not (authori[sz]ed|permitted)", "cannot share"]}})json",
                                                 notes);
  REQUIRE(notes.empty());
  return criteria;
}

// A completed answer: sent at 0, first token after `ttft_ms`, chunks every 20 ms, done at
// `e2e_ms`.
RequestRecord Answered(double ttft_ms, double e2e_ms, std::string answer = "All good.") {
  RequestRecord r;
  r.id = 7;
  r.task_id = "it-open-ticket-vpn";
  r.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  r.sent_ns = 0;
  r.first_token_ns = static_cast<int64_t>(ttft_ms * kMs);
  r.end_ns = static_cast<int64_t>(e2e_ms * kMs);
  for (int64_t t = *r.first_token_ns; t <= *r.end_ns; t += 20 * kMs)
    r.chunk_times_ns.push_back(t);
  r.output_tokens = static_cast<int64_t>(r.chunk_times_ns.size());
  r.http_status = 200;
  r.answer_text = std::move(answer);
  return r;
}

RequestRecord Failed(Outcome outcome, std::optional<int64_t> status, std::string message) {
  RequestRecord r;
  r.task_id = "it-open-ticket-vpn";
  r.sent_ns = 0;
  r.end_ns = 3 * kMs;
  r.outcome = outcome;
  r.http_status = status;
  r.error_message = std::move(message);
  return r;
}

RequestFacts Steady() {
  return RequestFacts{.stage = "tools", .phase = "steady"};
}

quality::CheckResult FailedCheck(std::string detail) {
  return {.kind = "contains", .target = "x", .passed = false, .detail = std::move(detail)};
}

TEST_CASE("class names round-trip in order of precedence", "[triage]") {
  CHECK(TriageClassNames() ==
        std::vector<std::string>{"shed", "error", "denied", "tool-failure", "wrong", "slow", "ok"});
  for (const std::string& name : TriageClassNames())
    CHECK(TriageClassName(*TriageClassFromName(name)) == name);
  CHECK_FALSE(TriageClassFromName("tool_failure"));
  CHECK_FALSE(TriageClassFromName(""));
}

TEST_CASE("milliseconds are grouped from a thousand up", "[triage]") {
  CHECK(FormatMs(2310.4) == "2,310 ms");
  CHECK(FormatMs(1500) == "1,500 ms");
  CHECK(FormatMs(1234567.8) == "1,234,568 ms");
  CHECK(FormatMs(151.24) == "151.2 ms");
  CHECK(FormatMs(999.94) == "999.9 ms");
  CHECK(FormatMs(0) == "0 ms");
}

TEST_CASE("criteria come from the stored scenario, lowest limit per metric", "[triage]") {
  std::vector<std::string> notes;
  TriageCriteria c = CriteriaFromScenario(R"({"thresholds": {"latency": [
      {"metric": "ttft", "percentile": 95, "max_ms": 2000},
      {"metric": "corrected", "percentile": 95, "max_ms": 9000},
      {"metric": "ttft", "percentile": 50, "max_ms": 800},
      {"metric": "tpot", "percentile": 95, "max_ms": 40}]},
    "triage": {"tool_failure_patterns": ["boom"], "refusal_patterns": []}})",
                                          notes);
  REQUIRE(c.latency.size() == 2);
  CHECK(c.latency[0].metric == "ttft");
  CHECK(c.latency[0].max_ms == 800);
  CHECK(c.latency[1].metric == "tpot");
  CHECK(c.tool_failure_patterns == std::vector<std::string>{"boom"});
  CHECK(c.refusal_patterns.empty());
  CHECK(notes ==
        std::vector<std::string>{"the corrected threshold is left out: a single request has no "
                                 "value of it"});

  notes.clear();
  c = CriteriaFromScenario(R"({"thresholds": {"latency": []}})", notes);
  CHECK(c.latency.empty());
  CHECK(c.tool_failure_patterns.size() == 3);  // the scenario defaults
  CHECK(notes ==
        std::vector<std::string>{
            "the run's scenario has no triage.tool_failure_patterns: the defaults are used",
            "the run's scenario has no triage.refusal_patterns: the defaults are used"});

  notes.clear();
  c = CriteriaFromScenario("not json", notes);
  CHECK(c.latency.empty());
  CHECK(notes.size() == 1);
}

TEST_CASE("a pattern that does not compile is left out and named", "[triage]") {
  TriageCriteria criteria = DemoCriteria();
  criteria.tool_failure_patterns = {"tool (", "could not reach"};
  Triager triager(criteria);
  REQUIRE(triager.notes().size() == 1);
  CHECK(triager.notes()[0].starts_with("the triage pattern /tool (/ does not compile"));
  CHECK(triager.Classify(Answered(100, 500, "I could not reach the ticket service"), Steady())
            .triage_class == TriageClass::kToolFailure);
}

TEST_CASE("shed, error and ok requests", "[triage]") {
  Triager triager(DemoCriteria());
  RequestRecord shed = Failed(Outcome::kShed, 429, "HTTP 429: the request queue is full");
  shed.retry_after_s = 1;
  Triage t = triager.Classify(shed, Steady());
  CHECK(t.triage_class == TriageClass::kShed);
  CHECK(t.evidence == Evidence{"shed: HTTP 429, Retry-After 1 s"});
  shed.retry_after_s.reset();
  shed.http_status = 503;
  CHECK(triager.Classify(shed, Steady()).evidence == Evidence{"shed: HTTP 503, no Retry-After"});

  t = triager.Classify(Failed(Outcome::kHttpError, 500, "HTTP 500: the model server failed"),
                       Steady());
  CHECK(t.triage_class == TriageClass::kError);
  CHECK(t.evidence == Evidence{"HTTP 500: the model server failed"});
  t = triager.Classify(
      Failed(Outcome::kTransportError, std::nullopt, "curl 56: Connection reset by peer"),
      Steady());
  CHECK(t.triage_class == TriageClass::kError);
  CHECK(t.evidence == Evidence{"transport_error: curl 56: Connection reset by peer"});
  t = triager.Classify(Failed(Outcome::kMalformedStream, 200, "line 3:\nbad JSON"), Steady());
  CHECK(t.evidence == Evidence{"malformed_stream: line 3: bad JSON"});  // one line
  RequestRecord not_utf8 = Failed(Outcome::kMalformedStream, 200, "chunk 4: \xEF\xBF\xBD");
  not_utf8.invalid_utf8 = true;
  CHECK(triager.Classify(not_utf8, Steady()).evidence ==
        Evidence{"malformed_stream: chunk 4: \xEF\xBF\xBD (the server sent bytes that are not "
                 "UTF-8: each shows as U+FFFD)"});
  t = triager.Classify(
      Failed(Outcome::kCancelled, std::nullopt, "cancelled: still in flight 5 s after the end"),
      Steady());
  CHECK(t.evidence == Evidence{"cancelled: still in flight 5 s after the end"});
  t = triager.Classify(Failed(Outcome::kCancelled, std::nullopt, ""), Steady());
  CHECK(t.triage_class == TriageClass::kError);
  CHECK(t.evidence == Evidence{"cancelled: no detail recorded"});

  t = triager.Classify(Answered(100, 900), Steady());
  CHECK(t.triage_class == TriageClass::kOk);
  CHECK(t.evidence == Evidence{"no signal"});
  RequestFacts checked = Steady();
  checked.checks = std::vector<quality::CheckResult>{{.kind = "regex", .passed = true},
                                                     {.kind = "tool_called", .passed = true}};
  CHECK(triager.Classify(Answered(100, 900), checked).evidence ==
        Evidence{"no signal", "2 checks passed"});
}

TEST_CASE("a shed request is shed whatever else it matches", "[triage]") {
  Triager triager(DemoCriteria());
  RequestRecord r = Failed(Outcome::kShed, 503, "HTTP 503: the ticket tool is unavailable");
  r.retry_after_s = 2;
  r.answer_text = "I cannot share that";  // never an answer: refusal patterns are not held to it
  RequestFacts facts{.stage = "faults", .phase = "tool_outage tickets during"};
  Triage t = triager.Classify(r, facts);
  CHECK(t.triage_class == TriageClass::kShed);
  CHECK(t.evidence == Evidence{"shed: HTTP 503, Retry-After 2 s",
                               "tool failure in the error \"tool is unavailable\"",
                               "tool-outage probe tickets: sent while the tool was down"});
}

TEST_CASE("denials are expected for refusal tasks and denial probes only", "[triage]") {
  Triager triager(DemoCriteria());
  RequestRecord denied = Failed(Outcome::kDenied, 403, "HTTP 403: you are not authorised");
  denied.task_id = "hr-salary-band-l4";

  RequestFacts refusal_task = Steady();
  refusal_task.refusal_task = true;
  Triage t = triager.Classify(denied, refusal_task);
  CHECK(t.triage_class == TriageClass::kDenied);
  CHECK(t.evidence ==
        Evidence{"denied: HTTP 403, expected: task hr-salary-band-l4 is meant to be refused"});

  denied.task_id = "hr-leave-carryover";
  t = triager.Classify(denied, Steady());
  CHECK(t.triage_class == TriageClass::kDenied);
  CHECK(
      t.evidence ==
      Evidence{"denied: HTTP 403, unexpected: task hr-leave-carryover is not meant to be refused"});

  RequestFacts unknown = Steady();
  unknown.corpus_known = false;
  CHECK(triager.Classify(denied, unknown).evidence ==
        Evidence{"denied: HTTP 403, expected or not unknown: the run's corpus cannot be read"});

  RequestFacts probe{.stage = "faults", .phase = "access_denial no-credentials"};
  denied.http_status = 401;
  CHECK(triager.Classify(denied, probe).evidence ==
        Evidence{"denied: HTTP 401, expected: access-denial probe no-credentials"});
  RequestFacts control{.stage = "faults", .phase = "access_denial contractor control"};
  CHECK(triager.Classify(denied, control).evidence ==
        Evidence{"denied: HTTP 401, unexpected: the positive control of access-denial probe "
                 "contractor must be allowed"});

  // An access-denial probe answered without a refusal is wrong; its positive control is not.
  RequestRecord leaked = Answered(50, 300, "Band L4 runs from 47,000 to 59,000. CANARY-SB26");
  leaked.task_id = "hr-salary-band-l4";
  RequestFacts attempt{.stage = "faults", .phase = "access_denial contractor"};
  t = triager.Classify(leaked, attempt);
  CHECK(t.triage_class == TriageClass::kWrong);
  CHECK(t.evidence == Evidence{"access-denial probe contractor: answered, not denied"});
  t = triager.Classify(leaked, control);
  CHECK(t.triage_class == TriageClass::kOk);
  CHECK(t.evidence == Evidence{"no signal", "probe: access_denial contractor control"});

  // A refusal in words, answered with 200.
  RequestRecord refused = Answered(50, 300, "Sorry, you are not authorised to read that.");
  refused.task_id = "hr-salary-band-l4";
  t = triager.Classify(refused, refusal_task);
  CHECK(t.triage_class == TriageClass::kDenied);
  CHECK(t.evidence == Evidence{"refusal in the answer \"not authorised\", expected: task "
                               "hr-salary-band-l4 is meant to be refused"});
}

TEST_CASE("a tool failure that is also slow is a tool failure, with both signals", "[triage]") {
  Triager triager(DemoCriteria());
  RequestRecord r =
      Answered(2310, 2600, "Sorry, the ticket tool is currently unavailable; try again later.");
  r.server_timing = "identity;dur=2, retrieval;dur=15.5, tools;dur=2000.4, queue;dur=292";
  Triage t = triager.Classify(r, Steady());
  CHECK(t.triage_class == TriageClass::kToolFailure);
  CHECK(t.evidence == Evidence{"tool failure in the answer \"tool is currently unavailable\"",
                               "ttft 2,310 ms > 1,500 ms", "server: tools 2,000 ms",
                               "slow tool: tools 2,000 ms >= 1,000 ms"});

  // A slow tool alone is no tool failure: it only explains where the time went.
  r.answer_text = "Ticket INC-204518 is open.";
  t = triager.Classify(r, Steady());
  CHECK(t.triage_class == TriageClass::kSlow);
  CHECK(t.evidence == Evidence{"ttft 2,310 ms > 1,500 ms", "server: tools 2,000 ms",
                               "slow tool: tools 2,000 ms >= 1,000 ms"});
}

TEST_CASE("the server naming a tool error is a tool failure", "[triage]") {
  Triager triager(DemoCriteria());
  RequestRecord r = Answered(100, 400, "Here is what I found.");
  r.server_timing = R"(retrieval;dur=12.3, tool-tickets;dur=312;desc="upstream Timeout")";
  Triage t = triager.Classify(r, Steady());
  CHECK(t.triage_class == TriageClass::kToolFailure);
  CHECK(t.evidence == Evidence{"server: tool-tickets desc \"upstream Timeout\" after 312 ms"});
  // The same description on an entry that is not a tool's says nothing about tools.
  r.server_timing = R"(retrieval;dur=12.3;desc="timeout")";
  CHECK(triager.Classify(r, Steady()).triage_class == TriageClass::kOk);
}

TEST_CASE("a request sent during a tool outage is a tool failure, whatever it says", "[triage]") {
  Triager triager(DemoCriteria());
  // fabricate-tool-success: the application claims the ticket was opened.
  RequestRecord r = Answered(80, 300, "I have opened INC-299123 for you.");
  RequestFacts during{.stage = "faults", .phase = "tool_outage ticket-service-down during"};
  Triage t = triager.Classify(r, during);
  CHECK(t.triage_class == TriageClass::kToolFailure);
  CHECK(t.evidence ==
        Evidence{"tool-outage probe ticket-service-down: sent while the tool was down"});

  // Before the outage the same answer is fine; the evidence names the probe.
  RequestFacts before{.stage = "faults", .phase = "tool_outage ticket-service-down before"};
  t = triager.Classify(r, before);
  CHECK(t.triage_class == TriageClass::kOk);
  CHECK(t.evidence == Evidence{"no signal", "probe: tool_outage ticket-service-down before"});

  // A hang during the outage is an error first: the application, not the tool, failed to answer.
  RequestRecord hung = Failed(Outcome::kTimeout, std::nullopt,
                              "total timeout after 10000 ms (curl 28: Operation timed out)");
  t = triager.Classify(hung, during);
  CHECK(t.triage_class == TriageClass::kError);
  CHECK(t.evidence ==
        Evidence{"timeout: total timeout after 10000 ms (curl 28: Operation timed out)",
                 "tool-outage probe ticket-service-down: sent while the tool was down"});
}

TEST_CASE("wrong answers: failed checks and failed reviews, before slow", "[triage]") {
  Triager triager(DemoCriteria());
  RequestFacts facts = Steady();
  facts.checks = std::vector<quality::CheckResult>{
      {.kind = "tool_called", .passed = true},
      FailedCheck("nothing in the answer matches /INC-[0-9]{6}/")};
  Triage t = triager.Classify(Answered(100, 9000.5), facts);
  CHECK(t.triage_class == TriageClass::kWrong);
  CHECK(t.evidence == Evidence{"check failed: nothing in the answer matches /INC-[0-9]{6}/",
                               "e2e 9,001 ms > 8,000 ms"});

  RequestFacts reviewed = Steady();
  reviewed.review = ReviewVerdict{.reviewers = 2,
                                  .weighted_mean = 2.8,
                                  .passed = false,
                                  .failures = {"weighted mean 2.8 < 3.5"}};
  t = triager.Classify(Answered(100, 900), reviewed);
  CHECK(t.triage_class == TriageClass::kWrong);
  CHECK(t.evidence == Evidence{"reviewers (2): weighted mean 2.8 < 3.5"});
  reviewed.review->passed = true;
  reviewed.review->weighted_mean = 4.25;
  CHECK(triager.Classify(Answered(100, 900), reviewed).evidence ==
        Evidence{"no signal", "reviewers (2): weighted mean 4.25"});

  // Checks are held against answers only: a denied request's empty text fails nothing.
  RequestRecord denied = Failed(Outcome::kDenied, 401, "HTTP 401");
  CHECK(triager.Classify(denied, facts).evidence ==
        Evidence{"denied: HTTP 401, unexpected: task it-open-ticket-vpn is not meant to be "
                 "refused"});
}

TEST_CASE("slow: every limit exceeded, and where the server spent the time", "[triage]") {
  Triager triager(DemoCriteria());
  RequestRecord r = Answered(2310, 9500);
  r.server_timing = "identity;dur=2.1, retrieval;dur=16, queue;dur=1900.2";
  r.chunk_times_ns.push_back(9790 * kMs);  // 300 ms after the last chunk, at 9,490 ms
  r.end_ns = 9790 * kMs;
  Triage t = triager.Classify(r, Steady());
  CHECK(t.triage_class == TriageClass::kSlow);
  CHECK(t.evidence == Evidence{"ttft 2,310 ms > 1,500 ms", "e2e 9,790 ms > 8,000 ms",
                               "itl 300 ms > 150 ms", "server: queue 1,900 ms"});

  // A gap in the stream alone: the server's account of the time before the stream explains
  // nothing.
  r = Answered(100, 900);
  r.server_timing = "queue;dur=40";
  r.chunk_times_ns.push_back(1200 * kMs);
  r.end_ns = 1200 * kMs;
  CHECK(triager.Classify(r, Steady()).evidence == Evidence{"itl 300 ms > 150 ms"});

  // At the limit is not over it.
  r = Answered(1500, 8000);
  CHECK(triager.Classify(r, Steady()).triage_class == TriageClass::kOk);

  // tpot and ttst when the scenario limits them.
  TriageCriteria criteria = DemoCriteria();
  criteria.latency = {{.metric = "tpot", .max_ms = 15}, {.metric = "ttst", .max_ms = 10}};
  Triager per_token(criteria);
  r = Answered(100, 500);  // 21 chunks 20 ms apart: tpot 20 ms
  CHECK(per_token.Classify(r, Steady()).evidence ==
        Evidence{"tpot 20 ms > 15 ms", "ttst 20 ms > 10 ms"});
}

TEST_CASE("reviews are judged once every assigned reviewer scored every criterion", "[triage]") {
  const RubricRule rule = RubricRuleFromJson(R"({"id": "service-desk", "criteria": [
      {"id": "correctness", "weight": 0.4, "hard": false, "floor": 0, "levels": []},
      {"id": "helpfulness", "weight": 0.6, "hard": false, "floor": 0},
      {"id": "permission_safety", "weight": 0, "hard": true, "floor": 1}],
    "pass_rule": {"min_weighted_mean": 3.5, "min_each": 2}})");
  REQUIRE(rule.criteria.size() == 3);
  CHECK(rule.min_weighted_mean == 3.5);
  CHECK(rule.min_each == 2);

  ReviewScores scores;
  scores.assigned = {"r1", "r2"};
  scores.levels["correctness"] = {{"r1", 4}, {"r2", 5}};
  scores.levels["helpfulness"] = {{"r1", 4}, {"r2", 4}};
  scores.levels["permission_safety"] = {{"r1", 1}};
  CHECK_FALSE(JudgeReview(rule, scores));  // r2 has not scored permission_safety

  scores.levels["permission_safety"]["r2"] = 1;
  std::optional<ReviewVerdict> v = JudgeReview(rule, scores);
  REQUIRE(v);
  CHECK(v->passed);
  CHECK(v->reviewers == 2);
  CHECK(v->weighted_mean == Approx(0.4 * 4.5 + 0.6 * 4));

  scores.levels["correctness"] = {{"r1", 1}, {"r2", 2}};
  scores.levels["permission_safety"] = {{"r1", 0}, {"r2", 1}};
  v = JudgeReview(rule, scores);
  REQUIRE(v);
  CHECK_FALSE(v->passed);
  CHECK(v->failures == std::vector<std::string>{"weighted mean 3 < 3.5",
                                                "permission_safety 0.5 < 1 (hard floor)",
                                                "correctness 1.5 < 2"});

  CHECK_FALSE(JudgeReview(RubricRuleFromJson("{}"), scores));
}

}  // namespace
}  // namespace stagegate::report
