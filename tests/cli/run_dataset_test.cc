// Scenarios whose input is a dataset: `run` sends its prompts, `validate` reads it as the run
// will and names every bad line.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/invoke.h"
#include "http_test_server.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// A scenario against `base_url` (an OpenAI-compatible server) whose input is `input`.
std::string WriteScenario(const testing::TempDir& dir, const std::string& base_url,
                          const std::string& input) {
  testing::WriteText(dir / "dataset.yaml",
                     "name: dataset\nmanifest: {model: m, model_version: \"1\"}\nseed: 3\n"
                     "target:\n  kind: openai\n  base_url: \"" +
                         base_url +
                         "\"\n  stream: false\n"
                         "stages:\n  - name: bare\n" +
                         input +
                         "\nphases:\n  steady: {concurrency: 1, requests: 4}\n"
                         "thresholds: {completion_rate: 0.5}\n"
                         "telemetry: {scrape_interval_ms: 0, gpu: \"off\"}\n");
  return dir / "dataset.yaml";
}

TEST_CASE("run sends the prompts of a scenario's dataset", "[cli][run][dataset]") {
  const json answer = {
      {"choices",
       {{{"message", {{"role", "assistant"}, {"content", "ok"}}}, {"finish_reason", "stop"}}}}};
  testing::FixedResponseServer server(
      testing::HttpResponse("200 OK", answer.dump(), "application/json"));
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "data");
  testing::WriteText(dir / "data/prompts.jsonl",
                     "{\"prompt\": \"first question\", \"max_tokens\": 5}\n"
                     "{\"prompt\": \"x\"}\n"
                     "{\"messages\": [{\"role\": \"system\", \"content\": \"Be kind.\"}, "
                     "{\"role\": \"user\", \"content\": \"second question\"}]}\n");
  const std::string scenario =
      WriteScenario(dir, server.base(),
                    "input: {source: dataset, path: data/prompts.jsonl, min_tokens: 2, "
                    "output_tokens: {mean: 9}}");

  Invocation validated = Invoke({"validate", scenario});
  INFO(validated.err);
  CHECK(validated.exit_code == 0);
  CHECK(validated.out.find("dataset      2 of 3 entries of " + dir / "data/prompts.jsonl" +
                           " (jsonl; 1 under 2 tokens left out, tokens estimated as bytes / "
                           "4)\n") != std::string::npos);

  testing::Ran ran = testing::RunStagegate(dir, {"--quiet", "run", scenario, "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  std::map<std::string, int> sent;
  for (const std::string& request : server.requests()) {
    const json body = json::parse(request.substr(request.find("\r\n\r\n") + 4));
    INFO(body.dump());
    const json& messages = body["messages"];
    REQUIRE(!messages.empty());
    const std::string question = messages.back()["content"];
    if (question == "first question") {
      CHECK(messages.size() == 1);
      CHECK(body["max_tokens"] == 5);
    } else {
      CHECK(messages == json::array({{{"role", "system"}, {"content", "Be kind."}},
                                     {{"role", "user"}, {"content", "second question"}}}));
      CHECK(body["max_tokens"] == 9);
    }
    ++sent[question];
  }
  CHECK(sent == std::map<std::string, int>{{"first question", 2}, {"second question", 2}});
}

TEST_CASE("validate and run name each bad line of a scenario's dataset", "[cli][run][dataset]") {
  testing::FixedResponseServer server(testing::HttpResponse("500 Internal Server Error", "{}"));
  testing::TempDir dir;
  testing::WriteText(dir / "bad.jsonl", "{\"prompt\": \"ok\"}\n{\"prompt\": [1]}\n{}\n");
  const std::string scenario =
      WriteScenario(dir, server.base(), "input: {source: dataset, path: bad.jsonl}");
  const std::string path = dir / "bad.jsonl";
  Invocation validated = Invoke({"validate", scenario});
  CHECK(validated.exit_code == 2);
  CHECK(validated.err == path + ":2: 'prompt' must be a string that is not empty, got [1]\n" +
                             path + ":3: expected 'prompt' or 'messages'\n" + "2 problems in " +
                             scenario + " and the files it names\n");

  testing::Ran ran = testing::RunStagegate(dir, {"--quiet", "run", scenario, "--out", dir / "out"});
  CHECK(ran.exit_code == 2);
  CHECK(ran.err.find(path + ":2: 'prompt' must be a string that is not empty, got [1]") !=
        std::string::npos);
  CHECK(ran.err.find(path + ":3: expected 'prompt' or 'messages'") != std::string::npos);
  CHECK(server.requests().empty());
}

TEST_CASE("a scenario's dataset keys are checked where they are written", "[cli][dataset]") {
  testing::TempDir dir;
  const std::string scenario =
      WriteScenario(dir, "http://127.0.0.1:9",
                    "input: {source: dataset, format: csv, min_tokens: 9, max_tokens: 3}");
  Invocation validated = Invoke({"validate", scenario});
  CHECK(validated.exit_code == 2);
  CHECK(validated.err.find(scenario + ":10:8: input: a dataset source needs 'path'") !=
        std::string::npos);
  CHECK(validated.err.find(scenario + ":10:34: 'format' must be jsonl or sharegpt, got 'csv'") !=
        std::string::npos);
  CHECK(validated.err.find(scenario + ":10:51: 'min_tokens' is above 'max_tokens'") !=
        std::string::npos);

  const std::string synthetic = WriteScenario(
      dir, "http://127.0.0.1:9",
      "input: {source: synthetic, input_tokens: {mean: 5}, output_tokens: {mean: 5}, path: x}");
  Invocation refused = Invoke({"validate", synthetic});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("'path' applies only to source dataset") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli
