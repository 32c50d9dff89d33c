// The AIPerf-compatible export as `profile` writes it against the reference application: where
// each level's files go, and that every figure in them is the one profile.json measured, under
// AIPerf's name (its inter_token_latency is stagegate's TPOT, its inter_chunk_latency the ITL).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "cli/recompute.h"
#include "cli/sim_fixture.h"
#include "sim/sim_server.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;
using testing::Ran;

// A sim that streams each of 16 tokens 2 ms apart.
std::unique_ptr<sim::SimServer> StartSim() {
  return testing::StartSimServer(testing::ModelProfile(1e12, 2));
}

Ran Profile(const testing::TempDir& dir, const sim::SimServer& sim, const std::string& levels) {
  return testing::RunStagegate(
      dir, {"profile", "--url", sim.base_url() + "/v1", "--model", "sim", "--concurrency", levels,
            "--requests", "12", "--input-tokens", "64", "--output-tokens", "16", "--extra-inputs",
            "ignore_eos:true", "--out", dir / "out", "--workers", "1"});
}

// 1000 / TPOT of each request of level `level` (its records in requests.jsonl, levels in the
// order they ran) whose tokens came apart: TPOT above 0, as AIPerf counts only those. On a busy
// machine a whole answer can arrive in one read, and its TPOT is 0.
std::vector<double> PerUser(const std::string& requests_jsonl, size_t level) {
  std::map<int64_t, size_t> level_of;
  std::vector<double> per_user;
  std::istringstream lines(requests_jsonl);
  for (std::string line; std::getline(lines, line);) {
    const json r = json::parse(line);
    level_of.emplace(r["phase_id"].get<int64_t>(), level_of.size());
    if (level_of.at(r["phase_id"].get<int64_t>()) != level || r["outcome"] != "ok") continue;
    const double ms = r["latency_ms"]["e2e"].get<double>() - r["latency_ms"]["ttft"].get<double>();
    const double tpot = ms / (r["tokens"]["output"].get<double>() - 1);
    if (tpot > 0) per_user.push_back(1000 / tpot);
  }
  return per_user;
}

void CheckSameFigures(const json& aiperf, const json& level, const std::vector<double>& per_user) {
  const json& m = level["metrics"];
  const json& requests = level["requests"];
  const json& throughput = level["throughput"];
  CHECK(aiperf["request_count"]["avg"].get<double>() == requests["completed"].get<double>());
  CHECK(aiperf["time_to_first_token"]["p50"] == m["ttft_ms"]["p50"]);
  CHECK(aiperf["time_to_first_token"]["p99"] == m["ttft_ms"]["p99"]);
  CHECK(aiperf["request_latency"]["avg"] == m["e2e_ms"]["mean"]);
  CHECK(aiperf["time_to_second_token"]["max"] == m["ttst_ms"]["max"]);
  CHECK(aiperf["inter_token_latency"]["avg"] == m["tpot_ms"]["mean"]);
  CHECK(aiperf["inter_chunk_latency"]["p95"] == m["itl_ms"]["p95"]);
  CHECK(aiperf["output_sequence_length"]["avg"].get<double>() == 16);
  CHECK(aiperf["benchmark_duration"]["avg"] == throughput["window_s"]);
  CHECK(aiperf["output_token_throughput"]["avg"] == throughput["output_token_throughput"]);
  // 1 / TPOT per request: about 500 tokens/s at 2 ms a token; the most is the shortest TPOT's.
  REQUIRE_FALSE(per_user.empty());
  CHECK(aiperf["output_token_throughput_per_user"]["max"].get<double>() ==
        Approx(*std::max_element(per_user.begin(), per_user.end())).epsilon(1e-4));
  CHECK(aiperf["error_summary"].empty());
  CHECK(aiperf["input_config"]["endpoint"]["model_names"] == json::array({"sim"}));
}

