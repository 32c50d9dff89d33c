#include "stats/capacity.h"

#include <catch2/catch.hpp>

#include <optional>
#include <vector>

namespace stagegate::stats {
namespace {

TEST_CASE("FindCapacity of a monotonic sweep: the last pass and the first failure", "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 2, .passed = true},   {.level = 4, .passed = true},   {.level = 8, .passed = true},
      {.level = 10, .passed = false}, {.level = 16, .passed = false},
  };
  const CapacityFinding finding = FindCapacity(levels);
  CHECK(finding.holds_up_to == 8);
  CHECK(finding.fails_at == 10);
  CHECK(finding.monotonic);
}

TEST_CASE("FindCapacity compares levels by value, not by the order they ran in", "[stats]") {
  // The sweep ran 2, 4, 8, 16, then bisected between 4 and 8 (6 passes) and 6 and 8 (7 fails).
  const std::vector<LevelOutcome> levels = {
      {.level = 2, .passed = true},   {.level = 4, .passed = true}, {.level = 8, .passed = false},
      {.level = 16, .passed = false}, {.level = 6, .passed = true}, {.level = 7, .passed = false},
  };
  const CapacityFinding finding = FindCapacity(levels);
  CHECK(finding.holds_up_to == 6);
  CHECK(finding.fails_at == 7);
  CHECK(finding.monotonic);
}

TEST_CASE("FindCapacity when every level passes", "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 16, .passed = true}, {.level = 2, .passed = true}, {.level = 8, .passed = true}};
  const CapacityFinding finding = FindCapacity(levels);
  CHECK(finding.holds_up_to == 16);
  CHECK(finding.fails_at == std::nullopt);
  CHECK(finding.monotonic);
}

TEST_CASE("FindCapacity when every level fails", "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 4, .passed = false}, {.level = 2, .passed = false}, {.level = 8, .passed = false}};
  const CapacityFinding finding = FindCapacity(levels);
  CHECK(finding.holds_up_to == std::nullopt);
  CHECK(finding.fails_at == 2);
  CHECK(finding.monotonic);
}

TEST_CASE("FindCapacity of no levels finds nothing", "[stats]") {
  const CapacityFinding finding = FindCapacity({});
  CHECK(finding.holds_up_to == std::nullopt);
  CHECK(finding.fails_at == std::nullopt);
  CHECK(finding.monotonic);
}

TEST_CASE("FindCapacity marks a pass above the first failure as not monotonic", "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 2, .passed = true},  {.level = 4, .passed = true},   {.level = 8, .passed = false},
      {.level = 12, .passed = true}, {.level = 16, .passed = false},
  };
  const CapacityFinding finding = FindCapacity(levels);
  // The pass at 12 does not move the finding: it is still "first failure at 8".
  CHECK(finding.holds_up_to == 4);
  CHECK(finding.fails_at == 8);
  CHECK_FALSE(finding.monotonic);
}

TEST_CASE("FindCapacity marks a level that both passed and failed as not monotonic", "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 4, .passed = true}, {.level = 8, .passed = false}, {.level = 8, .passed = true}};
  const CapacityFinding finding = FindCapacity(levels);
  CHECK(finding.holds_up_to == 4);
  CHECK(finding.fails_at == 8);
  CHECK_FALSE(finding.monotonic);
}

TEST_CASE("BisectLevel for concurrency picks an integer strictly between", "[stats]") {
  CHECK(BisectLevel(4, 8, true) == 6);
  CHECK(BisectLevel(4, 6, true) == 5);
  CHECK(BisectLevel(4, 7, true) == 6);  // midpoint 5.5: halves round up, as documented
  CHECK(BisectLevel(1, 2, true) == std::nullopt);
  CHECK(BisectLevel(4, 5, true) == std::nullopt);
  CHECK(BisectLevel(8, 4, true) == std::nullopt);
  CHECK(BisectLevel(4, 4, true) == std::nullopt);
}

TEST_CASE("BisectLevel for rates rounds the midpoint to 3 significant digits of the step",
          "[stats]") {
  CHECK(BisectLevel(4, 6, false) == 5);
  CHECK(BisectLevel(4, 4.5, false) == 4.25);
  CHECK(BisectLevel(4, 5, false) == 4.5);  // not an integer: rates are not rounded to integers
  CHECK(BisectLevel(1, 1.1, false) == 1.05);
  // Step 2/3: digits of 0.001, so the midpoint 0.6666... becomes 0.667.
  CHECK(BisectLevel(1.0 / 3, 1, false) == 0.667);
  // Step 201: digits of 1, so the midpoint 200.5 becomes 201 (halves away from zero).
  CHECK(BisectLevel(100, 301, false) == 201);
  CHECK(BisectLevel(6, 4, false) == std::nullopt);
  CHECK(BisectLevel(4, 4, false) == std::nullopt);
}

TEST_CASE("DescribeCapacity names the last pass and the first failure", "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 2, .passed = true}, {.level = 8, .passed = true}, {.level = 10, .passed = false}};
  CHECK(DescribeCapacity(FindCapacity(levels), levels, "req/s") ==
        "thresholds hold up to 8 req/s and fail at 10 req/s");
  CHECK(DescribeCapacity(FindCapacity(levels), levels, "concurrent") ==
        "thresholds hold up to 8 concurrent and fail at 10 concurrent");
}

TEST_CASE("DescribeCapacity writes levels without trailing zeros", "[stats]") {
  const std::vector<LevelOutcome> levels = {{.level = 0.25, .passed = true},
                                            {.level = 7.5, .passed = false}};
  CHECK(DescribeCapacity(FindCapacity(levels), levels, "req/s") ==
        "thresholds hold up to 0.25 req/s and fail at 7.5 req/s");
}

TEST_CASE("DescribeCapacity when every level passes, every level fails, or none ran", "[stats]") {
  const std::vector<LevelOutcome> passing = {
      {.level = 2, .passed = true}, {.level = 16, .passed = true}, {.level = 8, .passed = true}};
  CHECK(DescribeCapacity(FindCapacity(passing), passing, "req/s") ==
        "thresholds hold at every level tried (up to 16 req/s)");
  const std::vector<LevelOutcome> failing = {{.level = 4, .passed = false},
                                             {.level = 2, .passed = false}};
  CHECK(DescribeCapacity(FindCapacity(failing), failing, "concurrent") ==
        "thresholds fail at every level tried (from 2 concurrent)");
  CHECK(DescribeCapacity(FindCapacity({}), {}, "req/s") == "no levels");
}

TEST_CASE("DescribeCapacity names the highest pass above the first failure", "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 4, .passed = true},  {.level = 8, .passed = true},  {.level = 10, .passed = false},
      {.level = 12, .passed = true}, {.level = 14, .passed = true}, {.level = 16, .passed = false},
  };
  CHECK(DescribeCapacity(FindCapacity(levels), levels, "req/s") ==
        "thresholds hold up to 8 req/s and first fail at 10 req/s, but hold at 14 req/s "
        "(not monotonic)");
  const std::vector<LevelOutcome> lowest_fails = {
      {.level = 2, .passed = false}, {.level = 4, .passed = true}, {.level = 8, .passed = false}};
  CHECK(DescribeCapacity(FindCapacity(lowest_fails), lowest_fails, "req/s") ==
        "thresholds fail at 2 req/s, the lowest level tried, but hold at 4 req/s (not monotonic)");
}

TEST_CASE("DescribeCapacity states the sustained rate and why the first miss missed", "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 8, .passed = true, .sustained_rate = 8.1, .goodput = 7.9},
      {.level = 16, .passed = false, .failed = "not sustained", .sustained_rate = 11.8},
      {.level = 12,
       .passed = true,
       .sustained_rate = 11.84,
       .goodput = 11.5,
       .output_tokens_per_s = 1480},
      {.level = 14, .passed = false, .failed = "not sustained", .sustained_rate = 12.1},
  };
  const CapacityFinding finding = FindCapacity(levels);
  CHECK(finding.sustained_rate == 11.84);
  CHECK(finding.goodput == 11.5);
  CHECK(finding.output_tokens_per_s == 1480);
  CHECK(finding.failed == "not sustained");
  CHECK_FALSE(finding.inconclusive);
  CHECK(DescribeCapacity(finding, levels, "req/s") ==
        "sustained 11.8 req/s; thresholds hold up to 12 req/s and fail at 14 req/s (not "
        "sustained)");
  const std::vector<LevelOutcome> all_fail = {
      {.level = 4, .passed = false, .failed = "ttft p95 <= 1500 ms"}};
  CHECK(DescribeCapacity(FindCapacity(all_fail), all_fail, "req/s") ==
        "thresholds fail at every level tried (from 4 req/s: ttft p95 <= 1500 ms)");
}

TEST_CASE("A first miss that was only too short to tell makes the finding inconclusive",
          "[stats]") {
  const std::vector<LevelOutcome> levels = {
      {.level = 8, .passed = true, .sustained_rate = 8},
      {.level = 12, .passed = false, .inconclusive = true},
      {.level = 16, .passed = false, .failed = "not sustained"},
  };
  const CapacityFinding finding = FindCapacity(levels);
  CHECK(finding.inconclusive);
  CHECK(finding.fails_at == 12);
  CHECK(DescribeCapacity(finding, levels, "req/s") ==
        "inconclusive: sustained 8 req/s; thresholds hold up to 8 req/s and 12 req/s was too "
        "short to tell");
  // The same level failing in another run of it is a failure, not a doubt.
  std::vector<LevelOutcome> retried = levels;
  retried.push_back({.level = 12, .passed = false, .failed = "not sustained"});
  CHECK_FALSE(FindCapacity(retried).inconclusive);
  const std::vector<LevelOutcome> lowest = {{.level = 2, .passed = false, .inconclusive = true}};
  CHECK(DescribeCapacity(FindCapacity(lowest), lowest, "concurrent") ==
        "inconclusive: 2 concurrent, the lowest level tried, was too short to tell");
}

}  // namespace
}  // namespace stagegate::stats
