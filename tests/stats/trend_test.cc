#include "stats/trend.h"

#include <catch2/catch.hpp>

#include <limits>
#include <vector>

namespace stagegate::stats {
namespace {

// Expected values from scipy.stats.theilslopes(y, x, alpha) (scipy 1.10).

TEST_CASE("TheilSen gives scipy's slope, intercept and interval", "[stats]") {
  const std::vector<double> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<double> y = {1.0, 1.2, 0.9, 1.5, 1.7, 1.6, 2.1, 2.0, 2.6, 2.4};
  const std::optional<Trend> at95 = TheilSen(x, y, 0.95);
  REQUIRE(at95);
  CHECK(at95->slope == Approx(0.18333333333333335));
  CHECK(at95->intercept == Approx(0.8249999999999998));
  CHECK(at95->interval.low == Approx(0.13333333333333333));
  CHECK(at95->interval.high == Approx(0.22000000000000003));
  CHECK(at95->points == 10);
  const std::optional<Trend> at90 = TheilSen(x, y, 0.90);
  REQUIRE(at90);
  CHECK(at90->interval.low == Approx(0.13999999999999999));
  CHECK(at90->interval.high == Approx(0.21428571428571427));
}

TEST_CASE("TheilSen corrects the interval for ties, as scipy does", "[stats]") {
  // Ties in y (a flat series) ...
  const std::vector<double> x = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5};
  const std::vector<double> y = {50, 50, 52, 50, 49, 50};
  const std::optional<Trend> flat = TheilSen(x, y, 0.90);
  REQUIRE(flat);
  CHECK(flat->slope == Approx(0.0).margin(1e-12));
  CHECK(flat->intercept == Approx(50.0));
  CHECK(flat->interval.low == Approx(-0.6666666666666666));
  CHECK(flat->interval.high == Approx(0.0).margin(1e-12));
  // ... and in x (pairs with equal x give no slope).
  const std::vector<double> x2 = {1, 1, 2, 3, 3, 4, 5};
  const std::vector<double> y2 = {2, 3, 3, 4, 4, 5, 7};
  const std::optional<Trend> tied = TheilSen(x2, y2, 0.95);
  REQUIRE(tied);
  CHECK(tied->slope == Approx(1.0));
  CHECK(tied->intercept == Approx(1.0));
  CHECK(tied->interval.low == Approx(0.5));
  CHECK(tied->interval.high == Approx(1.5));
}

TEST_CASE("TheilSen ignores a single outlier that least squares would follow", "[stats]") {
  std::vector<double> x, y;
  for (int i = 0; i < 20; ++i) {
    x.push_back(i);
    y.push_back(100 + 2.0 * i);
  }
  y[19] = 10'000;  // one request stuck behind a slow tool
  const std::optional<Trend> trend = TheilSen(x, y);
  REQUIRE(trend);
  CHECK(trend->slope == Approx(2.0));
}

TEST_CASE("TheilSen refuses what it cannot estimate", "[stats]") {
  const std::vector<double> two = {1, 2};
  CHECK_FALSE(TheilSen(two, two));
  const std::vector<double> same_x = {3, 3, 3, 3};
  const std::vector<double> any = {1, 2, 3, 4};
  CHECK_FALSE(TheilSen(same_x, any));
  const std::vector<double> three = {1, 2, 3};
  CHECK_FALSE(TheilSen(three, any));  // mismatched lengths
  const std::vector<double> nan = {1, std::numeric_limits<double>::quiet_NaN(), 3};
  CHECK_FALSE(TheilSen(three, nan));
  CHECK_FALSE(TheilSen(three, three, 1.0));
  CHECK_FALSE(TheilSen(three, three, 0.0));
}

}  // namespace
}  // namespace stagegate::stats
