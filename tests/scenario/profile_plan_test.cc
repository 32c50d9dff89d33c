#include "scenario/profile_plan.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "base/strings.h"

namespace stagegate::scenario {
namespace {

ProfileRequest Request() {
  ProfileRequest request;
  request.url = "http://127.0.0.1:9/v1/";
  request.model = "m";
  return request;
}

// The lines of a plan's refusal; none when it was planned.
std::vector<std::string> Problems(const ProfileRequest& request) {
  Result<ProfilePlan> plan = PlanProfile(request);
  if (plan.ok()) return {};
  return Split(plan.status().message(), '\n');
}

bool Has(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines)
    if (line.find(part) != std::string::npos) return true;
  return false;
}

TEST_CASE("a profile's flags become one stage whose load is a sweep of the levels",
          "[profile][plan]") {
  ProfileRequest request = Request();
  request.rates = {2, 4};
  request.slo = "ttft_ms:500";
  request.headers = {"X-Team: blue"};
  Result<ProfilePlan> plan = PlanProfile(request);
  REQUIRE(plan.ok());
  const manifest::Scenario& s = plan->bundle.scenario;
  CHECK(s.target.base_url == "http://127.0.0.1:9/v1");
  REQUIRE(s.stages.size() == 1);
  CHECK(s.stages[0].path == "/chat/completions");
  CHECK(s.stages[0].headers.at("X-Team") == "blue");
  REQUIRE(s.phases.size() == 1);
  CHECK(s.phases[0].kind == manifest::PhaseKind::kSweep);
  CHECK(s.phases[0].rate_levels == std::vector<double>{2, 4});
  CHECK(s.phases[0].concurrency_levels.empty());
  // Without --duration a level is 100 requests; with an SLO the levels are a gate.
  CHECK(s.phases[0].requests == 100);
  CHECK(plan->gating());
  CHECK(plan->slos.size() == 1);
  CHECK(s.input.source == manifest::InputSource::kSynthetic);
  // The config names headers, never their values.
  CHECK(plan->config["headers"] == nlohmann::json::array({"X-Team"}));
  CHECK(plan->config.dump().find("blue") == std::string::npos);
}

TEST_CASE("a profile without levels runs one user; a search starts where --request-rate says",
          "[profile][plan]") {
  Result<ProfilePlan> plain = PlanProfile(Request());
  REQUIRE(plain.ok());
  CHECK(plain->bundle.scenario.phases[0].concurrency_levels == std::vector<int64_t>{1});
  CHECK_FALSE(plain->gating());

  ProfileRequest request = Request();
  request.search = true;
  request.rates = {3};
  Result<ProfilePlan> search = PlanProfile(request);
  REQUIRE(search.ok());
  const manifest::LoadPhase& phase = search->bundle.scenario.phases[0];
  CHECK(phase.search);
  CHECK(phase.rate == 3);
  CHECK(phase.rate_levels.empty());
  CHECK(phase.duration_s == 20);  // a search's levels last 20 s unless told
  CHECK(phase.decide_levels);
}

TEST_CASE("a profile's refusal names every problem, a line each", "[profile][plan]") {
  ProfileRequest request = Request();
  request.concurrency = {2};
  request.rates = {1};
  request.spikes = {"1:2"};
  request.headers = {"X-A: 1\r\nInjected: yes", "Bad Name: v"};
  request.slo = "nonsense";
  request.think_time = "100";
  request.shard = "3/2";
  request.gpu = {"dcgm"};
  const std::vector<std::string> problems = Problems(request);
  CHECK(Has(problems, "give one of --concurrency, --request-rate and --trace"));
  CHECK(Has(problems, "--spike '1:2'"));
  CHECK(Has(problems, "--header"));
  CHECK(Has(problems, "--think-time and --follow-up-tokens apply only with --session-turns"));
  CHECK(Has(problems, "shard '3/2'"));
  CHECK(Has(problems, "--gpu dcgm: give the DCGM exporter's metrics URL"));
  CHECK(problems.size() >= 7);
  // A header's value never reaches a message.
  CHECK_FALSE(Has(problems, "Injected"));
}

TEST_CASE("a profile in shards takes fixed levels of a known length", "[profile][plan]") {
  ProfileRequest request = Request();
  request.shard = "1/2";
  request.search = true;
  const std::vector<std::string> search = Problems(request);
  CHECK(Has(search, "--search decides each level from the one before"));

  request = Request();
  request.shard = "1/2";
  request.concurrency = {1, 4};
  const std::vector<std::string> fixed = Problems(request);
  CHECK(Has(fixed, "give --duration"));
  CHECK(Has(fixed, "--concurrency 1 cannot be split into 2 shards"));

  request.shard = "2/2";  // counted from 1 on the command line, from 0 within
  request.concurrency = {4};
  request.duration_s = 5;
  Result<ProfilePlan> plan = PlanProfile(request);
  REQUIRE(plan.ok());
  CHECK(plan->shard.index == 1);
  CHECK(plan->shard.count == 2);
  CHECK(ProfileSettings(*plan).shard.count == 2);
}

TEST_CASE("a trace is one steady step replayed at its own times", "[profile][plan]") {
  ProfileRequest request = Request();
  request.trace = "tests/testdata/traces/good.jsonl";
  request.speedup = 2;
  Result<ProfilePlan> plan = PlanProfile(request);
  REQUIRE(plan.ok());
  const manifest::LoadPhase& phase = plan->bundle.scenario.phases[0];
  CHECK(phase.kind == manifest::PhaseKind::kSteady);
  CHECK(phase.speedup == 2);
  CHECK(plan->bundle.scenario.input.source == manifest::InputSource::kTrace);
  CHECK_FALSE(plan->input.trace.empty());

  // The trace is read when planned: a missing one is refused with its path.
  request.trace = "tests/testdata/traces/missing.jsonl";
  Result<ProfilePlan> missing = PlanProfile(request);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("missing.jsonl") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::scenario
