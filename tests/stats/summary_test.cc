#include "stats/summary.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace stagegate::stats {
namespace {

// The expected numbers in this file come from numpy 1.24 (np.percentile's default "linear" method,
// np.mean, np.std with its default ddof=0), printed with repr so no digit is lost. For example:
//   python3 -c "import numpy as np; a = np.array([40, 15, 50, 20, 35.]);
//               print(a.mean(), a.std(), [np.percentile(a, p) for p in (1, 5, 10, 25, 50)])"
struct Expected {
  int64_t count;
  double min, max, mean, std;
  std::array<double, kPercentiles.size()> percentiles;  // matching kPercentiles
};

// Relative, with no absolute margin: a margin would swamp the error of a small value. Expected
// zeros are compared with ==.
Approx Near(double value) {
  return Approx(value).epsilon(1e-12);
}

void CheckMatches(const Summary& summary, const Expected& expected) {
  CHECK(summary.count == expected.count);
  CHECK(summary.min == expected.min);
  CHECK(summary.max == expected.max);
  CHECK(summary.mean == Near(expected.mean));
  CHECK(summary.std == Near(expected.std));
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    INFO("p" << kPercentiles[i]);
    CHECK(summary.percentiles[i] == Near(expected.percentiles[i]));
  }
}

TEST_CASE("PercentileOfSorted interpolates linearly between neighbouring ranks", "[stats]") {
  const std::vector<double> two = {1, 3};
  CHECK(PercentileOfSorted(two, 0) == 1);
  CHECK(PercentileOfSorted(two, 100) == 3);
  CHECK(PercentileOfSorted(two, 50) == 2);
  CHECK(PercentileOfSorted(two, 12.5) == Near(1.25));  // rank 0.125: 1 + 0.125 * (3 - 1)
  CHECK(PercentileOfSorted(two, 37.5) == Near(1.75));  // rank 0.375: 1 + 0.375 * (3 - 1)
  CHECK(PercentileOfSorted(two, 99) == Near(2.98));    // rank 0.99:  1 + 0.99 * (3 - 1)
}

TEST_CASE("PercentileOfSorted takes p0 as the minimum, p100 as the maximum", "[stats]") {
  const std::vector<double> values = {-7.5, -2, 0, 0, 3.25, 11, 400};
  CHECK(PercentileOfSorted(values, 0) == -7.5);
  CHECK(PercentileOfSorted(values, 100) == 400);
  const std::vector<double> one = {42.5};
  CHECK(PercentileOfSorted(one, 0) == 42.5);
  CHECK(PercentileOfSorted(one, 37) == 42.5);
  CHECK(PercentileOfSorted(one, 100) == 42.5);
}

TEST_CASE("PercentileOfSorted returns the element itself at a whole rank", "[stats]") {
  // n = 5, so rank = p / 100 * 4: p25 is rank 1, p75 rank 3.
  const std::vector<double> values = {10, 20, 30, 40, 50};
  CHECK(PercentileOfSorted(values, 25) == 20);
  CHECK(PercentileOfSorted(values, 50) == 30);
  CHECK(PercentileOfSorted(values, 75) == 40);
  // Between whole ranks it interpolates: p60 is rank 2.4, 30 + 0.4 * 10.
  CHECK(PercentileOfSorted(values, 60) == Near(34));
}

TEST_CASE("Summarize of one value puts it in every field, with no spread", "[stats]") {
  CheckMatches(Summarize({42.5}),
               {.count = 1,
                .min = 42.5,
                .max = 42.5,
                .mean = 42.5,
                .std = 0,
                .percentiles = {42.5, 42.5, 42.5, 42.5, 42.5, 42.5, 42.5, 42.5, 42.5}});
}

TEST_CASE("Summarize of two values matches numpy", "[stats]") {
  CheckMatches(Summarize({3, 1}), {.count = 2,
                                   .min = 1,
                                   .max = 3,
                                   .mean = 2,
                                   .std = 1,
                                   .percentiles = {1.02, 1.1, 1.2, 1.5, 2, 2.5, 2.8, 2.9, 2.98}});
}

