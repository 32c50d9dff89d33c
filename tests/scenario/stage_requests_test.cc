#include "scenario/stage_requests.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace stagegate::scenario {
namespace {

std::vector<std::string> Ids(const std::vector<const manifest::Task*>& tasks) {
  std::vector<std::string> ids;
  for (const manifest::Task* task : tasks)
    ids.push_back(task->id);
  return ids;
}

TEST_CASE("tasks go in turns across categories, each category in its own order", "[scenario]") {
  // As a corpus lists them: whole categories one after another, of different sizes.
  std::vector<manifest::Task> corpus = {
      {.id = "a1", .category = "account"},    {.id = "a2", .category = "account"},
      {.id = "a3", .category = "account"},    {.id = "p1", .category = "policy"},
      {.id = "r1", .category = "restricted"}, {.id = "p2", .category = "policy"},
      {.id = "a4", .category = "account"}};
  std::vector<const manifest::Task*> tasks;
  for (const manifest::Task& task : corpus)
    tasks.push_back(&task);
  CHECK(Ids(InterleaveByCategory(tasks)) ==
        std::vector<std::string>{"a1", "p1", "r1", "a2", "p2", "a3", "a4"});
  // The first three (three samples) hold every category; the corpus order held one.
  CHECK(Ids(InterleaveByCategory({tasks[0], tasks[1]})) == std::vector<std::string>{"a1", "a2"});
  CHECK(InterleaveByCategory({}).empty());
}

std::vector<std::string> Authorization(const load::RequestSpec& spec) {
  std::vector<std::string> found;
  for (const std::string& header : spec.headers)
    if (header.rfind("Authorization:", 0) == 0) found.push_back(header);
  return found;
}

TEST_CASE("a request carries the API key or the persona's token, and the stage redacts both",
          "[scenario][redact]") {
  setenv("STAGEGATE_TEST_API_KEY", "sk-stage-key", 1);
  setenv("STAGEGATE_TEST_TOKEN_A", "tok-persona-a", 1);
  setenv("STAGEGATE_TEST_TOKEN_B", "tok-persona-b", 1);
  manifest::Bundle bundle;
  bundle.scenario.target = {.kind = manifest::TargetKind::kOpenAi,
                            .base_url = "http://u:pw-url@127.0.0.1:9",
                            .api_key_env = "STAGEGATE_TEST_API_KEY"};
  bundle.corpus = manifest::Corpus{};
  bundle.corpus->personas = {{.name = "a", .token_env = "STAGEGATE_TEST_TOKEN_A"},
                             {.name = "b", .token_env = "STAGEGATE_TEST_TOKEN_B"}};
  bundle.corpus->tasks = {{.id = "t1", .prompt = "hi", .persona = {.name = "a"}}};
  manifest::EffectiveStage stage{.name = "s", .headers = {{"X-Team", "1"}}};
  const Endpoint endpoint{.base_url = bundle.scenario.target.base_url, .model = "m"};

  SECTION("without persona credentials: the API key") {
    Result<StageRequests> requests = StageRequests::Make(bundle, stage, endpoint);
    REQUIRE(requests.ok());
    const load::RequestSpec spec = (*requests)(0);
    CHECK(Authorization(spec) == std::vector<std::string>{"Authorization: Bearer sk-stage-key"});
    CHECK(spec.headers.front() == "X-Team: 1");
    REQUIRE(spec.redactor != nullptr);
    CHECK(spec.redactor->Apply("sk-stage-key tok-persona-a tok-persona-b pw-url") ==
          "[redacted] [redacted] [redacted] [redacted]");
  }
  SECTION("with persona credentials: the persona's token in its place") {
    stage.persona_credentials = true;
    Result<StageRequests> requests = StageRequests::Make(bundle, stage, endpoint);
    REQUIRE(requests.ok());
    CHECK(Authorization((*requests)(0)) ==
          std::vector<std::string>{"Authorization: Bearer tok-persona-a"});
    // A probe's own credentials, or none.
    CHECK(Authorization(requests->Probe(nullptr, "x", "tok-probe", "a")) ==
          std::vector<std::string>{"Authorization: Bearer tok-probe"});
    CHECK(Authorization(requests->Probe(nullptr, "x", std::nullopt, "")).empty());
  }
  SECTION("an unset key is named") {
    unsetenv("STAGEGATE_TEST_API_KEY");
    Result<StageRequests> requests = StageRequests::Make(bundle, stage, endpoint);
    REQUIRE_FALSE(requests.ok());
    CHECK(requests.status().message() ==
          "the target's api_key_env names STAGEGATE_TEST_API_KEY, which is unset");
  }
  for (const char* name :
       {"STAGEGATE_TEST_API_KEY", "STAGEGATE_TEST_TOKEN_A", "STAGEGATE_TEST_TOKEN_B"})
    unsetenv(name);
}

}  // namespace
}  // namespace stagegate::scenario
