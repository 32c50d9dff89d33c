// `stagegate profile --metrics-url` against the reference application: the server's own series,
// scraped through the level on the clock of the requests, in server_metrics.csv and profile.json,
// and counted again against the requests; and `--gpu`'s refusals.

#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "http_test_server.h"
#include "sim/sim_server.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// server_metrics.csv's rows, each split at its commas outside quotes.
std::vector<std::vector<std::string>> CsvRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    rows.push_back(std::move(fields));
  }
  return rows;
}

TEST_CASE("profile --metrics-url writes the server's series beside the requests, on their clock",
          "[cli][profile][telemetry]") {
  Result<std::unique_ptr<sim::SimServer>> sim = sim::SimServer::Start(
      {.host = "127.0.0.1", .port = 0, .profile = sim::SimProfile::Default()});
  REQUIRE(sim.ok());
  testing::TempDir dir;
  testing::Ran ran = testing::RunStagegate(
      dir,
      {"profile", "--url", (*sim)->base_url() + "/v1", "--model", "sim", "--concurrency", "4",
       "--duration", "2", "--output-tokens", "32", "--metrics-url", (*sim)->base_url() + "/metrics",
       "--scrape-interval-ms", "50", "--slice-s", "0.5", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find(dir / "out/server_metrics.csv") != std::string::npos);

  const std::vector<std::vector<std::string>> rows =
      CsvRows(testing::ReadText(dir / "out/server_metrics.csv"));
  REQUIRE(rows.size() > 10);
  CHECK(rows[0] == std::vector<std::string>{"t_ns", "level", "source", "series", "labels", "value",
                                            "canonical", "canonical_value"});
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  const json& level = profile["server_metrics"]["levels"][0];
  const int64_t started = level["started_ns"], ended = level["ended_ns"];
  REQUIRE(ended > started);
  CHECK(profile["server_metrics"]["sources"][0]["failures"] == 0);

  // The requests, on the same clock: the first sent after the first scrape, the last ended
  // before the last (the scraper reads once more as it stops).
  const std::vector<json> records = testing::ReadJsonLines(dir / "out/requests.jsonl");
  REQUIRE_FALSE(records.empty());
  int64_t first_sent = INT64_MAX, last_end = 0, ok = 0;
  for (const json& r : records) {
    first_sent = std::min<int64_t>(first_sent, r["times_ns"]["sent"]);
    if (r["times_ns"]["end"].is_number())
      last_end = std::max<int64_t>(last_end, r["times_ns"]["end"]);
    ok += r["outcome"] == "ok";
  }
  // The server's count of finished requests, from the first scrape to the last, summed over its
  // label sets: every request the client completed, no more.
  std::map<int64_t, double> finished;  // t_ns -> vllm:request_success_total, summed
  int64_t first_t = INT64_MAX, last_t = 0, running_in_level = 0;
  double running_max = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string>& row = rows[i];
    REQUIRE(row.size() == 8);
    const int64_t t = std::stoll(row[0]);
    first_t = std::min(first_t, t);
    last_t = std::max(last_t, t);
    if (row[3] == "vllm:request_success_total") finished[t] += std::stod(row[5]);
    if (row[3] == "vllm:num_requests_running") {
      CHECK(row[6] == "running");
      // A sample inside the level's window is marked with it, and only such a sample.
      CHECK((row[1] == "concurrency=4") == (t >= started && t <= ended));
      if (!row[1].empty()) {
        ++running_in_level;
        running_max = std::max(running_max, std::stod(row[7]));
      }
    }
  }
  CHECK(first_t < first_sent);
  CHECK(last_t > last_end);
  REQUIRE(finished.size() >= 2);
  CHECK(finished.rbegin()->second - finished.begin()->second == static_cast<double>(ok));
  CHECK(running_in_level >= 10);
  CHECK(running_max >= 1);
  CHECK(running_max <= 4);  // never more than the client had in flight
  CHECK(level["series"]["running"]["max"] == running_max);

  // --slice-s: the level's figures per half second, each slice's requests those sent in it.
  const json& slices = profile["levels"][0]["slices"];
  REQUIRE(slices.size() >= 4);
  int64_t offered = 0;
  for (const json& slice : slices) {
    const double from = slice["start_s"].get<double>() * 1e9 + static_cast<double>(started);
    const double to = slice["end_s"].get<double>() * 1e9 + static_cast<double>(started);
    int64_t sent_in = 0;
    for (const json& r : records) {
      const double sent = r["times_ns"]["sent"].get<double>();
      sent_in += !r["warmup"].get<bool>() && sent >= from && sent < to;
    }
    CHECK(slice["requests"]["offered"] == sent_in);
    offered += slice["requests"]["offered"].get<int64_t>();
  }
  CHECK(offered == profile["levels"][0]["requests"]["offered"]);
}

