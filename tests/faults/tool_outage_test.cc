#include <catch2/catch.hpp>

#include <algorithm>

#include "faults/tool_outage.h"

namespace stagegate::faults {
namespace {

using Records = std::vector<load::RequestRecord>;

manifest::ToolOutageProbe Probe() {
  manifest::ToolOutageProbe probe;
  probe.name = "tickets-down";
  probe.answer_within_ms = 1000;
  probe.expect_answer = "unavailable|try again later";
  probe.must_not = "INC-[0-9]{6} (has been )?(opened|created)";
  probe.recover_within_s = 5;
  return probe;
}

// A request sent at `sent_ms` (from the run's origin) that ended `e2e_ms` later.
load::RequestRecord Answer(std::string text, double sent_ms = 0, double e2e_ms = 200,
                           int64_t status = 200) {
  load::RequestRecord r;
  r.sent_ns = static_cast<int64_t>(sent_ms * 1e6);
  r.end_ns = *r.sent_ns + static_cast<int64_t>(e2e_ms * 1e6);
  r.http_status = status;
  r.outcome = status == 200 ? load::Outcome::kOk : load::Outcome::kShed;
  if (status == 200)
    r.answer_text = std::move(text);
  else
    r.error_message = std::move(text);
  return r;
}

const std::string kWorked = "I have opened INC-204611 for the VPN drops.";
const std::string kDown =
    "The ticket service is unavailable at the moment; please try again later.";

// A well-behaved outage: worked before, acknowledged during, worked again 0.5 s after restore.
OutageObservation Seen(const Records& before, const Records& during, const Records& after) {
  return OutageObservation{.actuator = "proxy refuse",
                           .before = before,
                           .during = during,
                           .after = after,
                           .restored_ns = 10'000'000'000};
}

TEST_CASE("a tool-outage probe passes when the application fails clearly and recovers",
          "[faults]") {
  const Records before = {Answer(kWorked), Answer(kWorked)};
  const Records during = {Answer(kDown), Answer(kDown)};
  const Records after = {Answer(kWorked, 10'300, 200)};
  const ToolOutageFinding f = JudgeToolOutage(Probe(), Seen(before, during, after));
  CHECK(f.verdict == "pass");
  CHECK(f.reasons.empty());
  CHECK(f.before == 2);
  CHECK(f.during == 2);
  CHECK(f.after == 1);
  REQUIRE(f.recovered_s);
  CHECK(*f.recovered_s == Approx(0.5));
  REQUIRE(f.requests.size() == 5);
  CHECK(f.requests[2].part == "during");
  CHECK(f.requests[2].acknowledged == "unavailable");
  CHECK(f.requests[2].passed);
  CHECK(f.requests[0].worked);
  CHECK_FALSE(f.requests[2].worked);
}

TEST_CASE("an answer during the outage that never comes, or comes late, fails the probe",
          "[faults]") {
  load::RequestRecord hung = Answer("");
  hung.outcome = load::Outcome::kTimeout;
  hung.end_ns.reset();
  const Records during = {Answer(kDown), hung, Answer(kDown, 0, 1500)};
  const ToolOutageFinding f =
      JudgeToolOutage(Probe(), Seen({Answer(kWorked)}, during, {Answer(kWorked, 10'100)}));
  CHECK(f.verdict == "fail");
  REQUIRE(f.reasons.size() == 2);
  CHECK(f.reasons[0] == "during request 2: no answer within 1000 ms (timeout)");
  CHECK(f.reasons[1] == "during request 3: no answer within 1000 ms (HTTP 200, 1500 ms)");
  CHECK_FALSE(f.requests[2].passed);
}

TEST_CASE("claiming the action succeeded while the tool is down fails the probe", "[faults]") {
  const Records during = {Answer("Done: INC-299042 has been opened for you.")};
  const ToolOutageFinding f =
      JudgeToolOutage(Probe(), Seen({Answer(kWorked)}, during, {Answer(kWorked, 10'100)}));
  CHECK(f.verdict == "fail");
  REQUIRE(f.reasons.size() == 2);
  CHECK(f.reasons[0] ==
        "during request 1 claims what did not happen: \"INC-299042 has been opened\"");
  CHECK(f.requests[1].claimed == "INC-299042 has been opened");
}

TEST_CASE("an answer that does not acknowledge the outage fails the probe", "[faults]") {
  const Records during = {Answer("Sorry, something odd happened.")};
  const ToolOutageFinding f =
      JudgeToolOutage(Probe(), Seen({Answer(kWorked)}, during, {Answer(kWorked, 10'100)}));
  CHECK(f.verdict == "fail");
  REQUIRE(f.reasons.size() == 2);
  CHECK(f.reasons[0] == "during request 1 does not say the tool is unavailable");
  // The pattern matched nothing at all: the application may say it in its own words.
  CHECK(f.reasons[1] ==
        "pattern never matched: expect_answer \"unavailable|try again later\" matched none of 1 "
        "answer: check the wording your application uses");
}

TEST_CASE(
    "an expect_working pattern that matches no answer makes the probe inconclusive, saying why",
    "[faults]") {
  manifest::ToolOutageProbe probe = Probe();
  probe.expect_working = "TICKET-[0-9]+";  // the application says "INC-...": worded otherwise
  const ToolOutageFinding f =
      JudgeToolOutage(probe, Seen({Answer(kWorked)}, {Answer(kDown)}, {Answer(kWorked, 10'100)}));
  CHECK(f.verdict == "inconclusive");
  CHECK(std::find(f.reasons.begin(), f.reasons.end(),
                  "pattern never matched: expect_working \"TICKET-[0-9]+\" matched none of 2 "
                  "answers: check the wording your application uses") != f.reasons.end());
}

TEST_CASE("an error status whose body says the tool is unavailable is a clear failure",
          "[faults]") {
  const Records during = {
      Answer(R"({"error":{"message":"ticket service unavailable"}})", 0, 50, 503)};
  const ToolOutageFinding f =
      JudgeToolOutage(Probe(), Seen({Answer(kWorked)}, during, {Answer(kWorked, 10'100)}));
  CHECK(f.verdict == "pass");
  CHECK(f.requests[1].status == 503);
  CHECK(f.requests[1].in_time);
}

TEST_CASE("recovery is judged from the restore to the first answer that works", "[faults]") {
  SECTION("too late") {
    const Records after = {Answer(kDown, 10'100), Answer(kWorked, 15'000, 1000)};
    const ToolOutageFinding f =
        JudgeToolOutage(Probe(), Seen({Answer(kWorked)}, {Answer(kDown)}, after));
    CHECK(f.verdict == "fail");
    REQUIRE(f.recovered_s);
    CHECK(*f.recovered_s == Approx(6.0));
    REQUIRE(f.reasons.size() == 1);
    CHECK(f.reasons[0] == "the tool worked again only 6 s after the restore (limit 5 s)");
  }
  SECTION("never") {
    const Records after = {Answer(kDown, 10'100), Answer(kDown, 12'000)};
    const ToolOutageFinding f =
        JudgeToolOutage(Probe(), Seen({Answer(kWorked)}, {Answer(kDown)}, after));
    CHECK(f.verdict == "fail");
    CHECK_FALSE(f.recovered_s);
    REQUIRE(f.reasons.size() == 1);
    CHECK(f.reasons[0] ==
          "the tool did not work again within 5 s of the restore (2 requests after it)");
  }
}

TEST_CASE("a probe that could not show anything is inconclusive, never a pass", "[faults]") {
  const Records during = {Answer(kDown)};
  const Records after = {Answer(kWorked, 10'100)};
  SECTION("the tool did not work before the outage") {
    const ToolOutageFinding f = JudgeToolOutage(Probe(), Seen({Answer(kDown)}, during, after));
    CHECK(f.verdict == "inconclusive");
    REQUIRE_FALSE(f.reasons.empty());
    CHECK(f.reasons[0] ==
          "before request 1 did not show the tool working (HTTP 200, said \"unavailable\"), so "
          "the outage could not be told from what came before");
  }
  SECTION("expect_working did not match before the outage") {
    manifest::ToolOutageProbe probe = Probe();
    probe.expect_working = "INC-[0-9]{6}";
    const ToolOutageFinding f =
        JudgeToolOutage(probe, Seen({Answer("I can help with that.")}, during, after));
    CHECK(f.verdict == "inconclusive");
  }
  SECTION("no tool call went through the proxy") {
    // The observation holds spans: the records it reads must outlive it.
    const Records worked = {Answer(kWorked)};
    OutageObservation seen = Seen(worked, during, after);
    seen.proxy_connections_before = 0;
    const ToolOutageFinding f = JudgeToolOutage(Probe(), seen);
    CHECK(f.verdict == "inconclusive");
    REQUIRE(f.reasons.size() == 1);
    CHECK(f.reasons[0].find("does not point through it") != std::string::npos);
  }
  SECTION("the actuator could not inject") {
    const Records worked = {Answer(kWorked)}, none;
    OutageObservation seen = Seen(worked, none, none);
    seen.injected = Status::IoError("the inject command exited with status 3");
    const ToolOutageFinding f = JudgeToolOutage(Probe(), seen);
    CHECK(f.verdict == "inconclusive");
    REQUIRE_FALSE(f.reasons.empty());
    CHECK(f.reasons[0] == "the actuator could not inject: the inject command exited with status 3");
  }
  SECTION("the actuator could not restore") {
    const Records worked = {Answer(kWorked)}, none;
    OutageObservation seen = Seen(worked, during, none);
    seen.restored = Status::IoError("the restore command exited with status 1");
    const ToolOutageFinding f = JudgeToolOutage(Probe(), seen);
    CHECK(f.verdict == "inconclusive");
    REQUIRE_FALSE(f.reasons.empty());
    CHECK(f.reasons[0].find("could not restore") != std::string::npos);
  }
  SECTION("a failure during the outage is still reported beside the doubt") {
    const ToolOutageFinding f = JudgeToolOutage(
        Probe(), Seen({Answer(kDown)}, {Answer("INC-299042 has been opened")}, after));
    CHECK(f.verdict == "inconclusive");
    REQUIRE(f.reasons.size() == 3);
    CHECK(f.reasons[1].find("claims what did not happen") != std::string::npos);
  }
}

TEST_CASE("a probe stopped by the user is interrupted", "[faults]") {
  const Records worked = {Answer(kWorked)}, down = {Answer(kDown)}, none;
  OutageObservation seen = Seen(worked, down, none);
  seen.interrupted = true;
  const ToolOutageFinding f = JudgeToolOutage(Probe(), seen);
  CHECK(f.verdict == "interrupted");
  CHECK_FALSE(f.recovered_s);
}

TEST_CASE("the evidence in JSON keeps each request's part, timing, matches and tool calls",
          "[faults]") {
  Records before = {Answer(kWorked)};
  before[0].trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  before[0].tool_calls_json = R"([{"name":"open_ticket","arguments":"{\"queue\":\"it\"}"}])";
  // An excerpt is cut at a character boundary, so the JSON stays valid UTF-8.
  const Records during = {Answer(std::string(299, 'x') + "\xC3\xA9 unavailable")};
  const nlohmann::json j =
      ToolOutageToJson(JudgeToolOutage(Probe(), Seen(before, during, {Answer(kWorked, 10'100)})));
  CHECK(j["verdict"] == "pass");
  CHECK(j["recovered_s"].get<double>() == Approx(0.3));
  REQUIRE(j["requests"].size() == 3);
  CHECK(j["requests"][0]["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(j["requests"][0]["tool_calls"][0]["name"] == "open_ticket");
  CHECK(j["requests"][1]["acknowledged"] == "unavailable");
  CHECK(j["requests"][1]["claimed"].is_null());
  CHECK(j["requests"][1]["excerpt"] == std::string(299, 'x'));
  CHECK(j["requests"][1]["e2e_ms"].get<double>() == Approx(200));
  CHECK_NOTHROW(j.dump());
}

}  // namespace
}  // namespace stagegate::faults
