// Scenarios whose input is a trace: `run` replays it at each open-loop phase's rate, its entries'
// lengths and its hash_ids' prefix sharing kept, so the reference application's prefix cache sees
// what the traced system's saw; bad lines and phase keys that do not apply are named.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/invoke.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// Blocks of 64 tokens (256 bytes, four of the sim's cache blocks). Entry 1 shares entry 0's two
// blocks; entry 2 names block 2 after another first block, so it shares nothing; entry 3 shares
// entry 1's three blocks; entry 4 shares block 1 only. 1.2 s in all: a mean of 3.33 req/s.
constexpr const char* kTrace =
    R"({"timestamp": 0, "input_length": 128, "output_length": 2, "hash_ids": [1, 2]}
{"timestamp": 300, "input_length": 192, "output_length": 2, "hash_ids": [1, 2, 3]}
{"timestamp": 600, "input_length": 128, "output_length": 2, "hash_ids": [5, 2]}
{"timestamp": 900, "input_length": 256, "output_length": 3, "hash_ids": [1, 2, 3, 4]}
{"timestamp": 1200, "input_length": 128, "output_length": 2, "hash_ids": [1, 9]}
)";

std::string WriteScenario(const testing::TempDir& dir, const std::string& input,
                          const std::string& steady) {
  testing::WriteText(dir / "caching-sim.yaml",
                     "prefill_tokens_per_s: 5000\ndecode_step_ms: 1\ndecode_step_per_seq_ms: 0\n"
                     "prefix_cache_tokens: 1000000\nretrieval_ms: 0\nidentity_ms: 0\n");
  testing::WriteText(dir / "trace.yaml",
                     "name: trace\nmanifest: {model: m, model_version: \"1\"}\nseed: 3\n"
                     "target:\n  kind: sim\n  sim_profile: caching-sim.yaml\n"
                     "stages:\n  - name: bare\n" +
                         input + "\nphases:\n  steady: " + steady +
                         "\nthresholds: {completion_rate: 0.5}\n"
                         "telemetry: {scrape_interval_ms: 0, gpu: \"off\"}\n");
  return dir / "trace.yaml";
}

TEST_CASE("run replays a trace at the phase's rate, with its hash_ids' shared prefixes",
          "[cli][run][trace]") {
  testing::TempDir dir;
  testing::WriteText(dir / "trace.jsonl", kTrace);
  const std::string scenario =
      WriteScenario(dir, "input: {source: trace, path: trace.jsonl, block_tokens: 64}",
                    "{rate: 10, requests: 5}");
  CHECK(Invoke({"validate", scenario})
            .out.find("input        trace trace.jsonl, replayed at each open-loop phase's rate; "
                      "hash_ids blocks of 64 tokens\n") != std::string::npos);
  testing::Ran ran = ValidateAndRun(dir, scenario);
  INFO(ran.out << ran.err);
  CHECK(ran.out.find("input: 5 entries of trace.jsonl, replayed at each open-loop phase's rate") !=
        std::string::npos);
  const std::vector<json> records = testing::ReadJsonLines(dir / "out/requests.jsonl");
  REQUIRE(records.size() == 5);
  std::vector<int64_t> cached, output, intended_ms;
  for (const json& r : records) {
    CHECK(r["outcome"] == "ok");
    cached.push_back(r["tokens"]["cached"].get<int64_t>());
    output.push_back(r["input"]["requested_output_tokens"].get<int64_t>());
    intended_ms.push_back((r["times_ns"]["intended"].get<int64_t>() -
                           records[0]["times_ns"]["intended"].get<int64_t>()) /
                          1'000'000);
  }
  // The server found in its cache exactly the blocks each entry shares with those before it.
  CHECK(cached == std::vector<int64_t>{0, 128, 0, 192, 64});
  CHECK(output == std::vector<int64_t>{2, 2, 2, 3, 2});
  // 300 ms apart in the trace, 100 ms at 10 req/s.
  CHECK(intended_ms == std::vector<int64_t>{0, 100, 200, 300, 400});

  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  bool noted = false;
  for (const json& note : run["notes"])
    noted |= note == "no quality samples: the input is a trace, with no task to review";
  CHECK(noted);
}

TEST_CASE("a trace input's problems are named: its bad lines, and phase keys it overrides",
          "[cli][run][trace]") {
  testing::TempDir dir;
  testing::WriteText(dir / "bad.jsonl",
                     "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n"
                     "{\"timestamp\": -1, \"input_length\": 5, \"output_length\": 1}\n");
  const std::string scenario =
      WriteScenario(dir, "input: {source: trace, path: bad.jsonl, output_tokens: {mean: 3}}",
                    "{rate: 2, arrival: poisson, requests: 4}");
  Invocation validated = Invoke({"validate", scenario});
  CHECK(validated.exit_code == 2);
  INFO(validated.err);
  CHECK(validated.err.find(scenario +
                           ":11:11: phase 'steady': with a trace input, arrivals follow the "
                           "trace's timestamps") != std::string::npos);
  CHECK(validated.err.find("'output_tokens' does not apply to source trace") != std::string::npos);

  WriteScenario(dir, "input: {source: trace, path: bad.jsonl}", "{rate: 2, requests: 4}");
  Invocation lines = Invoke({"validate", scenario});
  CHECK(lines.exit_code == 2);
  CHECK(lines.err.find(scenario + ":9:30: " + dir / "bad.jsonl" + ":2: ") != std::string::npos);
  testing::Ran ran = testing::RunStagegate(dir, {"run", scenario, "--out", dir / "out"});
  CHECK(ran.exit_code == 2);
  CHECK(ran.err.find(dir / "bad.jsonl" + ":2: ") != std::string::npos);

  WriteScenario(dir, "input: {source: trace}", "{rate: 2, requests: 4}");
  Invocation no_path = Invoke({"validate", scenario});
  CHECK(no_path.err.find("input: a trace source needs 'path'") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli
