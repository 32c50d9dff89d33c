#include "scenario/capacity_search.h"

#include <catch2/catch.hpp>

#include <vector>

namespace stagegate::scenario {
namespace {

// A fake application whose levels pass up to `ceiling` and fail above it.
struct Fake {
  double ceiling = 0;
  std::optional<double> inconclusive_at;
  std::vector<double> ran;
  RunLevel Runner() {
    return [this](double level) -> Result<stats::LevelOutcome> {
      ran.push_back(level);
      const bool unsure = inconclusive_at && level == *inconclusive_at;
      return stats::LevelOutcome{.level = level,
                                 .passed = !unsure && level <= ceiling,
                                 .inconclusive = unsure,
                                 .failed = unsure || level <= ceiling ? "" : "not sustained",
                                 .sustained_rate = level};
    };
  }
};

TEST_CASE("A search doubles until a level misses, then bisects to its resolution", "[scenario]") {
  Fake app{.ceiling = 11.8};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.search = true, .start = 2, .resolution = 0.1}, app.Runner(), stop);
  REQUIRE(result.ok());
  // 2, 4, 8 pass, 16 misses; then 12 (miss), 10 (pass), 11 (pass): 12 <= 11 x 1.1.
  CHECK(app.ran == std::vector<double>{2, 4, 8, 16, 12, 10, 11});
  CHECK(result->finding.holds_up_to == 11);
  CHECK(result->finding.fails_at == 12);
  CHECK(*result->finding.fails_at <= *result->finding.holds_up_to * 1.1);
  CHECK(result->finding.sustained_rate == 11);
  CHECK(result->finding.failed == "not sustained");
  CHECK(result->outcomes.size() == 7);
}

TEST_CASE("A search stops at its ceiling when every level holds", "[scenario]") {
  Fake app{.ceiling = 1000};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.search = true, .start = 3, .max_level = 20}, app.Runner(), stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{3, 6, 12, 20});
  CHECK(result->finding.holds_up_to == 20);
  CHECK_FALSE(result->finding.fails_at);
}

TEST_CASE("A search of concurrencies bisects in whole numbers", "[scenario]") {
  Fake app{.ceiling = 5};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result = RunSweep(
      {.search = true, .start = 1, .resolution = 0.01, .integer = true}, app.Runner(), stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{1, 2, 4, 8, 6, 5});
  CHECK(result->finding.holds_up_to == 5);
  CHECK(result->finding.fails_at == 6);
}

TEST_CASE("A level too short to tell stops the search upward and marks the finding", "[scenario]") {
  Fake app{.ceiling = 100, .inconclusive_at = 8};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.search = true, .start = 2, .resolution = 0.5}, app.Runner(), stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{2, 4, 8, 6});
  CHECK(result->finding.holds_up_to == 6);
  CHECK(result->finding.fails_at == 8);
  CHECK(result->finding.inconclusive);
  CHECK(stats::DescribeCapacity(result->finding, result->outcomes, "req/s") ==
        "inconclusive: sustained 6 req/s; thresholds hold up to 6 req/s and 8 req/s was too "
        "short to tell");
}

TEST_CASE("A fixed sweep runs one level past the first miss, then its bisections", "[scenario]") {
  Fake app{.ceiling = 13};
  const std::atomic<bool> stop{false};
  Result<SweepResult> result =
      RunSweep({.levels = {4, 8, 12, 16, 20, 24}, .bisect = 1}, app.Runner(), stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{4, 8, 12, 16, 20, 14});
  CHECK(result->finding.holds_up_to == 12);
  CHECK(result->finding.fails_at == 14);
}

TEST_CASE("A stop ends the sweep after the level in flight", "[scenario]") {
  Fake app{.ceiling = 100};
  std::atomic<bool> stop{false};
  RunLevel inner = app.Runner();
  Result<SweepResult> result = RunSweep(
      {.search = true, .start = 1},
      [&](double level) {
        if (level >= 4) stop = true;
        return inner(level);
      },
      stop);
  REQUIRE(result.ok());
  CHECK(app.ran == std::vector<double>{1, 2, 4});
}

TEST_CASE("A failing level is an error of the sweep", "[scenario]") {
  const std::atomic<bool> stop{false};
  Result<SweepResult> result = RunSweep(
      {.levels = {1, 2}},
      [](double) -> Result<stats::LevelOutcome> { return Status::IoError("store full"); }, stop);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().message() == "store full");
}

}  // namespace
}  // namespace stagegate::scenario
