#include "stats/recovery.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "stats/summary.h"

namespace stagegate::stats {
namespace {

Approx Near(double value) {
  return Approx(value).epsilon(1e-12);
}

RecoverySample Ok(double end_s, std::optional<double> ttft_ms, std::optional<double> e2e_ms) {
  return {.end_s = end_s, .ttft_ms = ttft_ms, .e2e_ms = e2e_ms, .ok = true};
}

RecoverySample Failed(double end_s) {
  return {.end_s = end_s, .ttft_ms = std::nullopt, .e2e_ms = std::nullopt, .ok = false};
}

// Requests every `step_s` seconds from `from_s` to `to_s`, all ok with the same latencies.
std::vector<RecoverySample> Steady(double from_s, double to_s, double step_s, double ttft_ms,
                                   double e2e_ms) {
  std::vector<RecoverySample> samples;
  for (double end = from_s; end <= to_s; end += step_s) {
    samples.push_back(Ok(end, ttft_ms, e2e_ms));
  }
  return samples;
}

// Times and latencies below are exact binary fractions, so the window edges (t - 2) compare
// exactly. Window 2 s: the window at t holds the requests that ended in (t - 2, t].
std::vector<RecoverySample> Overloaded() {
  return {
      Ok(2.75, 450, 2600), Ok(0.25, 900, 4000), Ok(1.0, 400, 2000),  Ok(0.5, 800, 3500),
      Ok(3.0, 200, 1500),  Ok(1.5, 300, 1800),  Ok(2.25, 350, 2200),
  };
}

TEST_CASE("FindRecovery finds the first window within every threshold", "[stats]") {
  // t = 0.25, 0.5: fewer than 3 requests.
  // t = 1.0: TTFT 400 800 900; p95 rank 0.95 * 2 = 1.9: 800 + 0.9 * 100 = 890 > 500.
  // t = 1.5: TTFT 300 400 800 900; rank 0.95 * 3 = 2.85: 800 + 0.85 * 100 = 885 > 500.
  // t = 2.25: the request that ended at 0.25 = t - 2 has left. TTFT 300 350 400 800:
  //           400 + 0.85 * 400 = 740 > 500.
  // t = 2.75: TTFT 300 350 400 450: 400 + 0.85 * 50 = 442.5 <= 500;
  //           e2e 1800 2000 2200 2600: 2200 + 0.85 * 400 = 2540 <= 3000. Recovered.
  const RecoveryFinding finding =
      FindRecovery(Overloaded(), {.window_s = 2, .max_ttft_p95_ms = 500, .max_e2e_p95_ms = 3000});
  CHECK(finding.recovered_after_s == 2.75);
  CHECK(finding.windows_checked == 6);
  REQUIRE(finding.ttft_p95_ms);
  REQUIRE(finding.e2e_p95_ms);
  CHECK(*finding.ttft_p95_ms == Near(442.5));
  CHECK(*finding.e2e_p95_ms == Near(2540));
}

TEST_CASE("FindRecovery reports the last window's p95s when it never recovers", "[stats]") {
  // As above, but e2e must be within 2500: t = 2.75 has 2540. t = 3.0, without the request
  // that ended at 1.0: TTFT 200 300 350 450: 350 + 0.85 * 100 = 435;
  // e2e 1500 1800 2200 2600: 2200 + 0.85 * 400 = 2540 > 2500 still.
  const RecoveryFinding finding =
      FindRecovery(Overloaded(), {.window_s = 2, .max_ttft_p95_ms = 500, .max_e2e_p95_ms = 2500});
  CHECK(finding.recovered_after_s == std::nullopt);
  CHECK(finding.windows_checked == 7);
  REQUIRE(finding.ttft_p95_ms);
  REQUIRE(finding.e2e_p95_ms);
  CHECK(*finding.ttft_p95_ms == Near(435));
  CHECK(*finding.e2e_p95_ms == Near(2540));
}

TEST_CASE("FindRecovery waits until a failed request has left the window", "[stats]") {
  std::vector<RecoverySample> samples = Steady(0.5, 5, 0.5, 100, 1000);
  const RecoveryCriteria criteria = {.window_s = 2, .max_ttft_p95_ms = 500};
  // Without the failure, the first three requests (0.5, 1.0, 1.5) already show recovery.
  CHECK(FindRecovery(samples, criteria).recovered_after_s == 1.5);
  // The request at 1.0 failed: every window up to t = 3.0 = 1.0 + 2 holds it.
  samples[1] = Failed(1.0);
  const RecoveryFinding finding = FindRecovery(samples, criteria);
  CHECK(finding.recovered_after_s == 3.0);
  CHECK(finding.windows_checked == 6);
}

TEST_CASE("FindRecovery needs min_requests in one window", "[stats]") {
  // One request every 1.5 s: a 2 s window never holds more than two.
  const std::vector<RecoverySample> samples = Steady(0.5, 9.5, 1.5, 100, 1000);
  const RecoveryFinding sparse =
      FindRecovery(samples, {.window_s = 2, .max_ttft_p95_ms = 500, .min_requests = 3});
  CHECK(sparse.recovered_after_s == std::nullopt);
  CHECK(sparse.windows_checked == 7);
  const RecoveryFinding enough =
      FindRecovery(samples, {.window_s = 2, .max_ttft_p95_ms = 500, .min_requests = 2});
  CHECK(enough.recovered_after_s == 2.0);
  CHECK(enough.windows_checked == 2);
}

TEST_CASE("FindRecovery ignores requests that ended before the overload did", "[stats]") {
  // Counted, the failure at -0.5 would be inside every window here, and the fast request at
  // -0.25 would add a window of its own.
  const std::vector<RecoverySample> samples = {Failed(-0.5), Ok(-0.25, 100, 1000),
                                               Ok(0.5, 100, 1000), Ok(1.0, 100, 1000),
                                               Ok(1.25, 100, 1000)};
  const RecoveryFinding finding = FindRecovery(samples, {.window_s = 2, .max_ttft_p95_ms = 500});
  CHECK(finding.recovered_after_s == 1.25);
  CHECK(finding.windows_checked == 3);
}

TEST_CASE("FindRecovery without latency maxima checks only outcomes and counts", "[stats]") {
  // Slow, and without a single TTFT, but every request ok.
  std::vector<RecoverySample> no_ttft = Steady(0.5, 3, 0.5, 99999, 90000);
  for (RecoverySample& sample : no_ttft) {
    sample.ttft_ms.reset();
  }
  const RecoveryFinding finding = FindRecovery(no_ttft, {.window_s = 2});
  CHECK(finding.recovered_after_s == 1.5);
  CHECK(finding.ttft_p95_ms == std::nullopt);
  CHECK(finding.e2e_p95_ms == 90000);
  // A maximum on a metric the windows have no values for is never met.
  const RecoveryFinding checked = FindRecovery(no_ttft, {.window_s = 2, .max_ttft_p95_ms = 1e9});
  CHECK(checked.recovered_after_s == std::nullopt);
  CHECK(checked.windows_checked == 6);
}

TEST_CASE("FindRecovery checks requests that ended together as one window", "[stats]") {
  const std::vector<RecoverySample> samples = {Ok(1.0, 100, 1000), Ok(1.0, 100, 1000),
                                               Ok(1.0, 100, 1000), Ok(2.0, 100, 1000)};
  const RecoveryFinding finding = FindRecovery(samples, {.window_s = 2, .max_ttft_p95_ms = 500});
  CHECK(finding.recovered_after_s == 1.0);
  CHECK(finding.windows_checked == 1);
}

TEST_CASE("FindRecovery of no requests after the overload checks no window", "[stats]") {
  const RecoveryFinding finding = FindRecovery({Ok(-1, 100, 1000)}, {.window_s = 2});
  CHECK(finding.recovered_after_s == std::nullopt);
  CHECK(finding.windows_checked == 0);
  CHECK(finding.ttft_p95_ms == std::nullopt);
  CHECK(finding.e2e_p95_ms == std::nullopt);
}

TEST_CASE("FindRecovery of 100k requests at 1,024 req/s with a 5 s window", "[stats]") {
  // Request i ends at i / 1024 s, so a 5 s window holds 5,120 requests. TTFT is 1000 ms up to
  // request 61,440 (60 s), 100 ms after. With n = 5120, p95's rank is 0.95 * 5119 = 4863.05,
  // so the window meets 500 ms once rank 4863 is a fast request, even while rank 4864 is slow
  // (100 + 0.05 * 900 = 145): at least 4,864 fast requests, at most 256 slow ones. The window
  // at request j holds requests j - 5119 .. j, 61,440 - (j - 5119) of them slow: j = 66,303.
  constexpr int kSlow = 61440, kRecovered = 66303;
  std::vector<RecoverySample> samples;
  for (int i = 0; i < 100000; ++i) {
    samples.push_back(Ok(i / 1024.0, i < kSlow ? 1000 : 100, 2000));
  }
  const RecoveryFinding finding = FindRecovery(samples, {.window_s = 5, .max_ttft_p95_ms = 500});
  CHECK(finding.recovered_after_s == kRecovered / 1024.0);
  CHECK(finding.windows_checked == kRecovered + 1);
  REQUIRE(finding.ttft_p95_ms);
  CHECK(*finding.ttft_p95_ms == Approx(145).epsilon(1e-9));
}

// FindRecovery's contract, written the slow and obvious way: every window copied and sorted.
RecoveryFinding ReferenceRecovery(std::vector<RecoverySample> samples,
                                  const RecoveryCriteria& criteria) {
  std::erase_if(samples, [](const RecoverySample& sample) { return sample.end_s < 0; });
  std::sort(samples.begin(), samples.end(),
            [](const RecoverySample& a, const RecoverySample& b) { return a.end_s < b.end_s; });
  const auto p95 = [](const std::vector<RecoverySample>& window, auto field) {
    std::vector<double> values;
    for (const RecoverySample& sample : window) {
      if (sample.*field) values.push_back(*(sample.*field));
    }
    std::sort(values.begin(), values.end());
    return values.empty() ? std::nullopt : std::optional(PercentileOfSorted(values, 95));
  };
  RecoveryFinding finding;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double t = samples[i].end_s;
    if (i + 1 < samples.size() && samples[i + 1].end_s == t) continue;
    std::vector<RecoverySample> window;
    for (const RecoverySample& sample : samples) {
      if (sample.end_s > t - criteria.window_s && sample.end_s <= t) window.push_back(sample);
    }
    ++finding.windows_checked;
    finding.ttft_p95_ms = p95(window, &RecoverySample::ttft_ms);
    finding.e2e_p95_ms = p95(window, &RecoverySample::e2e_ms);
    const auto within = [](std::optional<double> value, std::optional<double> max) {
      return !max || (value && *value <= *max);
    };
    if (static_cast<int64_t>(window.size()) >= criteria.min_requests &&
        std::all_of(window.begin(), window.end(), [](const auto& sample) { return sample.ok; }) &&
        within(finding.ttft_p95_ms, criteria.max_ttft_p95_ms) &&
        within(finding.e2e_p95_ms, criteria.max_e2e_p95_ms)) {
      finding.recovered_after_s = t;
      break;
    }
  }
  return finding;
}

TEST_CASE("FindRecovery agrees with checking every window the slow way", "[stats]") {
  // Whole-millisecond latencies and thresholds, so thresholds often fall exactly between the
  // two values p95 interpolates, and times on a 1/64 s grid, so requests end together.
  std::mt19937 random(20240611);
  const auto uniform = [&random](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  int recovered = 0;
  for (int trial = 0; trial < 300; ++trial) {
    INFO("trial " << trial);
    const int slow_until = uniform(0, 40);  // in 1/2 s: slower and failing more before this
    std::vector<RecoverySample> samples;
    for (int i = 0, n = uniform(0, 400); i < n; ++i) {
      const double end_s = uniform(-64, 25 * 64) / 64.0;
      const bool slow = end_s * 2 < slow_until;
      RecoverySample sample = {.end_s = end_s, .ok = uniform(0, 99) >= (slow ? 10 : 1)};
      if (uniform(0, 9) > 0) sample.ttft_ms = uniform(10, slow ? 120 : 60);
      if (uniform(0, 9) > 0) sample.e2e_ms = uniform(100, slow ? 900 : 500);
      samples.push_back(sample);
    }
    RecoveryCriteria criteria = {.window_s = uniform(1, 16) / 4.0, .min_requests = uniform(1, 8)};
    if (uniform(0, 3) > 0) criteria.max_ttft_p95_ms = uniform(40, 70);
    if (uniform(0, 3) > 0) criteria.max_e2e_p95_ms = uniform(400, 600);

    const RecoveryFinding expected = ReferenceRecovery(samples, criteria);
    const RecoveryFinding finding = FindRecovery(samples, criteria);
    CHECK(finding.recovered_after_s == expected.recovered_after_s);
    CHECK(finding.windows_checked == expected.windows_checked);
    CHECK(finding.ttft_p95_ms == expected.ttft_p95_ms);
    CHECK(finding.e2e_p95_ms == expected.e2e_p95_ms);
    recovered += expected.recovered_after_s ? 1 : 0;
  }
  // Both outcomes are exercised, not just one.
  CHECK(recovered > 30);
  CHECK(recovered < 290);
}

TEST_CASE("DescribeRecovery says when latency came back, or what the last window showed",
          "[stats]") {
  const RecoveryCriteria criteria = {.window_s = 3};
  CHECK(
      DescribeRecovery(
          {.recovered_after_s = 3.2, .windows_checked = 12, .ttft_p95_ms = 420, .e2e_p95_ms = 2100},
          criteria, 15) ==
      "recovered 3.2 s after the overload ended (TTFT p95 420 ms, e2e p95 2100 ms over a 3 s "
      "window)");
  CHECK(DescribeRecovery({.windows_checked = 40, .ttft_p95_ms = 2600, .e2e_p95_ms = 9100}, criteria,
                         15) ==
        "did not recover within 15 s (last window: TTFT p95 2600 ms, e2e p95 9100 ms)");
}

TEST_CASE("DescribeRecovery rounds, and leaves out what the window did not have", "[stats]") {
  CHECK(DescribeRecovery({.recovered_after_s = 2.75,
                          .windows_checked = 6,
                          .ttft_p95_ms = 442.49999999999997,
                          .e2e_p95_ms = 2540.04},
                         {.window_s = 2.5}, 10) ==
        "recovered 2.75 s after the overload ended (TTFT p95 442.5 ms, e2e p95 2540 ms over a "
        "2.5 s window)");
  CHECK(DescribeRecovery({.recovered_after_s = 1.5, .windows_checked = 3, .e2e_p95_ms = 90000},
                         {.window_s = 2}, 10) ==
        "recovered 1.5 s after the overload ended (e2e p95 90000 ms over a 2 s window)");
  CHECK(DescribeRecovery({.recovered_after_s = 1.5, .windows_checked = 3}, {.window_s = 2}, 10) ==
        "recovered 1.5 s after the overload ended (over a 2 s window)");
  CHECK(DescribeRecovery({.windows_checked = 4}, {.window_s = 2}, 12.5) ==
        "did not recover within 12.5 s (last window: no TTFT or e2e values)");
  CHECK(DescribeRecovery({}, {.window_s = 2}, 15) ==
        "did not recover within 15 s (no request ended after the overload)");
}

}  // namespace
}  // namespace stagegate::stats
