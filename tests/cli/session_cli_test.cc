// Multi-turn sessions as `profile` runs them against the reference application with its prefix
// cache on: each turn carries the conversation so far, the model's real answers included, after
// its user's think time; later turns reuse the cached conversation and answer sooner; a failed
// turn ends its session.

#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/recompute.h"
#include "cli/sim_fixture.h"
#include "sim/sim_server.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// Prefill at 5,000 tokens a second (a 1,000-token first turn: 200 ms), quick decoding.
std::unique_ptr<sim::SimServer> StartCachingSim(const std::string& fault = "") {
  sim::SimProfile profile = testing::ModelProfile(5000, 1);
  profile.prefix_cache_tokens = 1'000'000;
  profile.fault = fault;
  return testing::StartSimServer(profile);
}

// Sessions of 4 turns; `load` says how they arrive.
Ran Sessions(const testing::TempDir& dir, const sim::SimServer& sim,
             const std::vector<std::string>& load = {"--concurrency", "2", "--requests", "4"}) {
  std::vector<std::string> args = {"profile",
                                   sim.base_url() + "/v1",
                                   "--model",
                                   "sim",
                                   "--session-turns",
                                   "4",
                                   "--think-time",
                                   "30",
                                   "--input-tokens",
                                   "1000",
                                   "--follow-up-tokens",
                                   "40",
                                   "--output-tokens",
                                   "8",
                                   "--extra-inputs",
                                   "ignore_eos:true",
                                   "--out",
                                   dir / "out",
                                   "--workers",
                                   "1"};
  args.insert(args.begin() + 1, "--url");
  args.insert(args.end(), load.begin(), load.end());
  return testing::RunStagegate(dir, args);
}

std::map<std::pair<int64_t, int64_t>, json> Turns(const testing::TempDir& dir) {
  std::map<std::pair<int64_t, int64_t>, json> turns;
  std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const json r = json::parse(line);
    turns[{r["session"].get<int64_t>(), r["turn"].get<int64_t>()}] = r;
  }
  return turns;
}

TEST_CASE("profile runs multi-turn sessions that carry the conversation, turn by turn",
          "[cli][profile][sessions]") {
  auto sim = StartCachingSim();
  testing::TempDir dir;
  Ran ran = Sessions(dir, *sim);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const auto turns = Turns(dir);
  REQUIRE(turns.size() == 16);  // 4 sessions of 4 turns
  for (int64_t s = 0; s < 4; ++s) {
    for (int64_t t = 0; t < 4; ++t) {
      INFO("session " << s << " turn " << t);
      const json& r = turns.at({s, t});
      CHECK(r["outcome"] == "ok");
      CHECK(r["sequence"] == s * 1000 + t);
      if (t == 0) {
        CHECK(r["tokens"]["cached"] == 0);
        continue;
      }
      const json& before = turns.at({s, t - 1});
      // Sent its think time after the answer before it ended: that is its intended time.
      CHECK(r["times_ns"]["intended"].get<int64_t>() ==
            before["times_ns"]["end"].get<int64_t>() + 30'000'000);
      CHECK(r["times_ns"]["sent"].get<int64_t>() >= r["times_ns"]["intended"].get<int64_t>());
      // The conversation so far, the answer before included, then a 40-token (160-byte)
      // question, each message and a newline: the server counts a token for 4 bytes it read,
      // and finds all of the turn before in its cache but the part block it ended on.
      const int64_t input = r["tokens"]["input"].get<int64_t>();
      const int64_t previous = before["tokens"]["input"].get<int64_t>();
      const int64_t added = static_cast<int64_t>(before["answer"].get<std::string>().size()) + 162;
      CHECK(input >= previous + added / 4 - 1);
      CHECK(input <= previous + added / 4 + 1);
      CHECK(r["tokens"]["cached"].get<int64_t>() >= previous - 16);
    }
  }
  // TTFT by turn: the first turn prefills 1,000 tokens, the later ones only what is new.
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  const json& sessions = profile["levels"][0]["sessions"];
  CHECK(sessions["started"] == 4);
  CHECK(sessions["completed"] == 4);
  REQUIRE(sessions["turns"].size() == 4);
  // The TTFT by turn, measured again from the records of each turn.
  for (int64_t t = 0; t < 4; ++t) {
    std::vector<double> ttft;
    for (int64_t s = 0; s < 4; ++s)
      ttft.push_back(turns.at({s, t})["latency_ms"]["ttft"].get<double>());
    CHECK(sessions["turns"][t]["ttft_ms"]["p50"].get<double>() ==
          Approx(testing::LinearPercentile(ttft, 50)).epsilon(1e-6).margin(1e-3));
  }
  const double first = sessions["turns"][0]["ttft_ms"]["p50"].get<double>();
  CHECK(first > 150);
  for (int t = 1; t < 4; ++t) {
    INFO("turn " << t + 1);
    CHECK(sessions["turns"][t]["completed"] == 4);
    CHECK(sessions["turns"][t]["ttft_ms"]["p50"].get<double>() < first / 3);
  }
  CHECK(ran.out.find("  turn 1: 4 of 4 completed, TTFT p50 ") != std::string::npos);
  CHECK(ran.out.find("  sessions: 4 of 4 completed every turn") != std::string::npos);
}