// vLLM v1 exposes its KV cache under the new name and the deprecated one. profile once summed
// every name it knew (1.4 here, over 100%); it now reads the stored series by the report's rule,
// the first name of the vendor table that has samples.
TEST_CASE("profile reads a series exposed under two names once, as the report does",
          "[cli][profile][telemetry]") {
  Result<std::unique_ptr<sim::SimServer>> sim = sim::SimServer::Start(
      {.host = "127.0.0.1", .port = 0, .profile = sim::SimProfile::Default()});
  REQUIRE(sim.ok());
  // 4 rounds of two 8-token answers at 8 ms a token: about 260 ms, some 25 scrapes.
  testing::FixedResponseServer metrics(
      testing::HttpResponse("200 OK",
                            "vllm:kv_cache_usage_perc{model_name=\"m\"} 0.5\n"
                            "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.9\n"
                            "vllm:num_requests_running{model_name=\"m\"} 3\n"
                            "vllm:num_requests_waiting{model_name=\"m\"} 2\n",
                            "text/plain; version=0.0.4"));
  testing::TempDir dir;
  testing::Ran ran = testing::RunStagegate(
      dir, {"profile", "--url", (*sim)->base_url() + "/v1", "--model", "sim", "--requests", "8",
            "--concurrency", "2", "--output-tokens", "8", "--metrics-url",
            metrics.base() + "/metrics", "--scrape-interval-ms", "10", "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json profile = json::parse(testing::ReadText(dir / "out/profile.json"));
  const json& series = profile["server_metrics"]["levels"][0]["series"];
  INFO(series.dump());
  REQUIRE(series.contains("kv cache"));
  CHECK(series["kv cache"]["mean"] == 0.5);
  CHECK(series["kv cache"]["max"] == 0.5);
  CHECK(series["running"]["max"] == 3);

  // The report reads the same stored series for what saturated first over the levels.
  const std::string run_id = profile["run_id"];
  REQUIRE(testing::RunStagegate(dir, {"report", run_id, "--out", dir / "report", "--format", "md"})
              .exit_code != 2);
  CHECK(testing::ReadText(dir / "report/report.md")
            .find("What saturated first: requests waiting (2 on average) from concurrency 2.") !=
        std::string::npos);
}

TEST_CASE("profile refuses a --gpu or --metrics-url it cannot use", "[cli][profile]") {
  testing::TempDir dir;
  const auto refused = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"profile", "--url", "http://127.0.0.1:9/v1", "--model", "m"};
    args.insert(args.end(), extra.begin(), extra.end());
    testing::Ran ran = testing::RunStagegate(dir, args);
    CHECK(ran.exit_code == 2);
    return ran.err;
  };
  CHECK(refused({"--gpu", "dcgm"})
            .find("--gpu dcgm: give the DCGM exporter's metrics URL after it") !=
        std::string::npos);
  CHECK(refused({"--gpu", "sometimes"}).find("--gpu: give auto, off, or dcgm URL") !=
        std::string::npos);
  CHECK(refused({"--gpu", "auto", "http://127.0.0.1:9/metrics"}).find("--gpu auto: takes no URL") !=
        std::string::npos);
  CHECK(refused({"--metrics-url", "ftp://127.0.0.1/metrics"}).find("--metrics-url: ") !=
        std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli
