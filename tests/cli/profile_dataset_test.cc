// `stagegate profile --dataset` as a process: the dataset's prompts go out as the request bodies,
// every request is recorded, and a malformed dataset is refused, line by line, before anything
// is sent.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/hashing.h"
#include "http_test_server.h"
#include "sim/sim_server.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;
using testing::ReadJsonLines;

const std::string kShareGpt = testing::Testdata("datasets/sharegpt_small.json");

Ran RunProfile(const testing::TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "profile");
  return testing::RunStagegate(dir, std::move(args));
}

// A server that answers every request with a short whole chat answer and keeps the requests.
std::unique_ptr<testing::FixedResponseServer> AnsweringServer() {
  const json answer = {
      {"choices",
       {{{"message", {{"role", "assistant"}, {"content", "ok"}}}, {"finish_reason", "stop"}}}},
      {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 1}, {"total_tokens", 6}}}};
  return std::make_unique<testing::FixedResponseServer>(
      testing::HttpResponse("200 OK", answer.dump(), "application/json"));
}

json BodyOf(const std::string& request) {
  return json::parse(request.substr(request.find("\r\n\r\n") + 4));
}

TEST_CASE("profile --dataset sends each conversation of a ShareGPT file as its messages",
          "[cli][profile][dataset]") {
  auto server = AnsweringServer();
  testing::TempDir dir;
  Ran ran = RunProfile(
      dir, {"--url", server->base() + "/v1", "--model", "m", "--no-stream", "--dataset", kShareGpt,
            "--requests", "6", "--output-tokens", "16", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("input: 3 of 4 entries of " + kShareGpt +
                     " (sharegpt; 1 without a user turn skipped, tokens estimated as bytes / "
                     "4)") != std::string::npos);

  // Six requests go twice round the three conversations, each round in its own order.
  const std::map<json, int64_t> expected = {
      {json::array({{{"role", "user"}, {"content", "Hello, who are you?"}}}), 15},
      {json::array({{{"role", "system"}, {"content", "You answer briefly."}},
                    {{"role", "user"}, {"content", "What is the capital of France?"}},
                    {{"role", "assistant"}, {"content", "Paris."}},
                    {{"role", "user"}, {"content", "And of Italy?"}}}),
       2},
      {json::array({{{"role", "user"}, {"content", "List three colours of the rainbow."}}}), 16}};
  std::vector<std::string> requests = server->requests();
  REQUIRE(requests.size() == 6);
  std::map<json, int> sent;
  for (const std::string& request : requests) {
    const json body = BodyOf(request);
    INFO(body.dump());
    CHECK(body["model"] == "m");
    REQUIRE(expected.contains(body["messages"]));
    CHECK(body["max_tokens"] == expected.at(body["messages"]));
    ++sent[body["messages"]];
  }
  CHECK(sent.size() == 3);
  for (const auto& [messages, count] : sent)
    CHECK(count == 2);

  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["config"]["input"]["dataset"] == kShareGpt);
  CHECK(profile["config"]["input"]["format"] == "sharegpt");
  CHECK(profile["config"]["input"]["entries"] == 3);
  CHECK(profile["config"]["input"]["tokens"] == "estimated");
  CHECK(profile["config"]["input"]["sha256"] == Sha256Hex(testing::ReadText(kShareGpt)));
}

TEST_CASE("profile --dataset sends the last user turn as a completions prompt",
          "[cli][profile][dataset]") {
  auto server = AnsweringServer();
  testing::TempDir dir;
  Ran ran = RunProfile(
      dir, {"--url", server->base() + "/v1", "--model", "m", "--no-stream", "--endpoint",
            "completions", "--dataset", kShareGpt, "--requests", "3", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  std::set<std::string> prompts;
  for (const std::string& request : server->requests()) {
    const json body = BodyOf(request);
    CHECK_FALSE(body.contains("messages"));
    prompts.insert(body["prompt"].get<std::string>());
  }
  CHECK(prompts == std::set<std::string>{"Hello, who are you?", "And of Italy?",
                                         "List three colours of the rainbow."});
}

TEST_CASE("profile --dataset against the reference application records every request",
          "[cli][profile][dataset]") {
  Result<std::unique_ptr<sim::SimServer>> sim =
      sim::SimServer::Start({.host = "127.0.0.1", .port = 0, .profile = sim::SimProfile::Fast()});
  REQUIRE(sim.ok());
  testing::TempDir dir;
  Ran ran = RunProfile(dir, {"--url", (*sim)->base_url() + "/v1", "--model", "sim", "--dataset",
                             kShareGpt, "--requests", "9", "--concurrency", "3", "--output-tokens",
                             "16", "--seed", "7", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const std::vector<json> records = ReadJsonLines(dir / "out/requests.jsonl");
  REQUIRE(records.size() == 9);
  std::multiset<int64_t> asked;
  std::set<int64_t> sequences;
  for (const json& record : records) {
    INFO(record.dump());
    CHECK(record["outcome"] == "ok");
    asked.insert(record["input"]["requested_output_tokens"].get<int64_t>());
    sequences.insert(record["sequence"].get<int64_t>());
  }
  // Each entry three times: its reply's length (15 and 2) or --output-tokens (16).
  CHECK(asked == std::multiset<int64_t>{2, 2, 2, 15, 15, 15, 16, 16, 16});
  CHECK(sequences.size() == 9);
}

TEST_CASE("profile --dataset refuses a malformed dataset line by line and sends nothing",
          "[cli][profile][dataset]") {
  auto server = AnsweringServer();
  testing::TempDir dir;
  const std::string path = dir / "prompts.jsonl";
  testing::WriteText(path,
                     "{\"prompt\": \"fine\"}\n"
                     "{\"prompt\": 12}\n"
                     "\n"
                     "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": "
                     "-1}\n"
                     "{\"prompt\": \"cut\n");
  Ran ran = RunProfile(dir, {"--url", server->base() + "/v1", "--model", "m", "--dataset", path,
                             "--requests", "3", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 2);
  CHECK(ran.err == "stagegate profile: " + path +
                       ":2: 'prompt' must be a string that is not empty, got 12\n"
                       "stagegate profile: " +
                       path +
                       ":4: 'max_tokens' must be an integer from 1 to 1000000, got -1\n"
                       "stagegate profile: " +
                       path +
                       ":5: column 16: not JSON: syntax error while parsing value - invalid "
                       "string: missing closing quote; last read: '\"cut'\n");
  CHECK(server->requests().empty());
  CHECK_FALSE(std::filesystem::exists(dir / "out/requests.jsonl"));
}

TEST_CASE("profile --dataset takes no other prompt source", "[cli][profile][dataset]") {
  testing::TempDir dir;
  for (const std::string other : {"--corpus", "--trace", "--input-tokens"}) {
    INFO(other);
    Ran ran = RunProfile(dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--dataset",
                               kShareGpt, other, "100"});
    CHECK(ran.exit_code == 2);
    CHECK(ran.err.find("excludes") != std::string::npos);
    CHECK(ran.err.find(other) != std::string::npos);
  }
  Ran ran = RunProfile(
      dir, {"--url", "http://127.0.0.1:9/v1", "--model", "m", "--dataset-min-tokens", "10"});
  CHECK(ran.exit_code == 2);
  CHECK(ran.err.find("--dataset-min-tokens requires --dataset") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli
