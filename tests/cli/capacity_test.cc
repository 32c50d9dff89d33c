// Where responsiveness really ends: `stagegate profile --search` and `--slo` against reference
// applications whose ceiling follows from their batching parameters, a level that falls behind
// while its percentiles pass, a level too short to tell, and a profile killed mid-level.

#include <catch2/catch.hpp>

#include <algorithm>

#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/sim_server.h"
#include "store/store.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// A sim whose ceiling is exact: `max_running` sequences, each step `step_ms` whatever the batch
// and no prefill cost, so a request of `kTokens` tokens holds a slot for kTokens steps and the
// engine completes max_running / (kTokens x step) requests a second. Nothing is shed.
constexpr int kTokens = 16;
constexpr int kRunning = 8;

sim::SimProfile BatchingProfile(double step_ms) {
  sim::SimProfile profile = sim::SimProfile::Default();
  profile.prefill_tokens_per_s = 1e12;
  profile.decode_step_ms = step_ms;
  profile.decode_step_per_seq_ms = 0;
  profile.max_running = kRunning;
  profile.kv_budget_tokens = 1'000'000'000;
  profile.queue_limit = 1'000'000;
  profile.queue_timeout_ms = 600'000;
  profile.retrieval_ms = 0;
  profile.identity_ms = 0;
  return profile;
}

double Ceiling(double step_ms) {
  return kRunning / (kTokens * step_ms / 1000);
}

std::unique_ptr<sim::SimServer> StartSim(const sim::SimProfile& profile) {
  Result<std::unique_ptr<sim::SimServer>> server =
      sim::SimServer::Start({.host = "127.0.0.1", .port = 0, .profile = profile});
  REQUIRE(server.ok());
  return std::move(*server);
}

// `stagegate profile` with exact-length synthetic requests against `sim`, plus `args`.
Ran Profile(const testing::TempDir& dir, const sim::SimServer& sim, std::vector<std::string> args,
            const std::function<void(pid_t)>& on_started = nullptr) {
  std::vector<std::string> full = {"profile",
                                   "--url",
                                   sim.base_url() + "/v1",
                                   "--model",
                                   "sim",
                                   "--input-tokens",
                                   "16",
                                   "--output-tokens",
                                   std::to_string(kTokens),
                                   "--extra-inputs",
                                   "ignore_eos:true",
                                   "--arrival",
                                   "constant",
                                   "--out",
                                   dir / "out",
                                   "--workers",
                                   "1"};
  full.insert(full.end(), args.begin(), args.end());
  return testing::RunStagegate(dir, std::move(full), on_started);
}