TEST_CASE("profile writes AIPerf's export for each level, with profile.json's figures",
          "[cli][profile][aiperf]") {
  auto sim = StartSim();
  testing::TempDir dir;
  SECTION("two levels: a directory each, as AIPerf keeps a sweep") {
    Ran ran = Profile(dir, *sim, "1,2");
    INFO(ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    CHECK(ran.out.find("AIPerf-compatible export: " + (dir / "out") +
                       "/aiperf/*/profile_export_aiperf.json") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "out/profile_export_aiperf.json"));
    const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
    REQUIRE(profile["levels"].size() == 2);
    const std::string requests = testing::ReadText(dir / "out/requests.jsonl");
    for (size_t l = 0; l < 2; ++l) {
      const json& level = profile["levels"][l];
      const std::string name = "concurrency" + FormatNumber(level["value"].get<double>(), 3);
      INFO(name);
      const json aiperf = json::parse(
          testing::ReadText(dir / ("out/aiperf/" + name + "/profile_export_aiperf.json")));
      CheckSameFigures(aiperf, level, PerUser(requests, l));
      CHECK(aiperf["input_config"]["loadgen"]["concurrency"] == level["value"]);
      const std::string csv =
          testing::ReadText(dir / ("out/aiperf/" + name + "/profile_export_aiperf.csv"));
      CHECK(csv.rfind("Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n", 0) == 0);
      CHECK(csv.find("\nOutput Sequence Length (tokens),16.00,16.00,16.00,") != std::string::npos);
      CHECK(csv.find("\n\nMetric,Value\n") != std::string::npos);
    }
  }
  SECTION("one level: next to profile.json") {
    Ran ran = Profile(dir, *sim, "2");
    INFO(ran.out << ran.err);
    REQUIRE(ran.exit_code == 0);
    const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
    const json aiperf = json::parse(testing::ReadText(dir / "out/profile_export_aiperf.json"));
    CheckSameFigures(aiperf, profile["levels"][0],
                     PerUser(testing::ReadText(dir / "out/requests.jsonl"), 0));

    // A second measurement of the same requests: requests.jsonl's per-request latencies and
    // times, through the textbook formulas (tests/cli/recompute.h), AIPerf's for ITL.
    std::vector<double> ttft, e2e, itl, per_user;
    int64_t first_sent = INT64_MAX, last_end = 0;
    std::istringstream lines(testing::ReadText(dir / "out/requests.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      const json r = json::parse(line);
      REQUIRE(r["outcome"] == "ok");
      ttft.push_back(r["latency_ms"]["ttft"].get<double>());
      e2e.push_back(r["latency_ms"]["e2e"].get<double>());
      const double tokens = r["tokens"]["output"].get<double>();
      itl.push_back((e2e.back() - ttft.back()) / (tokens - 1));
      if (itl.back() > 0) per_user.push_back(1000 / itl.back());
      first_sent = std::min(first_sent, r["times_ns"]["sent"].get<int64_t>());
      last_end = std::max(last_end, r["times_ns"]["end"].get<int64_t>());
    }
    REQUIRE(ttft.size() == 12);
    const auto near = [](double expected) { return Approx(expected).epsilon(1e-6).margin(1e-3); };
    CHECK(aiperf["time_to_first_token"]["p50"].get<double>() ==
          near(testing::LinearPercentile(ttft, 50)));
    CHECK(aiperf["time_to_first_token"]["p90"].get<double>() ==
          near(testing::LinearPercentile(ttft, 90)));
    CHECK(aiperf["request_latency"]["std"].get<double>() == near(testing::PopulationStd(e2e)));
    CHECK(aiperf["inter_token_latency"]["avg"].get<double>() == near(testing::Mean(itl)));
    CHECK(aiperf["output_token_throughput_per_user"]["avg"].get<double>() ==
          Approx(testing::Mean(per_user)).epsilon(1e-4));
    const double window_s = static_cast<double>(last_end - first_sent) / 1e9;
    CHECK(aiperf["benchmark_duration"]["avg"].get<double>() == Approx(window_s).epsilon(1e-9));
    CHECK(aiperf["request_throughput"]["avg"].get<double>() == Approx(12 / window_s));
    CHECK(std::filesystem::exists(dir / "out/profile_export_aiperf.csv"));
    CHECK_FALSE(std::filesystem::exists(dir / "out/aiperf"));
  }
}

}  // namespace
}  // namespace stagegate::cli
