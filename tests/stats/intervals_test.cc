#include "stats/intervals.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace stagegate::stats {
namespace {

// The expected values come from R 4.2.2 (Debian r-base-core), printed with options(digits=17);
// the R expression is beside each one, so anyone can re-run it with Rscript -e.

Approx Near(double value, double relative) {
  return Approx(value).epsilon(relative);
}

void CheckInterval(const std::optional<Interval>& interval, double low, double high) {
  REQUIRE(interval.has_value());
  CHECK(interval->low == Near(low, 1e-12));
  CHECK(interval->high == Near(high, 1e-12));
}

TEST_CASE("StudentTQuantile matches R's qt", "[intervals]") {
  struct Case {
    double p, df, expected;
  };
  const std::vector<Case> cases = {
      {0.975, 1, 12.706204736174694},           // qt(0.975, 1)
      {0.975, 5, 2.5705818356363137},           // qt(0.975, 5)
      {0.975, 29, 2.0452296421327034},          // qt(0.975, 29)
      {0.95, 10, 1.8124611228116756},           // qt(0.95, 10)
      {0.995, 2.5, 7.1637281389488026},         // qt(0.995, 2.5)
      {0.025, 7, -2.3646242515927844},          // qt(0.025, 7)
      {0.9, 120.25, 1.2886314009537916},        // qt(0.9, 120.25)
      {0.975, 99999, 1.9599877077718442},       // qt(0.975, 99999): the last df before ...
      {0.975, 1e5, 1.9599877075346088},         // qt(0.975, 1e5): ... the large-df expansion
      {0.975, 1e6, 1.9599663568141066},         // qt(0.975, 1e6)
      {0.001, 1e9, -3.0902323143179422},        // qt(0.001, 1e9)
      {0.5000001, 3, 2.7206990446756626e-07},   // qt(0.5000001, 3): near the centre
      {1e-10, 1.5, -2.4226631011343938e+06},    // qt(1e-10, 1.5): far in a heavy tail
      {0.999999, 0.5, 1.0284911563143192e+11},  // qt(0.999999, 0.5)
  };
  for (const Case& c : cases) {
    INFO("p = " << c.p << ", df = " << c.df);
    CHECK(StudentTQuantile(c.p, c.df) == Near(c.expected, 1e-9));
  }
  CHECK(StudentTQuantile(0.5, 4) == 0);
}

TEST_CASE("StudentTQuantile keeps its precision deep in the tail of a tiny df", "[intervals]") {
  // Here R is off: qt(0.999999999, 0.1) gives 1.6044266047469931e+86 (2.8e-7 relative) and scipy
  // 1.10.1 t.ppf(0.999999999, 0.1) gives 1.6044261601767695e+86 (5e-10). The reference solves
  // the tail equation at 40 digits with mpmath 1.3.0 (Debian python3-mpmath):
  //   python3 -c "import mpmath as m; m.mp.dps=40; p=m.mpf(0.999999999); df=m.mpf(0.1);
  //     tail=lambda t: m.betainc(df/2, 0.5, 0, df/(df+t*t), regularized=True)/2;
  //     print(m.nstr(m.exp(m.findroot(lambda lt: m.log(tail(m.exp(lt))) - m.log(1-p), 198)), 17))"
  //   -> 1.6044261594292002e+86
  CHECK(StudentTQuantile(0.999999999, 0.1) == Near(1.6044261594292002e+86, 1e-12));
  // The quantile is beyond double's range: qt(1e-12, 0.01) is -Inf in R too.
  CHECK(StudentTQuantile(1e-12, 0.01) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("StudentTQuantile is NaN outside its domain", "[intervals]") {
  CHECK(std::isnan(StudentTQuantile(0, 5)));
  CHECK(std::isnan(StudentTQuantile(1, 5)));
  CHECK(std::isnan(StudentTQuantile(0.975, 0)));
  CHECK(std::isnan(StudentTQuantile(0.975, -3)));
  CHECK(std::isnan(StudentTQuantile(std::nan(""), 5)));
}

TEST_CASE("NormalQuantile matches R's qnorm", "[intervals]") {
  struct Case {
    double p, expected;
  };
  const std::vector<Case> cases = {
      {0.975, 1.95996398454005361},     // qnorm(0.975)
      {0.02425, -1.97296105131188448},  // qnorm(0.02425): where Acklam's regions meet
      {0.3, -0.52440051270804067},      // qnorm(0.3)
      {0.6, 0.25334710313579978},       // qnorm(0.6)
      {0.999, 3.09023230616781319},     // qnorm(0.999)
      {1e-10, -6.36134090240405570},    // qnorm(1e-10)
      {1e-300, -37.04709629936120052},  // qnorm(1e-300)
  };
  for (const Case& c : cases) {
    INFO("p = " << c.p);
    CHECK(NormalQuantile(c.p) == Near(c.expected, 1e-12));
  }
  CHECK(NormalQuantile(0.5) == 0);  // qnorm(0.5)
  CHECK(NormalQuantile(0) == -std::numeric_limits<double>::infinity());
  CHECK(NormalQuantile(1) == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(NormalQuantile(std::nan(""))));
}

TEST_CASE("MeanConfidenceInterval matches R's t.test", "[intervals]") {
  const std::vector<double> values = {12.5, 14.25, 9.75, 11, 15.5, 13.25, 10.5};
  // t.test(c(12.5, 14.25, 9.75, 11, 15.5, 13.25, 10.5))$conf.int
  //   -> 10.454459627636490 14.331254658077794
  CheckInterval(MeanConfidenceInterval(values), 10.454459627636490, 14.331254658077794);
  // t.test(c(2.5, 3.5), conf.level=0.9)$conf.int -> -0.1568757573375188 6.1568757573375184
  const std::vector<double> two = {2.5, 3.5};
  CheckInterval(MeanConfidenceInterval(two, 0.9), -0.1568757573375188, 6.1568757573375184);
}

TEST_CASE("MeanConfidenceInterval of equal values is that value", "[intervals]") {
  const std::vector<double> values = {0.1, 0.1, 0.1};
  const auto interval = MeanConfidenceInterval(values);
  REQUIRE(interval.has_value());
  CHECK(interval->low == 0.1);
  CHECK(interval->high == 0.1);
}

TEST_CASE("MeanConfidenceInterval is undefined on unusable input", "[intervals]") {
  const std::vector<double> one = {3};
  CHECK_FALSE(MeanConfidenceInterval(one).has_value());
  CHECK_FALSE(MeanConfidenceInterval({}).has_value());
  const std::vector<double> two = {1, 2};
  CHECK_FALSE(MeanConfidenceInterval(two, 0).has_value());
  CHECK_FALSE(MeanConfidenceInterval(two, 1).has_value());
  const std::vector<double> with_nan = {1, std::nan(""), 2};
  CHECK_FALSE(MeanConfidenceInterval(with_nan).has_value());
}

TEST_CASE("WilsonInterval matches R's prop.test without continuity correction", "[intervals]") {
  // prop.test(7, 20, correct=FALSE)$conf.int -> 0.18119182410108206 0.56714572331476365
  CheckInterval(WilsonInterval(7, 20), 0.18119182410108206, 0.56714572331476365);
  // prop.test(481, 1000, correct=FALSE, conf.level=0.99)$conf.int
  //   -> 0.44056136276141034 0.52168910150491921
  CheckInterval(WilsonInterval(481, 1000, 0.99), 0.44056136276141034, 0.52168910150491921);
}

TEST_CASE("WilsonInterval reaches exactly 0 and 1 at the extremes", "[intervals]") {
  // prop.test(0, 10, correct=FALSE)$conf.int -> 0 0.27753279986288915
  const auto none = WilsonInterval(0, 10);
  REQUIRE(none.has_value());
  CHECK(none->low == 0);
  CHECK(none->high == Near(0.27753279986288915, 1e-12));
  // prop.test(10, 10, correct=FALSE, conf.level=0.9)$conf.int -> 0.78705802991659313 1
  const auto all = WilsonInterval(10, 10, 0.9);
  REQUIRE(all.has_value());
  CHECK(all->low == Near(0.78705802991659313, 1e-12));
  CHECK(all->high == 1);
}

TEST_CASE("WilsonInterval is undefined on unusable input", "[intervals]") {
  CHECK_FALSE(WilsonInterval(0, 0).has_value());
  CHECK_FALSE(WilsonInterval(1, -1).has_value());
  CHECK_FALSE(WilsonInterval(-1, 10).has_value());
  CHECK_FALSE(WilsonInterval(11, 10).has_value());
  CHECK_FALSE(WilsonInterval(5, 10, 1.5).has_value());
}

}  // namespace
}  // namespace stagegate::stats