TEST_CASE("Summarize of an odd count of unsorted values matches numpy", "[stats]") {
  CheckMatches(Summarize({40, 15, 50, 20, 35}),
               {.count = 5,
                .min = 15,
                .max = 50,
                .mean = 32,
                .std = 12.884098726725126,
                .percentiles = {15.2, 16, 17, 20, 35, 40, 46, 48, 49.6}});
}

TEST_CASE("Summarize of an even count with duplicates and negatives matches numpy", "[stats]") {
  // Sorted: -3 -1.5 2 7 7 7. p50 is rank 2.5, halfway between 2 and 7; from p75 (rank 3.75) up,
  // both neighbours are 7.
  CheckMatches(Summarize({-3, 7, 7, -1.5, 2, 7}),
               {.count = 6,
                .min = -3,
                .max = 7,
                .mean = 3.0833333333333335,
                .std = 4.187448175467038,
                .percentiles = {-2.925, -2.625, -2.25, -0.625, 4.5, 7, 7, 7, 7}});
}

TEST_CASE("Summarize of latency-like fractions matches numpy", "[stats]") {
  CheckMatches(Summarize({0.12, 0.5, 0.33, 1.7, 0.05, 0.8, 2.4, 0.33, 0.9, 0.41}),
               {.count = 10,
                .min = 0.05,
                .max = 2.4,
                .mean = 0.7540000000000001,
                .std = 0.7118735842830524,
                .percentiles = {0.0563, 0.0815, 0.113, 0.33, 0.45499999999999996, 0.875,
                                1.7699999999999998, 2.084999999999999, 2.337}});
}

TEST_CASE("Summarize reports the population standard deviation, not the sample one", "[stats]") {
  // {15, 20, 35, 40, 50}: mean 32, squared deviations 289 144 9 64 324, sum 830.
  // ddof=0: sqrt(830 / 5) = sqrt(166) = 12.884...; ddof=1: sqrt(830 / 4) = sqrt(207.5) = 14.404...
  const Summary summary = Summarize({15, 20, 35, 40, 50});
  CHECK(summary.std == Near(std::sqrt(166.0)));
  CHECK(summary.std != Near(std::sqrt(207.5)));
}

TEST_CASE("Summarize keeps the spread of values far from zero", "[stats]") {
  // Like epoch timestamps: a naive sum of squares (E[x^2] - E[x]^2) loses all of the spread here,
  // since x^2 is about 1e18 and a double then resolves only steps of 128.
  // Deviations from 1e9 + 10 are -6 -3 3 6: variance (36 + 9 + 9 + 36) / 4 = 22.5.
  const Summary summary = Summarize({1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16});
  CHECK(summary.mean == 1e9 + 10);
  CHECK(summary.std == Near(std::sqrt(22.5)));  // numpy: 4.743416490252569
}

TEST_CASE("Summarize of constant values has exactly that mean and no spread", "[stats]") {
  // 0.1 is not exact in binary: 0.1 + 0.1 + 0.1 is 0.30000000000000004, and divided by 3 that is
  // 0.10000000000000002, above the maximum (numpy's mean says the same).
  const Summary summary = Summarize(std::vector<double>(3, 0.1));
  CHECK(summary.mean == 0.1);
  CHECK(summary.std == 0);
  CHECK(summary.min == 0.1);
  CHECK(summary.max == 0.1);
}

TEST_CASE("Summarize keeps the mean of a million inexact values to the last digits", "[stats]") {
  // Half a million 0.1 then half a million 0.2 (already sorted). A plain running sum drifts to a
  // mean of 0.14999999999947491 (numpy's pairwise sum: 0.1499999999999997); the exact mean of
  // these doubles rounds to 0.15. Deviations are all +-0.05, so the std is 0.05.
  std::vector<double> values(1'000'000, 0.1);
  std::fill(values.begin() + 500'000, values.end(), 0.2);
  const Summary summary = Summarize(std::move(values));
  CHECK(summary.mean == Near(0.15));
  CHECK(summary.std == Near(0.05));
}

TEST_CASE("Summarize of no values is count 0 and all zero, and its JSON is just the count",
          "[stats]") {
  const Summary summary = Summarize({});
  CHECK(summary.count == 0);
  CHECK(summary.min == 0);
  CHECK(summary.max == 0);
  CHECK(summary.mean == 0);
  CHECK(summary.std == 0);
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    INFO("p" << kPercentiles[i]);
    CHECK(summary.percentiles[i] == 0);
    CHECK(summary.Percentile(kPercentiles[i]) == 0);
  }
  CHECK(summary.ToJson() == nlohmann::json{{"count", 0}});
  CHECK(summary.ToJson().dump() == R"({"count":0})");
}

