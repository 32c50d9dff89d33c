// Store::ListTelemetry: a run's samples of the series with given name endings.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "store/sqlite.h"
#include "store/store.h"
#include "telemetry/scraper.h"
#include "test_util.h"

namespace stagegate::store {
namespace {

using Point = std::tuple<std::string, int64_t, double>;

template <typename T>
T Ok(Result<T> result) {
  INFO(result.status().message());
  REQUIRE(result.ok());
  return std::move(result).value();
}

void AddRun(Store& store, const std::string& id) {
  Status status = store.CreateRun({.id = id,
                                   .scenario_name = "telemetry",
                                   .scenario_file = "telemetry.yaml",
                                   .fingerprint = "sha256:x",
                                   .scenario_json = "{}",
                                   .started_unix_ms = 1});
  INFO(status.message());
  REQUIRE(status.ok());
}

// Adds (series, t_ns, value) samples to a run.
void AddSamples(Store& store, const std::string& run_id, const std::vector<Point>& points) {
  std::vector<telemetry::TimedSample> samples;
  for (const auto& [series, t_ns, value] : points)
    samples.push_back(
        {.t_ns = t_ns, .source = "metrics", .sample = {.name = series, .value = value}});
  REQUIRE(Ok(store.AddTelemetry(run_id, samples)) == 0);
}

std::vector<Point> Listed(Store& store, const std::string& run_id, int64_t from_ns, int64_t to_ns,
                          const std::vector<std::string>& suffixes) {
  std::vector<Point> points;
  for (const TelemetryPoint& p : Ok(store.ListTelemetry(run_id, from_ns, to_ns, suffixes)))
    points.emplace_back(p.series, p.t_ns, p.value);
  return points;
}

const std::vector<std::string> kQueueSuffixes = {"num_requests_running", "num_requests_waiting"};

TEST_CASE("ListTelemetry lists a run's samples of the series named, by series then time",
          "[store][telemetry]") {
  std::unique_ptr<Store> store = Ok(Store::OpenInMemory());
  AddRun(*store, "run-1");
  AddRun(*store, "run-2");
  AddSamples(*store, "run-1",
             {{"vllm:num_requests_waiting", 300, 4},
              {"vllm:num_requests_running", 300, 2},
              {"vllm:num_requests_running", 100, 1},
              {"vllm:num_requests_running", 99, 7},   // before the window
              {"vllm:num_requests_running", 501, 7},  // after it
              {"vllm:num_requests_waiting", 500, 5},  // on its end
              {"vllm:num_requests_swapped", 200, 7},
              {"vllm:num_requests_running_total", 200, 7},
              {"numXrequestsXrunning", 200, 7}});  // what an unescaped '_' would match
  AddSamples(*store, "run-2", {{"vllm:num_requests_running", 200, 7}});

  CHECK(Listed(*store, "run-1", 100, 500, kQueueSuffixes) ==
        std::vector<Point>{{"vllm:num_requests_running", 100, 1},
                           {"vllm:num_requests_running", 300, 2},
                           {"vllm:num_requests_waiting", 300, 4},
                           {"vllm:num_requests_waiting", 500, 5}});
  CHECK(Listed(*store, "run-1", 100, 500, {"num_requests_waiting"}) ==
        std::vector<Point>{{"vllm:num_requests_waiting", 300, 4},
                           {"vllm:num_requests_waiting", 500, 5}});
  CHECK(Listed(*store, "run-2", 0, 1000, kQueueSuffixes) ==
        std::vector<Point>{{"vllm:num_requests_running", 200, 7}});
  CHECK(Listed(*store, "run-1", 100, 500, {}).empty());
  CHECK(Listed(*store, "run-x", 0, 1000, kQueueSuffixes).empty());
}

TEST_CASE("ListTelemetry takes a suffix as plain text", "[store][telemetry]") {
  std::unique_ptr<Store> store = Ok(Store::OpenInMemory());
  AddRun(*store, "run-1");
  AddSamples(*store, "run-1",
             {{"cache_100%_used", 1, 1},
              {"cache_1000_used", 2, 2},
              {"back\\slash", 3, 3},
              {"backXslash", 4, 4}});

  CHECK(Listed(*store, "run-1", 0, 10, {"100%_used"}) ==
        std::vector<Point>{{"cache_100%_used", 1, 1}});
  CHECK(Listed(*store, "run-1", 0, 10, {"k\\slash"}) == std::vector<Point>{{"back\\slash", 3, 3}});
}

TEST_CASE("ListTelemetry gives what the report's query of the server's queue gave",
          "[store][telemetry]") {
  // The query report/model.cc ran itself, before the store took it over. (SQL's LIKE ignores
  // the case of ASCII letters; so does ListTelemetry.)
  testing::TempDir dir;
  std::unique_ptr<Store> store = Ok(Store::Open(dir / "store.db"));
  AddRun(*store, "run-1");
  AddSamples(*store, "run-1",
             {{"vllm:num_requests_waiting", 20, 3},
              {"vllm:num_requests_running", 20, 1.5},
              {"VLLM:NUM_REQUESTS_RUNNING", 30, 6},
              {"sglang:num_requests_running", 10, 2},
              {"vllm:num_requests_running", 10, 1},
              {"vllm:num_requests_running", 40, 9},
              {"vllm:gpu_cache_usage_perc", 20, 0.5}});
  std::unique_ptr<Database> db = Ok(Database::Open(dir / "store.db"));
  Statement q = Ok(Statement::Prepare(
      *db,
      "SELECT series, t_ns, value FROM telemetry_samples WHERE run_id = ? AND t_ns BETWEEN ? "
      "AND ? AND (series LIKE '%num_requests_running' OR series LIKE '%num_requests_waiting') "
      "ORDER BY series, t_ns"));
  q.Bind(1, "run-1").Bind(2, int64_t{10}).Bind(3, int64_t{30});
  std::vector<Point> expected;
  while (q.Step())
    expected.emplace_back(q.Text(0), q.Int(1), q.Real(2));
  REQUIRE(q.status().ok());
  REQUIRE(expected.size() == 5u);

  CHECK(Listed(*store, "run-1", 10, 30, kQueueSuffixes) == expected);
}

}  // namespace
}  // namespace stagegate::store
