// Shared prefixes as `profile` sends them, seen by the reference application's prefix cache: which
// requests reuse which prompt blocks (the server's usage.prompt_tokens_details.cached_tokens, kept
// in each record), and that a cached prefix makes the first token come sooner.

#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/sim_fixture.h"
#include "http_test_server.h"
#include "sim/sim_server.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// Prefill at 5,000 tokens a second, so 1,000 uncached tokens cost 200 ms; decoding is quick.
std::unique_ptr<sim::SimServer> StartCachingSim() {
  sim::SimProfile profile = testing::ModelProfile(5000, 1);
  profile.prefix_cache_tokens = 1'000'000;
  return testing::StartSimServer(profile);
}

std::vector<json> Records(const testing::TempDir& dir) {
  std::vector<json> records;
  std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
  for (std::string line; std::getline(lines, line);)
    records.push_back(json::parse(line));
  std::sort(records.begin(), records.end(),
            [](const json& a, const json& b) { return a["sequence"] < b["sequence"]; });
  return records;
}

TEST_CASE("requests that share a prefix reuse the server's cached blocks and answer sooner",
          "[cli][profile][prefix]") {
  auto sim = StartCachingSim();
  testing::TempDir dir;
  Ran ran = testing::RunStagegate(
      dir, {"profile", "--url", (*sim).base_url() + "/v1", "--model", "sim", "--concurrency", "1",
            "--requests", "16", "--input-tokens", "1100", "--output-tokens", "4", "--shared-prefix",
            "2:1000", "--out", dir / "out", "--workers", "1"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  std::vector<double> cold, warm;
  for (const json& r : Records(dir)) {
    INFO(r.dump());
    REQUIRE(r["outcome"] == "ok");
    const int64_t cached = r["tokens"]["cached"].get<int64_t>();
    // The prefix's 4,000 bytes are 62 whole blocks of 16 tokens: a request that finds its prefix
    // cached reuses 992 tokens, one that does not reuses nothing.
    CHECK((cached == 0 || cached == 992));
    (cached == 0 ? cold : warm).push_back(r["latency_ms"]["ttft"].get<double>());
  }
  // One cold request for each prefix drawn (two, almost surely: 1 in 2^15 that all draw one).
  CHECK(cold.size() >= 1);
  CHECK(cold.size() <= 2);
  REQUIRE(warm.size() >= 14);
  std::sort(warm.begin(), warm.end());
  // 200 ms of prefill cold; about 22 ms (108 tokens) warm.
  CHECK(warm[warm.size() / 2] < *std::min_element(cold.begin(), cold.end()) / 2);
}

TEST_CASE("a trace's hash_ids are replayed as the same shared prompt blocks",
          "[cli][profile][prefix]") {
  auto sim = StartCachingSim();
  testing::TempDir dir;
  // Blocks of 64 tokens (256 bytes, 4 of the server's cache blocks). Entry 1 shares entry 0's
  // two blocks; entry 2 names block 2 after another first block, so it shares nothing; entry 3
  // shares entry 1's three blocks; entry 4 shares block 1 only.
  testing::WriteText(
      dir / "trace.jsonl",
      R"({"timestamp": 0, "input_length": 128, "output_length": 2, "hash_ids": [1, 2]}
{"timestamp": 300, "input_length": 192, "output_length": 2, "hash_ids": [1, 2, 3]}
{"timestamp": 600, "input_length": 128, "output_length": 2, "hash_ids": [5, 2]}
{"timestamp": 900, "input_length": 256, "output_length": 2, "hash_ids": [1, 2, 3, 4]}
{"timestamp": 1200, "input_length": 128, "output_length": 2, "hash_ids": [1, 9]}
)");
  Ran ran =
      testing::RunStagegate(dir, {"profile", "--url", (*sim).base_url() + "/v1", "--model", "sim",
                                  "--trace", dir / "trace.jsonl", "--trace-block-tokens", "64",
                                  "--out", dir / "out", "--workers", "1"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const std::vector<json> records = Records(dir);
  REQUIRE(records.size() == 5);
  std::vector<int64_t> cached;
  for (const json& r : records)
    cached.push_back(r["tokens"]["cached"].get<int64_t>());
  CHECK(cached == std::vector<int64_t>{0, 128, 0, 192, 64});
}

// A whole (unstreamed) answer whose usage.prompt_tokens_details is any shape: kept when it is a
// count, ignored otherwise, and never the end of the run (nlohmann's value() on an array throws).
TEST_CASE("cached tokens of a whole answer are read only from a well-formed count",
          "[cli][profile][prefix]") {
  for (const auto& [details, cached] :
       std::vector<std::pair<std::string, json>>{{R"({"cached_tokens":7})", 7},
                                                 {R"([1,2])", nullptr},
                                                 {R"("7")", nullptr},
                                                 {R"({"cached_tokens":-7})", nullptr},
                                                 {R"({"cached_tokens":[7]})", nullptr}}) {
    INFO(details);
    const std::string body =
        R"({"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],)"
        R"("usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":)" +
        details + "}}";
    testing::FixedResponseServer server(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    testing::TempDir dir;
    Ran ran = testing::RunStagegate(
        dir, {"profile", "--url", server.base() + "/v1", "--model", "m", "--no-stream",
              "--concurrency", "1", "--requests", "2", "--out", dir / "out", "--workers", "1"});
    INFO(ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    const std::vector<json> records = Records(dir);
    REQUIRE(records.size() == 2);
    for (const json& r : records) {
      CHECK(r["outcome"] == "ok");
      CHECK(r["tokens"]["input"] == 9);
      CHECK(r["tokens"]["cached"] == cached);
    }
  }
}

}  // namespace
}  // namespace stagegate::cli
