// BootstrapWeightedKappa: reproducible for a seed, the interval around the estimate, and no
// estimate where kappa cannot be computed.

#include "stats/kappa_interval.h"

#include <catch2/catch.hpp>
#include <vector>

#include "stats/agreement.h"

namespace stagegate::stats {
namespace {

const std::vector<int64_t> kScale = {1, 2, 3, 4, 5};

TEST_CASE("the kappa bootstrap is reproducible and resamples answers, not levels",
          "[stats][judge_calibration]") {
  const std::vector<int64_t> a = {1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 2, 3};
  const std::vector<int64_t> b = {1, 2, 3, 4, 5, 2, 2, 4, 4, 5, 1, 3};
  const auto first = BootstrapWeightedKappa(a, b, kScale, 2000, 7);
  const auto again = BootstrapWeightedKappa(a, b, kScale, 2000, 7);
  REQUIRE(first);
  REQUIRE(first->ci);
  CHECK(first->kappa == WeightedKappaQuadratic(a, b, kScale));
  CHECK(first->ci->low == again->ci->low);
  CHECK(first->ci->high == again->ci->high);
  CHECK(first->ci->low < first->kappa);
  CHECK(first->ci->high <= 1);
  CHECK(first->resamples == 2000);
  // Full agreement: a resample keeps each item's two ratings together, so every defined one has
  // kappa 1 (drawing the two raters' levels apart would give less).
  const std::vector<int64_t> same = {1, 3, 5, 2, 4, 1, 3, 5};
  const auto agree = BootstrapWeightedKappa(same, same, kScale, 500, 1);
  REQUIRE(agree->ci);
  CHECK(agree->ci->low == 1);
  // Kappa undefined on all the items, too few rounds, mismatched sizes: no estimate.
  const std::vector<int64_t> ones = {3, 3, 3};
  CHECK_FALSE(BootstrapWeightedKappa(ones, ones, kScale, 500, 1));
  CHECK_FALSE(BootstrapWeightedKappa(a, b, kScale, 99, 1));
  CHECK_FALSE(BootstrapWeightedKappa(a, same, kScale, 500, 1));
}

}  // namespace
}  // namespace stagegate::stats