// [serial]: the real-time witness of the capacity search; the reference application's ceiling is
// its simulated GPU's, but whether the client keeps up with it depends on the cores it gets.
// The search's rules are tested exactly on a fake clock (tests/scenario/capacity_search_test.cc);
// this shows the real transport and clock reach the same finding, so one application serves
// (a second, twice as fast, doubled its minute alone on the machine and tested no other rule).
TEST_CASE("profile --search finds the sustained capacity of the reference application",
          "[cli][capacity][slow][serial]") {
  const double step_ms = 20;
  const double ceiling = Ceiling(step_ms);  // 25 req/s
  auto sim = StartSim(BatchingProfile(step_ms));
  testing::TempDir dir;
  Ran ran = Profile(dir, *sim,
                    {"--search", "--search-from", std::to_string(ceiling / 3), "--duration", "6",
                     "--max-duration", "15", "--slo", "e2e_ms:60000"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  const json& capacity = profile["capacity"];
  REQUIRE(capacity["holds_up_to"].is_number());
  REQUIRE(capacity["fails_at"].is_number());
  const double sustained = capacity["sustained_rate"].get<double>();
  // What the application really completed at most, a second witness: a level past its
  // ceiling completes requests at the ceiling. The batching parameters give the ceiling on
  // an idle machine; each engine step's own CPU time lowers it on a loaded one (by about a
  // tenth on 2 busy cores).
  double most = 0;
  for (const json& level : profile["levels"])
    most = std::max(most, level["throughput"]["request_throughput"].get<double>());
  INFO("the application completed at most " << most << " req/s");
  CHECK(most >= 0.75 * ceiling);
  CHECK(most <= 1.02 * ceiling);
  // The search found most of that, and never more than the parameters' ceiling. (A level's
  // completions are counted over a window that includes its last requests' drain, so a
  // level that keeps pace completes a few percent under its rate: the sustained rate may
  // be a little above `most`.)
  CHECK(sustained >= 0.85 * most);
  CHECK(sustained <= 1.1 * most);
  CHECK(sustained <= 1.02 * ceiling);
  CHECK(capacity["fails_at"].get<double>() <= capacity["holds_up_to"].get<double>() * 1.1);
  CHECK(capacity["fails_at"].get<double>() > 0.9 * most);
  CHECK(capacity["search"] == true);
  CHECK(capacity["took_s"].get<double>() > 0);
  CHECK(ran.out.find("capacity: sustained ") != std::string::npos);
  CHECK(ran.out.find("search: ") != std::string::npos);
  // Every level above the ceiling failed as not sustained, not on a percentile.
  for (const json& level : profile["levels"])
    if (level["value"].get<double>() > 1.05 * ceiling) {
      CHECK(level["judgement"]["verdict"] == "fail");
      CHECK(level["judgement"]["first_failed"] == "sustained");
    }
}

TEST_CASE(
    "A level whose completions fall behind fails as not sustained, though its "
    "percentiles pass, and --slo exits 1",
    "[cli][capacity]") {
  auto sim = StartSim(BatchingProfile(20));  // 25 req/s
  testing::TempDir dir;
  Ran ran =
      Profile(dir, *sim, {"--request-rate", "32", "--duration", "6", "--slo", "e2e_ms:60000"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  REQUIRE(profile["levels"].size() == 1);
  const json& level = profile["levels"][0]["judgement"];
  CHECK(level["verdict"] == "fail");
  CHECK(level["first_failed"] == "sustained");
  for (const json& check : level["checks"])
    CHECK(check["passed"] == true);
  const std::string reason = level["reason"];
  CHECK(reason.rfind("not sustained: ", 0) == 0);
  // The engine finishes at most 25 a second, whatever is offered: of the 32 a second that
  // arrived, a growing share is still waiting when the level ends.
  const json& pace = level["sustained"]["pace"];
  CHECK(pace["arriving_rate"].get<double>() > 30);
  CHECK(pace["completed_rate"].get<double>() < 0.9 * pace["arriving_rate"].get<double>());
  CHECK(pace["kept_pace"] == false);
  CHECK(level["sustained"]["latency_ms"]["state"] != "settled");
  CHECK(ran.out.find("at 32 req/s: not sustained: ") != std::string::npos);

  // The same level with room to spare passes, and the gate exits 0.
  testing::TempDir calm;
  Ran passing =
      Profile(calm, *sim, {"--request-rate", "12", "--duration", "6", "--slo", "e2e_ms:60000"});
  INFO(passing.out << passing.err);
  CHECK(passing.exit_code == 0);
  CHECK(passing.out.find("capacity: sustained 1") != std::string::npos);
}

TEST_CASE("A level too short to tell is inconclusive, never a pass", "[cli][capacity]") {
  auto sim = StartSim(BatchingProfile(10));  // 50 req/s: nothing here comes near it
  testing::TempDir dir;
  Ran ran = Profile(dir, *sim, {"--request-rate", "8", "--duration", "2", "--slo", "e2e_ms:60000"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 4);
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  const json& level = profile["levels"][0]["judgement"];
  CHECK(level["verdict"] == "inconclusive");
  for (const json& check : level["checks"])
    CHECK(check["passed"] == true);
  CHECK(level["reason"].get<std::string>().rfind("inconclusive: too short to tell", 0) == 0);
  CHECK(profile["capacity"]["inconclusive"] == true);
  CHECK(profile["capacity"]["holds_up_to"].is_null());
  CHECK(ran.out.find("capacity: inconclusive: 8 req/s, the lowest level tried, was too short to "
                     "tell") != std::string::npos);

  // A search whose first level is too short to tell is pending too (it was 1), by the same rule,
  // and says how to let the level tell.
  testing::TempDir search_dir;
  Ran search = Profile(search_dir, *sim, {"--search", "--search-from", "8", "--duration", "2"});
  INFO(search.out << search.err);
  CHECK(search.exit_code == 4);
  CHECK(search.out.find("capacity: inconclusive: 8 req/s, the lowest level tried, was too short "
                        "to tell") != std::string::npos);
  CHECK(search.out.find("the search stopped at a level too short to tell: give --max-duration") !=
        std::string::npos);

  // Allowed to run on, the same level tells, and passes.
  testing::TempDir longer;
  Ran extended = Profile(
      longer, *sim,
      {"--request-rate", "8", "--duration", "2", "--max-duration", "20", "--slo", "e2e_ms:60000"});
  INFO(extended.out << extended.err);
  CHECK(extended.exit_code == 0);
  const json again = json::parse(testing::ReadText(longer / "out/profile.json"));
  CHECK(again["levels"][0]["judgement"]["verdict"] == "pass");
  // It ran past its 2 s, and stopped once it could tell, well before 20 s.
  const double wall = again["levels"][0]["self_check"]["wall_s"].get<double>();
  CHECK(wall > 3);
  CHECK(wall < 19);
}

TEST_CASE("A profile killed mid-level keeps the records it completed", "[cli][capacity]") {
  auto sim = StartSim(BatchingProfile(20));
  testing::TempDir dir;
  // Killed once the level has stored ten requests.
  Ran ran =
      Profile(dir, *sim, {"--concurrency", "4", "--duration", "60"},
              testing::SignalWhen(dir / "store.db", "SELECT COUNT(*) FROM requests", 10, SIGKILL));
  CHECK(ran.exit_code == -1);  // killed: no exit code
  auto store = store::Store::Open(dir / "store.db");
  REQUIRE(store.ok());
  auto runs = (*store)->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  auto stored = (*store)->ListRequests((*runs)[0].id);
  REQUIRE(stored.ok());
  // It was killed once ten were stored: they are all still there.
  CHECK(stored->size() >= 10);
  for (const load::RequestRecord& r : *stored)
    CHECK(r.outcome == load::Outcome::kOk);
}

}  // namespace
}  // namespace stagegate::cli