TEST_CASE("Summarize of 0..100000 in shuffled order has exactly known percentiles", "[stats]") {
  // n = 100001, so rank = p / 100 * 100000 is a whole number (p * 1000) and the percentile is the
  // value at that rank, exactly. Mean 50000; population variance of 0..N is ((N + 1)^2 - 1) / 12.
  std::vector<double> values(100001);
  std::iota(values.begin(), values.end(), 0.0);
  std::shuffle(values.begin(), values.end(), std::mt19937(20240611));
  const Summary summary = Summarize(std::move(values));
  CHECK(summary.count == 100001);
  CHECK(summary.min == 0);
  CHECK(summary.max == 100000);
  CHECK(summary.mean == 50000);
  CHECK(summary.std ==
        Near(std::sqrt((100001.0 * 100001.0 - 1) / 12)));  // numpy: 28867.80213317252
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    INFO("p" << kPercentiles[i]);
    CHECK(summary.percentiles[i] == kPercentiles[i] * 1000);
  }
}

TEST_CASE("Summarize of 1..100000 matches numpy's interpolated percentiles", "[stats]") {
  // n = 100000: rank = p / 100 * 99999 and the value is rank + 1, e.g. p1 = 999.99 + 1.
  std::vector<double> values(100000);
  std::iota(values.begin(), values.end(), 1.0);
  std::reverse(values.begin(), values.end());
  CheckMatches(Summarize(std::move(values)),
               {.count = 100000,
                .min = 1,
                .max = 100000,
                .mean = 50000.5,
                .std = 28867.513458037913,
                .percentiles = {1000.99, 5000.95, 10000.9, 25000.75, 50000.5, 75000.25, 90000.1,
                                95000.05, 99000.01}});
}

TEST_CASE("Summary::Percentile returns the entry matching each of kPercentiles", "[stats]") {
  const Summary summary = Summarize({40, 15, 50, 20, 35});
  CHECK(summary.Percentile(1) == Near(15.2));
  CHECK(summary.Percentile(25) == 20);
  CHECK(summary.Percentile(50) == 35);
  CHECK(summary.Percentile(99) == Near(49.6));
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    INFO("p" << kPercentiles[i]);
    CHECK(summary.Percentile(kPercentiles[i]) == summary.percentiles[i]);
  }
}

TEST_CASE("Summary::ToJson names count, min, max, mean, std and p1..p99", "[stats]") {
  const Summary summary = Summarize({40, 15, 50, 20, 35});
  const nlohmann::json json = summary.ToJson();

  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items())
    keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"count", "max", "mean", "min", "p1", "p10", "p25", "p5",
                                         "p50", "p75", "p90", "p95", "p99", "std"});

  CHECK(json.at("count").is_number_integer());
  CHECK(json.at("count") == 5);
  CHECK(json.at("min") == 15.0);
  CHECK(json.at("max") == 50.0);
  CHECK(json.at("mean").get<double>() == Near(32));
  CHECK(json.at("std").get<double>() == Near(12.884098726725126));
  CHECK(json.at("p1").get<double>() == Near(15.2));
  CHECK(json.at("p5").get<double>() == Near(16));
  CHECK(json.at("p10").get<double>() == Near(17));
  CHECK(json.at("p25").get<double>() == Near(20));
  CHECK(json.at("p50").get<double>() == Near(35));
  CHECK(json.at("p75").get<double>() == Near(40));
  CHECK(json.at("p90").get<double>() == Near(46));
  CHECK(json.at("p95").get<double>() == Near(48));
  CHECK(json.at("p99").get<double>() == Near(49.6));
}

}  // namespace
}  // namespace stagegate::stats
