#include "load/schedule.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "load/arrival_printer.h"

namespace stagegate::load {
namespace {

using Arrivals = std::vector<Arrival>;

Arrivals Build(const OpenLoopOptions& options) {
  Result<Arrivals> arrivals = BuildOpenLoop(options);
  INFO(arrivals.status().message());
  REQUIRE(arrivals.ok());
  return std::move(arrivals).value();
}

std::string BuildError(const OpenLoopOptions& options) {
  Result<Arrivals> arrivals = BuildOpenLoop(options);
  REQUIRE_FALSE(arrivals.ok());
  CHECK(arrivals.status().code() == Status::Code::kInvalidInput);
  return arrivals.status().message();
}

std::vector<double> Gaps(const Arrivals& arrivals) {
  std::vector<double> gaps;
  for (size_t i = 1; i < arrivals.size(); ++i)
    gaps.push_back(static_cast<double>(arrivals[i].intended_ns - arrivals[i - 1].intended_ns));
  return gaps;
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values)
    sum += value;
  return sum / static_cast<double>(values.size());
}

// Population standard deviation.
double Std(const std::vector<double>& values) {
  const double mean = Mean(values);
  double squares = 0;
  for (double value : values)
    squares += (value - mean) * (value - mean);
  return std::sqrt(squares / static_cast<double>(values.size()));
}

// Coefficient of variation.
double Cv(const std::vector<double>& values) {
  return Std(values) / Mean(values);
}

// Arrivals whose intended time is in [from_s, to_s).
int64_t CountBetween(const Arrivals& arrivals, double from_s, double to_s) {
  return std::count_if(arrivals.begin(), arrivals.end(), [&](const Arrival& arrival) {
    return arrival.intended_ns >= std::llround(from_s * 1e9) &&
           arrival.intended_ns < std::llround(to_s * 1e9);
  });
}

// Achieved rate over the schedule: arrivals after the first / time from the first to the last.
double AchievedRate(const Arrivals& arrivals) {
  return static_cast<double>(arrivals.size() - 1) /
         (static_cast<double>(arrivals.back().intended_ns - arrivals.front().intended_ns) / 1e9);
}

bool SortedInTime(const Arrivals& arrivals) {
  return std::is_sorted(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
    return a.intended_ns < b.intended_ns ||
           (a.intended_ns == b.intended_ns && a.sequence < b.sequence);
  });
}

