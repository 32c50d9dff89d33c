// profile_export_aiperf.json and .csv from hand-made records: every figure worked out by hand,
// and the layout checked key by key against tests/testdata/aiperf/profile_export_aiperf.json, a
// fixture in the layout AIPerf documents for that file (its keys, stats keys and units; the
// values there are placeholders).

#include "load/aiperf_export.h"

#include <catch2/catch.hpp>

#include <set>

#include "base/strings.h"
#include "test_util.h"

namespace stagegate::load {
namespace {

using json = nlohmann::json;
constexpr int64_t kMs = 1'000'000;

RequestRecord Streamed(double sent, std::vector<double> token_ms, double end, int64_t tokens) {
  RequestRecord r;
  r.intended_ns = static_cast<int64_t>(sent * kMs);
  r.sent_ns = r.intended_ns;
  for (double t : token_ms)
    r.chunk_times_ns.push_back(static_cast<int64_t>(t * kMs));
  r.first_token_ns = r.chunk_times_ns.front();
  r.first_answer_ns = r.first_token_ns;
  r.end_ns = static_cast<int64_t>(end * kMs);
  r.output_tokens = tokens;
  r.token_source = "usage";
  r.input_tokens = 100;
  return r;
}

RequestRecord Failed(double sent, int64_t status, Outcome outcome, std::string message) {
  RequestRecord r;
  r.intended_ns = static_cast<int64_t>(sent * kMs);
  r.sent_ns = r.intended_ns;
  r.end_ns = r.sent_ns;
  r.outcome = outcome;
  if (status) r.http_status = status;
  r.error_message = std::move(message);
  r.requested_input_tokens = 40;
  return r;
}

// Two answers and two refusals of one kind, one timeout, and a warmup request left out.
// Answer 1: sent at 0, tokens at 10, 12, 15, ends at 20, 3 tokens: TTFT 10, TTST 2, TPOT
// (20 - 10) / 2 = 5 ms (200 tokens/s/user), chunk gaps 2 and 3.
// Answer 2: sent at 100, tokens at 130 and 131, ends at 140, 2 tokens: TTFT 30, TTST 1, TPOT
// 10 ms (100 tokens/s/user), chunk gap 1.
std::vector<RequestRecord> Records() {
  std::vector<RequestRecord> records = {
      Streamed(0, {10, 12, 15}, 20, 3), Streamed(100, {130, 131}, 140, 2),
      Failed(50, 429, Outcome::kShed, "queue full"), Failed(60, 429, Outcome::kShed, "again"),
      Failed(70, 0, Outcome::kTimeout, "first token timeout after 5000 ms")};
  RequestRecord warm = Streamed(0, {1, 2}, 1000, 2);
  warm.warmup = true;
  records.push_back(warm);
  return records;
}

json Export(const std::vector<RequestRecord>& records, std::vector<Slo> slos = {}) {
  return AiperfJson({.records = records,
                     .slos = std::move(slos),
                     .wall_origin_ns = 1'764'633'600'000'000'000,  // 2025-12-02T00:00:00Z
                     .interrupted = false,
                     .input_config = {{"endpoint", {{"type", "chat"}}}},
                     .stagegate = {{"run_id", "profile-x"}}});
}

TEST_CASE("the AIPerf export computes AIPerf's metrics from the records", "[load][aiperf]") {
  const json a = Export(Records());
  CHECK(a["time_to_first_token"]["avg"].get<double>() == Approx(20));
  CHECK(a["time_to_first_token"]["min"].get<double>() == Approx(10));
  CHECK(a["time_to_first_token"]["p50"].get<double>() == Approx(20));
  CHECK(a["time_to_first_token"]["std"].get<double>() == Approx(10));  // population std
  CHECK(a["time_to_second_token"]["avg"].get<double>() == Approx(1.5));
  CHECK(a["request_latency"]["max"].get<double>() == Approx(40));
  // AIPerf's inter_token_latency is stagegate's TPOT; its inter_chunk_latency every gap.
  CHECK(a["inter_token_latency"]["avg"].get<double>() == Approx(7.5));
  CHECK(a["inter_chunk_latency"]["avg"].get<double>() == Approx(2));
  CHECK(a["inter_chunk_latency"]["max"].get<double>() == Approx(3));
  CHECK(a["output_token_throughput_per_user"]["avg"].get<double>() == Approx(150));
  CHECK(a["output_token_throughput_per_user"]["unit"] == "tokens/sec/user");
  CHECK(a["output_sequence_length"]["avg"].get<double>() == Approx(2.5));
  CHECK(a["input_sequence_length"]["avg"].get<double>() == Approx(100));
  CHECK(a["request_count"]["avg"].get<double>() == 2);
  CHECK(a["total_osl"]["avg"].get<double>() == 5);
  CHECK(a["total_isl"]["avg"].get<double>() == 200);
  // From the first send (0) to the last end (140 ms).
  CHECK(a["benchmark_duration"]["avg"].get<double>() == Approx(0.14));
  CHECK(a["request_throughput"]["avg"].get<double>() == Approx(2 / 0.14));
  CHECK(a["output_token_throughput"]["avg"].get<double>() == Approx(5 / 0.14));
  CHECK(a["start_time"] == "2025-12-02T00:00:00.000000");
  CHECK(a["end_time"] == "2025-12-02T00:00:00.140000");
  CHECK(a["was_cancelled"] == false);
  // Failures, grouped by status and outcome, with the first message of each group.
  CHECK(a["error_request_count"]["avg"].get<double>() == 3);
  REQUIRE(a["error_summary"].size() == 2);
  CHECK(a["error_summary"][0] ==
        json::parse(R"({"error_details": {"code": 429, "type": "shed", "message": "queue full"},
                        "count": 2})"));
  CHECK(a["error_summary"][1]["error_details"]["code"].is_null());
  CHECK(a["error_summary"][1]["error_details"]["type"] == "timeout");
  CHECK(a["error_isl"]["avg"].get<double>() == 40);
  CHECK(a["total_error_isl"]["avg"].get<double>() == 120);
  CHECK(a["goodput"].is_null());
  CHECK(a["stagegate"]["run_id"] == "profile-x");

  SECTION("with SLOs, goodput counts the requests that met them") {
    const json g = Export(Records(), {{"ttft_ms", 15}});
    CHECK(g["good_request_count"]["avg"].get<double>() == 1);
    CHECK(g["goodput"]["avg"].get<double>() == Approx(1 / 0.14));
  }
  SECTION("without streaming there is no TTFT, and no error fields without errors") {
    RequestRecord plain = Streamed(0, {20}, 20, 4);
    plain.chunk_times_ns.clear();
    plain.first_token_ns.reset();
    const json p = Export({plain});
    CHECK_FALSE(p.contains("time_to_first_token"));
    CHECK_FALSE(p.contains("inter_token_latency"));
    CHECK(p.contains("request_latency"));
    CHECK(p["error_request_count"].is_null());
    CHECK(p["error_summary"].empty());
  }
  SECTION("nothing sent: no distributions and no times") {
    const json n = Export({});
    CHECK_FALSE(n.contains("request_latency"));
    CHECK(n["start_time"].is_null());
    CHECK(n["request_count"]["avg"].get<double>() == 0);
  }
}

// Every key of the fixture is in the export with the same kind of value; every distribution has
// exactly AIPerf's stats keys; every unit is AIPerf's.
TEST_CASE("the AIPerf export has AIPerf's documented layout, key by key", "[load][aiperf]") {
  const json fixture =
      json::parse(testing::ReadText(testing::Testdata("aiperf/profile_export_aiperf.json")));
  const json a = Export(Records());
  for (const auto& [key, expected] : fixture.items()) {
    INFO(key);
    REQUIRE(a.contains(key));
    const json& got = a[key];
    if (expected.is_null()) continue;  // null when not tracked; ours may be tracked
    if (expected.is_object() && expected.contains("unit")) {
      REQUIRE(got.is_object());
      CHECK(got["unit"] == expected["unit"]);
      std::set<std::string> want, have;
      for (const auto& [k, v] : expected.items())
        want.insert(k);
      for (const auto& [k, v] : got.items()) {
        have.insert(k);
        CHECK((k == "unit" ? v.is_string() : v.is_number()));
      }
      CHECK(have == want);
    } else if (key == "error_summary") {
      REQUIRE(got.is_array());
      REQUIRE_FALSE(got.empty());
      for (const json& group : got) {
        CHECK(group["count"].is_number_integer());
        for (const auto& [k, v] : expected[0]["error_details"].items())
          CHECK(group["error_details"].contains(k));
      }
    } else if (key == "input_config") {
      CHECK(got.is_object());
    } else {
      CHECK(got.type() == expected.type());
    }
  }
  // Timestamps in the fixture's shape.
  CHECK(a["start_time"].get<std::string>().size() ==
        fixture["start_time"].get<std::string>().size());
}

TEST_CASE("the AIPerf CSV lists distributions, then summary metrics", "[load][aiperf]") {
  const std::vector<std::string> lines = Split(AiperfCsv(Export(Records())), '\n');
  REQUIRE(lines.size() > 12);
  CHECK(lines[0] == "Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std");
  CHECK(lines[1] ==
        "Request Latency (ms),30.00,20.00,40.00,20.20,21.00,22.00,25.00,30.00,35.00,38.00,39.00,"
        "39.80,10.00");
  CHECK(lines[2].rfind("Time to First Token (ms),20.00,10.00,30.00,", 0) == 0);
  CHECK(lines[4].rfind("Inter Token Latency (ms),7.50,5.00,10.00,", 0) == 0);
  CHECK(lines[6].rfind("Output Token Throughput Per User (tokens/sec/user),150.00,", 0) == 0);
  const auto blank = std::find(lines.begin(), lines.end(), "");
  REQUIRE(blank != lines.end());
  CHECK(*(blank + 1) == "Metric,Value");
  CHECK(*(blank + 2) == "Benchmark Duration (sec),0.14");
  CHECK(*(blank + 3) == "Request Throughput (requests/sec),14.29");
  CHECK(*(blank + 4) == "Request Count,2.00");
  CHECK(*(blank + 5) == "Error Request Count,3.00");
}

}  // namespace
}  // namespace stagegate::load
