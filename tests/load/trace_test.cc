#include "load/trace.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "load/arrival_printer.h"
#include "test_util.h"

namespace stagegate::load {
namespace {

using testing::ReplaceAll;
using testing::Testdata;
using Arrivals = std::vector<Arrival>;
using Entries = std::vector<TraceEntry>;

Entries Load(const std::string& fixture) {
  Result<Entries> entries = LoadTrace(Testdata("traces/" + fixture));
  INFO(entries.status().message());
  REQUIRE(entries.ok());
  return std::move(entries).value();
}

// The error of loading a fixture, with paths shown relative to the testdata folder.
std::string LoadError(const std::string& fixture) {
  Result<Entries> entries = LoadTrace(Testdata("traces/" + fixture));
  REQUIRE_FALSE(entries.ok());
  CHECK(entries.status().code() == Status::Code::kInvalidInput);
  return ReplaceAll(entries.status().message(), testing::Testdata(""), "");
}

Arrivals Schedule(const Entries& trace, const TraceScheduleOptions& options) {
  Result<Arrivals> arrivals = BuildTraceSchedule(trace, options);
  INFO(arrivals.status().message());
  REQUIRE(arrivals.ok());
  return std::move(arrivals).value();
}

TEST_CASE("LoadTrace reads a trace, keeps hash_ids and sorts by timestamp stably", "[load]") {
  // The file lists 0, 1500, (blank), 700, 700, 3000.5; the two 700s keep their file order.
  CHECK(Load("good.jsonl") == Entries{{0, 6955, 52, {46, 47, 48}},
                                      {700, 800, 64, {46, 49}},
                                      {700, 900, 65, {}},
                                      {1500, 120, 30, {}},
                                      {3000.5, 10, 1, {}}});
  CHECK(Load("crlf.jsonl") == Entries{{10, 5, 6, {}}, {20, 7, 8, {}}});
}

TEST_CASE("LoadTrace reports every bad line of a trace in one pass", "[load]") {
  CHECK(LoadError("broken.jsonl") ==
        "traces/broken.jsonl:2: 'input_length' must be an integer from 1 to 1000000, got 0\n"
        "traces/broken.jsonl:3: 'input_length' must be an integer from 1 to 1000000, got \"100\"\n"
        "traces/broken.jsonl:5:59: not JSON: syntax error while parsing object - unexpected end "
        "of input; expected '}'\n"
        "traces/broken.jsonl:6: expected a JSON object, got [1,2,3]\n"
        "traces/broken.jsonl:7: missing 'timestamp'\n"
        "traces/broken.jsonl:7: missing 'output_length'\n"
        "traces/broken.jsonl:8: 'timestamp' must be a number from 0 to 604800000 (milliseconds), "
        "got -5\n"
        "traces/broken.jsonl:8: 'input_length' must be an integer from 1 to 1000000, got 12.5\n"
        "traces/broken.jsonl:8: 'hash_ids' must be an array of integers, got [1,\"x\"]\n"
        "traces/broken.jsonl:10:19: not JSON: syntax error while parsing object key - invalid "
        "literal; last read: '50, i'; expected string literal\n"
        "traces/broken.jsonl:11: 'timestamp' must be a number from 0 to 604800000 (milliseconds), "
        "got 1000000000000.0\n"
        "traces/broken.jsonl:11: 'input_length' must be an integer from 1 to 1000000, got "
        "9223372036854775807");
  CHECK(LoadError("empty.jsonl") == "traces/empty.jsonl: the trace has no entries");

  Result<Entries> missing = LoadTrace(Testdata("traces/no-such-trace.jsonl"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Status::Code::kNotFound);
}

TEST_CASE("LoadTrace lists the first problems and counts the rest", "[load]") {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < kMaxTraceErrors + 5; ++i)
    text += "{\"timestamp\": 1, \"input_length\": 2}\n";
  const std::string path = dir / "many.jsonl";
  testing::WriteText(path, text);
  Result<Entries> entries = LoadTrace(path);
  REQUIRE_FALSE(entries.ok());
  std::string expected;
  for (int line = 1; line <= kMaxTraceErrors; ++line)
    expected += path + ":" + std::to_string(line) + ": missing 'output_length'\n";
  expected += path + ": 5 more problems not shown";
  CHECK(entries.status().message() == expected);
}

TEST_CASE("LoadTrace reports a number beyond a double's range on its line", "[load]") {
  testing::TempDir dir;
  const std::string path = dir / "huge.jsonl";
  testing::WriteText(path,
                     "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n"
                     "{\"timestamp\": 1e400, \"input_length\": 1, \"output_length\": 1}\n"
                     "{\"timestamp\": 5, \"input_length\": -1e999, \"output_length\": 1}\n");
  Result<Entries> entries = LoadTrace(path);
  REQUIRE_FALSE(entries.ok());
  CHECK(entries.status().code() == Status::Code::kInvalidInput);
  CHECK(entries.status().message() == path + ":2: number overflow parsing '1e400'\n" + path +
                                          ":3: number overflow parsing '-1e999'");
}

TEST_CASE("LoadTrace refuses a line nested too deep to print, instead of crashing", "[load]") {
  testing::TempDir dir;
  const std::string path = dir / "deep.jsonl";
  testing::WriteText(path, std::string(1'000'000, '[') + std::string(1'000'000, ']') + "\n");
  Result<Entries> entries = LoadTrace(path);
  REQUIRE_FALSE(entries.ok());
  CHECK(entries.status().message() ==
        path + ":1: arrays and objects nested deeper than 100 levels");
}

TEST_CASE("A trace replays at its own pace, scaled by the speedup", "[load]") {
  const Entries trace = Load("good.jsonl");
  CHECK(
      Schedule(trace, {}) ==
      Arrivals{{0, 0}, {1, 700'000'000}, {2, 700'000'000}, {3, 1'500'000'000}, {4, 3'000'500'000}});
  CHECK(Schedule(trace, {.speedup = 2}) ==
        Arrivals{{0, 0}, {1, 350'000'000}, {2, 350'000'000}, {3, 750'000'000}, {4, 1'500'250'000}});
  CHECK(Schedule(trace, {.speedup = 0.5}).back() == Arrival{4, 6'001'000'000});

  // Times count from the first entry, wherever the trace's clock starts.
  CHECK(Schedule({{1000, 1, 1, {}}, {1250.25, 1, 1, {}}}, {}) ==
        Arrivals{{0, 0}, {1, 250'250'000}});
}

TEST_CASE("A trace schedule honours requests, duration and shards", "[load]") {
  const Entries trace = Load("good.jsonl");
  CHECK(Schedule(trace, {.requests = 2}) == Arrivals{{0, 0}, {1, 700'000'000}});
  CHECK(Schedule(trace, {.requests = 50}).size() == 5u);
  // 1.5 s is the fourth entry's time: the duration excludes it.
  CHECK(Schedule(trace, {.duration_s = 1.5}).size() == 3u);
  CHECK(Schedule(trace, {.speedup = 2, .duration_s = 1.5}).size() == 4u);

  CHECK(Schedule(trace, {.shard = {.index = 0, .count = 2}}) ==
        Arrivals{{0, 0}, {2, 700'000'000}, {4, 3'000'500'000}});
  CHECK(Schedule(trace, {.shard = {.index = 1, .count = 2}}) ==
        Arrivals{{1, 700'000'000}, {3, 1'500'000'000}});
}

TEST_CASE("BuildTraceSchedule refuses an unusable trace or options", "[load]") {
  Result<Arrivals> unusable = BuildTraceSchedule(
      {}, {.speedup = 0, .requests = 0, .duration_s = -1, .shard = {.index = 2, .count = 2}});
  REQUIRE_FALSE(unusable.ok());
  CHECK(unusable.status().code() == Status::Code::kInvalidInput);
  CHECK(unusable.status().message() ==
        "the trace is empty\n"
        "'speedup' must be a number > 0\n"
        "'requests' must be at least 1, got 0\n"
        "'duration_s' must be a number > 0\n"
        "shard index 2 of 2 is out of range (the index counts from 0 and must be below the count)");

  Result<Arrivals> unsorted =
      BuildTraceSchedule({{0, 1, 1, {}}, {20, 1, 1, {}}, {10, 1, 1, {}}}, {});
  REQUIRE_FALSE(unsorted.ok());
  CHECK(unsorted.status().message() ==
        "the trace is not sorted by timestamp: entry 3 (10 ms) follows entry 2 (20 ms)");
}

TEST_CASE("A trace replays at a phase's rate, its shape kept, looped as the phase needs",
          "[load]") {
  // Five entries over 3,000.5 ms: a mean of 4 / 3.0005 s. At 8 req/s the gaps shrink by
  // 8 * 3.0005 / 4 and a pass lasts 5 / 8 s.
  const Entries trace = Load("good.jsonl");
  Result<Arrivals> replay = BuildTraceReplay(trace, 8, 12, std::nullopt);
  REQUIRE(replay.ok());
  REQUIRE(replay->size() == 12u);
  const double scale = 4 / (8 * 3000.5);  // s of replay per ms of trace
  const std::vector<double> trace_ms = {0, 700, 700, 1500, 3000.5};
  for (int64_t n = 0; n < 12; ++n) {
    INFO("sequence " << n);
    CHECK((*replay)[n].sequence == n);
    const double expected_s = static_cast<double>(n / 5) * 0.625 + trace_ms[n % 5] * scale;
    CHECK((*replay)[n].intended_ns == std::llround(expected_s * 1e9));
  }
  // The mean rate over whole passes is the phase's.
  CHECK((*replay)[10].intended_ns == 1'250'000'000);

  // A duration ends it: intended before 1 s only.
  Result<Arrivals> timed = BuildTraceReplay(trace, 8, std::nullopt, 1.0);
  REQUIRE(timed.ok());
  CHECK(timed->size() == 9u);
  CHECK(timed->back().intended_ns < 1'000'000'000);

  // One entry: a pass is one gap.
  Result<Arrivals> single = BuildTraceReplay({{5, 1, 1, {}}}, 4, 3, std::nullopt);
  REQUIRE(single.ok());
  CHECK(*single == Arrivals{{0, 0}, {1, 250'000'000}, {2, 500'000'000}});
}

TEST_CASE("BuildTraceReplay refuses a trace without a rate, or a replay without an end", "[load]") {
  const auto message = [](Result<Arrivals> replay) {
    REQUIRE_FALSE(replay.ok());
    CHECK(replay.status().code() == Status::Code::kInvalidInput);
    return replay.status().message();
  };
  CHECK(message(BuildTraceReplay({}, 1, 1, std::nullopt)) == "the trace is empty");
  CHECK(message(BuildTraceReplay({{3, 1, 1, {}}, {3, 1, 1, {}}}, 1, 1, std::nullopt)) ==
        "every entry of the trace has the same timestamp: it has no rate to replay at another");
  CHECK(message(BuildTraceReplay({{0, 1, 1, {}}, {9, 1, 1, {}}}, 0, 1, std::nullopt)) ==
        "the rate must be > 0");
  CHECK(message(BuildTraceReplay({{0, 1, 1, {}}, {9, 1, 1, {}}}, 1, std::nullopt, std::nullopt)) ==
        "a trace replay needs a request count or a duration");
  CHECK(message(BuildTraceReplay({{9, 1, 1, {}}, {0, 1, 1, {}}}, 1, 1, std::nullopt)) ==
        "the trace is not sorted by timestamp");
}

}  // namespace
}  // namespace stagegate::load
