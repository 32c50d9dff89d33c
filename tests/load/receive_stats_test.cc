#include "load/receive_stats.h"

#include <catch2/catch.hpp>

namespace stagegate::load {
namespace {

TEST_CASE("read delay quantiles are within a bucket (19%) above the truth, never below", "[load]") {
  ReceiveStats stats;
  CHECK_FALSE(stats.ReadDelayQuantileUs(0.99));
  for (int i = 0; i < 98; ++i)
    stats.AddReadDelay(10'000);   // 10 µs
  stats.AddReadDelay(5'000'000);  // 5 ms
  stats.AddReadDelay(7'000'000);
  CHECK(stats.kernel_stamped == 100);
  CHECK(stats.read_delay_max_ns == 7'000'000);
  const double p50 = *stats.ReadDelayQuantileUs(0.50);
  CHECK(p50 >= 10);
  CHECK(p50 <= 10 * 1.19);
  CHECK(*stats.ReadDelayQuantileUs(0.98) == p50);
  const double p99 = *stats.ReadDelayQuantileUs(0.99);
  CHECK(p99 >= 5000);
  CHECK(p99 <= 5000 * 1.19);
  CHECK(*stats.ReadDelayQuantileUs(1.0) == 7000);  // the top bucket reads as the exact maximum

  // Sub-microsecond delays share the first bucket.
  ReceiveStats fast;
  fast.AddReadDelay(300);
  CHECK(*fast.ReadDelayQuantileUs(0.5) == Approx(0.3));
}

TEST_CASE("merging adds counts and keeps the larger maximum", "[load]") {
  ReceiveStats a, b;
  a.AddReadDelay(2'000);
  a.client_stamped = 3;
  b.AddReadDelay(40'000);
  b.AddReadDelay(40'000);
  b.client_stamped = 1;
  a.Merge(b);
  CHECK(a.kernel_stamped == 3);
  CHECK(a.client_stamped == 4);
  CHECK(a.read_delay_max_ns == 40'000);
  CHECK(*a.ReadDelayQuantileUs(0.3) <= 2 * 1.19);
  CHECK(*a.ReadDelayQuantileUs(0.5) >= 40);
}

}  // namespace
}  // namespace stagegate::load