TEST_CASE("a failed turn ends its session, and session options are checked",
          "[cli][profile][sessions]") {
  testing::TempDir dir;
  SECTION("every turn fails: each session ends at its first") {
    auto sim = StartCachingSim("500");
    Ran ran = Sessions(dir, *sim);
    INFO(ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    const auto turns = Turns(dir);
    CHECK(turns.size() == 4);
    for (const auto& [key, r] : turns) {
      CHECK(key.second == 0);
      CHECK(r["outcome"] == "http_error");
    }
    CHECK(ran.out.find("  sessions: 0 of 4 completed every turn") != std::string::npos);
  }
  SECTION("sessions are synthetic chat, and their options need sessions") {
    Ran corpus = testing::RunStagegate(
        dir, {"profile", "--url", "http://127.0.0.1:9/v1", "--model", "m", "--request-rate", "2",
              "--session-turns", "3", "--corpus", "corpus"});
    CHECK(corpus.exit_code == 2);
    CHECK(corpus.err.find("--session-turns runs synthetic chat sessions: the chat endpoint, and "
                          "no --corpus, --trace or --dataset") != std::string::npos);
    Ran stray = testing::RunStagegate(dir, {"profile", "--url", "http://127.0.0.1:9/v1", "--model",
                                            "m", "--concurrency", "2", "--think-time", "100"});
    CHECK(stray.exit_code == 2);
    CHECK(stray.err.find("--think-time and --follow-up-tokens apply only with --session-turns") !=
          std::string::npos);
    Ran bad = testing::RunStagegate(
        dir, {"profile", "--url", "http://127.0.0.1:9/v1", "--model", "m", "--concurrency", "2",
              "--session-turns", "3", "--think-time", "-5"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--think-time '-5': expected MS or MS:STD") != std::string::npos);
  }
}

TEST_CASE(
    "an open loop's arrivals start sessions, and its cap holds a due turn until there is room",
    "[cli][profile][sessions]") {
  auto sim = StartCachingSim();
  testing::TempDir dir;
  // Five sessions arrive 100 ms apart; at most two requests are in flight.
  Ran ran = Sessions(dir, *sim,
                     {"--request-rate", "10", "--arrival", "constant", "--requests", "5",
                      "--max-concurrency", "2"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const auto turns = Turns(dir);
  REQUIRE(turns.size() == 20);                     // 5 sessions of 4 turns
  std::vector<std::pair<int64_t, int64_t>> spans;  // every turn's sent and end
  for (int64_t s = 0; s < 5; ++s) {
    const json& first = turns.at({s, 0});
    CHECK(first["sequence"] == s * 1000);
    // A first turn's intended time is its session's arrival on the schedule.
    CHECK(first["times_ns"]["intended"].get<int64_t>() -
              turns.at({0, 0})["times_ns"]["intended"].get<int64_t>() ==
          s * 100'000'000);
    for (int64_t t = 0; t < 4; ++t) {
      INFO("session " << s << " turn " << t);
      const json& r = turns.at({s, t});
      CHECK(r["outcome"] == "ok");
      spans.emplace_back(r["times_ns"]["sent"].get<int64_t>(), r["times_ns"]["end"].get<int64_t>());
      if (t == 0) continue;
      const json& before = turns.at({s, t - 1});
      CHECK(r["times_ns"]["intended"].get<int64_t>() ==
            before["times_ns"]["end"].get<int64_t>() + 30'000'000);
      CHECK(r["times_ns"]["sent"].get<int64_t>() >= r["times_ns"]["intended"].get<int64_t>());
    }
  }
  // Never more than two in flight: at each send, count the turns sent before it and not ended.
  for (const auto& [sent, end] : spans) {
    int in_flight = 0;
    for (const auto& [other_sent, other_end] : spans)
      if (other_sent <= sent && other_end > sent) ++in_flight;
    CHECK(in_flight <= 2);
  }
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  CHECK(profile["levels"][0]["sessions"]["completed"] == 5);
}

}  // namespace
}  // namespace stagegate::cli