TEST_CASE("A constant schedule sends at exactly i / rate from t = 0", "[load]") {
  const Arrivals eight = Build({.rate = 8, .requests = 100});
  REQUIRE(eight.size() == 100u);
  for (size_t i = 0; i < eight.size(); ++i) {
    CHECK(eight[i].sequence == static_cast<int64_t>(i));
    CHECK(eight[i].intended_ns == static_cast<int64_t>(i) * 125'000'000);
  }

  // 1/3 s is not a whole number of ns: each time is rounded on its own, so no error accumulates.
  CHECK(Build({.rate = 3, .duration_s = 2}) == Arrivals{{0, 0},
                                                        {1, 333'333'333},
                                                        {2, 666'666'667},
                                                        {3, 1'000'000'000},
                                                        {4, 1'333'333'333},
                                                        {5, 1'666'666'667}});
  const Arrivals long_run = Build({.rate = 7, .requests = 100'000});
  CHECK(long_run.back().intended_ns == std::llround(99'999 / 7.0 * 1e9));
}

TEST_CASE("A Poisson schedule has the mean rate and exponential gaps", "[load]") {
  const Arrivals arrivals =
      Build({.rate = 50, .process = ArrivalProcess::kPoisson, .requests = 50'000, .seed = 7});
  REQUIRE(arrivals.size() == 50'000u);
  CHECK(arrivals.front().intended_ns == 0);
  CHECK(AchievedRate(arrivals) == Approx(50).epsilon(0.02));
  const std::vector<double> gaps = Gaps(arrivals);
  CHECK(Cv(gaps) == Approx(1).epsilon(0.03));
  // An exponential's median is ln 2 times its mean.
  std::vector<double> sorted = gaps;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  CHECK(sorted[sorted.size() / 2] / Mean(gaps) == Approx(std::log(2)).epsilon(0.03));
  CHECK(SortedInTime(arrivals));
}

TEST_CASE("A gamma schedule's gaps have CV 1/sqrt(burstiness)", "[load]") {
  for (double shape : {0.25, 4.0}) {
    INFO("burstiness " << shape);
    const Arrivals arrivals = Build({.rate = 20,
                                     .process = ArrivalProcess::kGamma,
                                     .burstiness = shape,
                                     .requests = 50'000,
                                     .seed = 11});
    REQUIRE(arrivals.size() == 50'000u);
    CHECK(AchievedRate(arrivals) == Approx(20).epsilon(0.03));
    CHECK(Cv(Gaps(arrivals)) == Approx(1 / std::sqrt(shape)).epsilon(0.05));
    CHECK(SortedInTime(arrivals));
  }
}

TEST_CASE("exact_count_s offers the nominal rate exactly, keeping the gaps' shape", "[load]") {
  // Over 10 s at 16 req/s a Poisson draw holds 160 +- 13 arrivals; conditioned on its count, 160.
  int64_t far_off = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    const Arrivals drawn =
        Build({.rate = 16, .process = ArrivalProcess::kPoisson, .duration_s = 10, .seed = seed});
    far_off += std::abs(static_cast<int64_t>(drawn.size()) - 160) > 8 ? 1 : 0;
    const Arrivals exact = Build({.rate = 16,
                                  .process = ArrivalProcess::kPoisson,
                                  .duration_s = 10,
                                  .seed = seed,
                                  .exact_count_s = 10});
    CHECK(exact.size() == 160u);
    CHECK(exact.front().intended_ns == 0);
    CHECK(exact.back().intended_ns < 10'000'000'000);
    CHECK(SortedInTime(exact));
  }
  CHECK(far_off >= 5);  // without it, a level is often 5% or more off its rate
  // Still Poisson: exponential gaps, CV 1, over a long schedule.
  const Arrivals poisson = Build({.rate = 50,
                                  .process = ArrivalProcess::kPoisson,
                                  .duration_s = 1000,
                                  .seed = 7,
                                  .exact_count_s = 1000});
  REQUIRE(poisson.size() == 50'000u);
  CHECK(Cv(Gaps(poisson)) == Approx(1).epsilon(0.03));
  // A constant schedule is what it was; the request limit still applies.
  CHECK(Build({.rate = 4, .duration_s = 2, .exact_count_s = 2}) ==
        Build({.rate = 4, .duration_s = 2}));
  CHECK(Build({.rate = 16,
               .process = ArrivalProcess::kPoisson,
               .duration_s = 10,
               .requests = 20,
               .seed = 3,
               .exact_count_s = 10})
            .size() == 20u);
  // With a ramp, the count is the integral of the rate: 0 to 20 req/s over 10 s is 100.
  CHECK(Build({.rate = 0.001,
               .process = ArrivalProcess::kPoisson,
               .ramp_to = 20,
               .duration_s = 10,
               .seed = 5,
               .exact_count_s = 10})
            .size() == 100u);
  // Exact over the first 10 s of a 30 s schedule; after that, the process as usual.
  const Arrivals longer = Build({.rate = 16,
                                 .process = ArrivalProcess::kPoisson,
                                 .duration_s = 30,
                                 .seed = 9,
                                 .exact_count_s = 10});
  CHECK(std::count_if(longer.begin(), longer.end(),
                      [](const Arrival& a) { return a.intended_ns < 10'000'000'000; }) == 160);
  CHECK(longer.size() > 400u);
  CHECK(longer.size() < 560u);
  CHECK(SortedInTime(longer));
  CHECK(BuildError({.rate = 1, .duration_s = 1, .exact_count_s = -1}) ==
        "'exact_count_s' must be a number > 0, got -1");
}

TEST_CASE("A schedule is a function of its options and seed", "[load]") {
  for (ArrivalProcess process : {ArrivalProcess::kPoisson, ArrivalProcess::kGamma}) {
    const OpenLoopOptions options{
        .rate = 100, .process = process, .burstiness = 0.5, .duration_s = 30, .seed = 42};
    const Arrivals first = Build(options);
    CHECK(Build(options) == first);
    OpenLoopOptions reseeded = options;
    reseeded.seed = 43;
    const Arrivals second = Build(reseeded);
    CHECK(second != first);
    CHECK(second[1].intended_ns != first[1].intended_ns);
  }

  // Pinned values: a change of the variate algorithms (say, to <random>'s distributions, which
  // differ between standard libraries) changes schedules that users have already run.
  const Arrivals poisson =
      Build({.rate = 10, .process = ArrivalProcess::kPoisson, .requests = 4, .seed = 1});
  CHECK(poisson == Arrivals{{0, 0}, {1, 14'372'794}, {2, 29'038'167}, {3, 89'043'003}});
  const Arrivals gamma = Build({.rate = 10,
                                .process = ArrivalProcess::kGamma,
                                .burstiness = 0.25,
                                .requests = 4,
                                .seed = 1});
  CHECK(gamma == Arrivals{{0, 0}, {1, 475'959'375}, {2, 475'993'011}, {3, 491'985'250}});
}

TEST_CASE("A ramp raises the rate linearly over the phase", "[load]") {
  // 10/s to 30/s over 100 s: the rate at t is 10 + 0.2 t, and 2,000 requests in all.
  const Arrivals up = Build({.rate = 10, .ramp_to = 30, .duration_s = 100});
  CHECK(up.size() == 2000u);
  // ∫ over [0, 25) = 312.5 and over [75, 100) = 687.5.
  CHECK(std::abs(CountBetween(up, 0, 25) - 312.5) <= 1);
  CHECK(std::abs(CountBetween(up, 75, 100) - 687.5) <= 1);
  for (int second = 0; second < 100; second += 10) {
    INFO("from " << second << " s");
    const double expected = 10 * (10 + 0.2 * (second + 5));
    CHECK(std::abs(CountBetween(up, second, second + 10) - expected) <= 1);
  }

  const Arrivals down = Build({.rate = 30, .ramp_to = 10, .duration_s = 100});
  CHECK(down.size() == 2000u);
  CHECK(std::abs(CountBetween(down, 0, 25) - 687.5) <= 1);
  CHECK(std::abs(CountBetween(down, 75, 100) - 312.5) <= 1);

  // From nothing: the rate at t is t / 10, so [0, t) holds t^2 / 20.
  const Arrivals from_zero = Build({.rate = 0, .ramp_to = 10, .duration_s = 100});
  CHECK(from_zero.size() == 500u);
  CHECK(from_zero[0].intended_ns == 0);
  CHECK(std::abs(CountBetween(from_zero, 0, 50) - 125) <= 1);

  const Arrivals poisson =
      Build({.rate = 10, .process = ArrivalProcess::kPoisson, .ramp_to = 30, .duration_s = 400});
  const double first_quarter = static_cast<double>(CountBetween(poisson, 0, 100));
  const double last_quarter = static_cast<double>(CountBetween(poisson, 300, 400));
  CHECK(first_quarter == Approx(1250).epsilon(0.1));
  CHECK(last_quarter == Approx(2750).epsilon(0.1));
}

TEST_CASE("A spike replaces the base rate inside its window", "[load]") {
  const Arrivals constant =
      Build({.rate = 10, .spikes = {{.at_s = 20, .duration_s = 5, .rate = 100}}, .duration_s = 60});
  CHECK(CountBetween(constant, 20, 25) == 500);
  CHECK(CountBetween(constant, 0, 20) == 200);
  CHECK(CountBetween(constant, 25, 60) == 350);
  CHECK(constant.size() == 1050u);
  CHECK(SortedInTime(constant));

  const Arrivals poisson = Build({.rate = 10,
                                  .process = ArrivalProcess::kPoisson,
                                  .spikes = {{.at_s = 100, .duration_s = 20, .rate = 200}},
                                  .duration_s = 300,
                                  .seed = 3});
  CHECK(static_cast<double>(CountBetween(poisson, 100, 120)) == Approx(4000).epsilon(0.05));
  CHECK(static_cast<double>(CountBetween(poisson, 0, 100)) == Approx(1000).epsilon(0.1));
  CHECK(static_cast<double>(CountBetween(poisson, 120, 300)) == Approx(1800).epsilon(0.1));

  // A spike on a ramp: the ramp goes on underneath and resumes at its own rate after the spike.
  const Arrivals ramp = Build({.rate = 10,
                               .ramp_to = 30,
                               .spikes = {{.at_s = 50, .duration_s = 10, .rate = 0}},
                               .duration_s = 100});
  CHECK(CountBetween(ramp, 50, 60) == 0);
  CHECK(std::abs(CountBetween(ramp, 60, 70) - 10 * (10 + 0.2 * 65)) <= 1);
  // The spike takes away ∫ over [50, 60) of 10 + 0.2 t, which is 210.
  CHECK(std::abs(static_cast<double>(ramp.size()) - 1790) <= 1);
}

TEST_CASE("With a base rate of 0 only the spikes send", "[load]") {
  const OpenLoopOptions options{.rate = 0,
                                .spikes = {{.at_s = 20, .duration_s = 1, .rate = 100},
                                           {.at_s = 5, .duration_s = 2, .rate = 50}},
                                .duration_s = 30};
  const Arrivals arrivals = Build(options);
  CHECK(arrivals.size() == 200u);
  CHECK(arrivals.front().intended_ns == 5'000'000'000);
  CHECK(CountBetween(arrivals, 5, 7) == 100);
  CHECK(CountBetween(arrivals, 20, 21) == 100);
  CHECK(arrivals[100].intended_ns == 20'000'000'000);

  // Without a duration the schedule ends with the last spike, before the request limit.
  OpenLoopOptions by_count = options;
  by_count.duration_s.reset();
  by_count.requests = 1000;
  CHECK(Build(by_count) == arrivals);

  OpenLoopOptions poisson = options;
  poisson.process = ArrivalProcess::kPoisson;
  const Arrivals random = Build(poisson);
  CHECK(CountBetween(random, 5, 7) + CountBetween(random, 20, 21) ==
        static_cast<int64_t>(random.size()));
  CHECK(random.size() > 150u);
}

TEST_CASE("The schedule stops at whichever limit comes first", "[load]") {
  // 10/s for 5 s is 50 arrivals.
  CHECK(Build({.rate = 10, .duration_s = 5, .requests = 20}).size() == 20u);
  CHECK(Build({.rate = 10, .duration_s = 5, .requests = 100}).size() == 50u);
  CHECK(Build({.rate = 10, .duration_s = 5}).size() == 50u);
  const Arrivals poisson =
      Build({.rate = 10, .process = ArrivalProcess::kPoisson, .duration_s = 5, .seed = 9});
  CHECK(poisson.back().intended_ns < 5'000'000'000);
}

TEST_CASE("The shards of a schedule are disjoint slices whose union is the schedule", "[load]") {
  const OpenLoopOptions options{.rate = 200,
                                .process = ArrivalProcess::kGamma,
                                .burstiness = 0.5,
                                .requests = 10'001,
                                .seed = 5};
  const Arrivals whole = Build(options);
  REQUIRE(whole.size() == 10'001u);
  for (int64_t count : {1, 2, 3, 7}) {
    INFO(count << " shards");
    Arrivals merged;
    for (int64_t index = 0; index < count; ++index) {
      OpenLoopOptions sharded = options;
      sharded.shard = {.index = index, .count = count};
      const Arrivals part = Build(sharded);
      CHECK(static_cast<int64_t>(part.size()) == ShardCount(10'001, sharded.shard));
      CHECK(SortedInTime(part));
      CHECK(std::all_of(part.begin(), part.end(),
                        [&](const Arrival& arrival) { return arrival.sequence % count == index; }));
      merged.insert(merged.end(), part.begin(), part.end());
    }
    std::sort(merged.begin(), merged.end(),
              [](const Arrival& a, const Arrival& b) { return a.sequence < b.sequence; });
    // Equal to the whole, element by element, so there is no gap and no duplicate.
    CHECK(merged == whole);
  }
}

TEST_CASE("Closed-loop work is split evenly between shards", "[load]") {
  CHECK(ShardConcurrency(10, {0, 4}) == 3);
  CHECK(ShardConcurrency(10, {1, 4}) == 3);
  CHECK(ShardConcurrency(10, {2, 4}) == 2);
  CHECK(ShardConcurrency(10, {3, 4}) == 2);
  CHECK(ShardConcurrency(2, {2, 4}) == 0);
  CHECK(ShardConcurrency(5, {0, 1}) == 5);
  for (int64_t total : {0, 1, 5, 64, 1001}) {
    for (int64_t count : {1, 3, 8}) {
      int64_t workers = 0;
      int64_t requests = 0;
      for (int64_t index = 0; index < count; ++index) {
        const Shard shard{.index = index, .count = count};
        workers += ShardConcurrency(total, shard);
        requests += ShardCount(total, shard);
        // sequence % count == index for sequences 0 .. total - 1.
        int64_t mine = 0;
        for (int64_t sequence = 0; sequence < total; ++sequence)
          mine += sequence % count == index ? 1 : 0;
        CHECK(ShardCount(total, shard) == mine);
      }
      CHECK(workers == total);
      CHECK(requests == total);
    }
  }
}

TEST_CASE("ParseShard reads I/N counted from 1 and names the text it refuses", "[load]") {
  struct Good {
    const char* text;
    int64_t index;
    int64_t count;
  };
  for (const Good& good :
       {Good{"1/1", 0, 1}, Good{"1/4", 0, 4}, Good{"4/4", 3, 4}, Good{"12/16", 11, 16}}) {
    INFO(good.text);
    Result<Shard> shard = ParseShard(good.text);
    REQUIRE(shard.ok());
    CHECK(shard->index == good.index);
    CHECK(shard->count == good.count);
    CHECK(FormatShard(*shard) == good.text);
  }

  const std::string malformed = "': expected I/N, shard I of N counting from 1, e.g. 1/4";
  for (const char* text : {"", "3", "1/", "/4", "a/4", "1/4x", "-1/4", "+1/4", " 1/4", "1/2/3",
                           "99999999999999999999/1"}) {
    INFO(text);
    Result<Shard> shard = ParseShard(text);
    REQUIRE_FALSE(shard.ok());
    CHECK(shard.status().code() == Status::Code::kInvalidInput);
    CHECK(shard.status().message() == "shard '" + std::string(text) + malformed);
  }
  CHECK(ParseShard("0/4").status().message() ==
        "shard '0/4': I must be from 1 to 4 (shards count from 1)");
  CHECK(ParseShard("5/4").status().message() ==
        "shard '5/4': I must be from 1 to 4 (shards count from 1)");
  CHECK(ParseShard("1/0").status().message() == "shard '1/0': N must be at least 1");
}

TEST_CASE("BuildOpenLoop reports every problem with its options at once", "[load]") {
  CHECK(BuildError({.rate = 10}) == "give 'duration_s', 'requests' or both");
  CHECK(BuildError({.rate = 0, .duration_s = 10}) ==
        "the rate is 0 throughout the phase: no request would be sent");
  // The only spike starts after the phase has ended.
  CHECK(BuildError(
            {.rate = 0, .spikes = {{.at_s = 20, .duration_s = 1, .rate = 5}}, .duration_s = 10}) ==
        "the rate is 0 throughout the phase: no request would be sent");
  CHECK(BuildError({.rate = 10, .ramp_to = 20, .requests = 5}) ==
        "'ramp_to' needs 'duration_s': the ramp runs over the whole phase");
  CHECK(BuildError({.rate = 10, .requests = 5, .shard = {.index = 4, .count = 4}}) ==
        "shard index 4 of 4 is out of range (the index counts from 0 and must be below the count)");
  CHECK(BuildError({.rate = 10,
                    .spikes = {{.at_s = 5, .duration_s = 5, .rate = 1},
                               {.at_s = 20, .duration_s = 1, .rate = 1},
                               {.at_s = 8, .duration_s = 4, .rate = 1}},
                    .duration_s = 30}) == "spikes 1 and 3 overlap: [5, 10) s and [8, 12) s");
  CHECK(BuildError({.rate = 1e6, .duration_s = 3600}) ==
        "the schedule would hold about 3600000001 arrivals; at most 50000000 are supported: lower "
        "'rate', 'duration_s' or 'requests'");

  CHECK(
      BuildError({.rate = -1,
                  .burstiness = 0,
                  .ramp_to = -2,
                  .spikes = {{.at_s = -1, .duration_s = 0, .rate = -3}},
                  .duration_s = 0,
                  .requests = 0,
                  .shard = {.index = -1, .count = 2}}) ==
      "'rate' must be a number >= 0, got -1\n"
      "'ramp_to' must be a number >= 0, got -2\n"
      "'burstiness' must be a number > 0, got 0\n"
      "'duration_s' must be a number > 0, got 0\n"
      "'requests' must be at least 1, got 0\n"
      "spike 1: 'at_s' must be a number >= 0, got -1\n"
      "spike 1: 'duration_s' must be a number > 0, got 0\n"
      "spike 1: 'rate' must be a number >= 0, got -3\n"
      "shard index -1 of 2 is out of range (the index counts from 0 and must be below the count)");
  CHECK(BuildError({.rate = std::nan(""), .requests = 5}) ==
        "'rate' must be a number >= 0, got nan");
}

TEST_CASE("Random draws its variates with the documented moments", "[load]") {
  Random random(123);
  constexpr int kDraws = 200'000;
  std::vector<double> uniform, normal, gamma_small, gamma_large;
  for (int i = 0; i < kDraws; ++i) {
    uniform.push_back(random.Uniform());
    normal.push_back(random.Normal());
    gamma_small.push_back(random.Gamma(0.25));
    gamma_large.push_back(random.Gamma(4));
  }
  CHECK(*std::min_element(uniform.begin(), uniform.end()) >= 0);
  CHECK(*std::max_element(uniform.begin(), uniform.end()) < 1);
  CHECK(Mean(uniform) == Approx(0.5).epsilon(0.01));
  CHECK(Mean(normal) == Approx(0).margin(0.01));
  CHECK(Std(normal) == Approx(1).epsilon(0.01));
  CHECK(Mean(gamma_small) == Approx(0.25).epsilon(0.02));
  CHECK(Cv(gamma_small) == Approx(2).epsilon(0.03));
  CHECK(Mean(gamma_large) == Approx(4).epsilon(0.01));
  CHECK(Cv(gamma_large) == Approx(0.5).epsilon(0.01));
}

}  // namespace
}  // namespace stagegate::load
