#include "load/schedule.h"
#include "base/strings.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

namespace stagegate::load {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// The latest intended time a schedule may hold: int64 nanoseconds end near 9.22e9 s.
constexpr double kMaxSeconds = 9e9;

// A number in a message as a person would write it ("-1", "0.5", "1e-09", "nan").
std::string Num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", value);
  return buffer;
}

std::string Window(const RateSpike& spike) {
  return "[" + Num(spike.at_s) + ", " + Num(spike.at_s + spike.duration_s) + ") s";
}

// One stretch of the rate curve on which the rate is linear in time.
struct Piece {
  double start_s = 0;
  double end_s = kInfinity;
  double rate = 0;        // at start_s
  double slope = 0;       // rate change per second
  double cumulative = 0;  // ∫ rate from 0 to start_s
  double area = 0;        // ∫ rate over the piece; +inf for an endless piece with a rate
};

// The rate as a function of time, and the map from operational time (the integral of the rate) back
// to real time. Built from options that passed Validate.
class RateCurve {
 public:
  explicit RateCurve(const OpenLoopOptions& options) {
    std::vector<double> edges = {0};
    if (options.ramp_to) edges.push_back(*options.duration_s);
    for (const RateSpike& spike : options.spikes) {
      edges.push_back(spike.at_s);
      edges.push_back(spike.at_s + spike.duration_s);
    }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());

    const double ramp_slope =
        options.ramp_to ? (*options.ramp_to - options.rate) / *options.duration_s : 0;
    double cumulative = 0;
    for (size_t i = 0; i < edges.size(); ++i) {
      Piece piece{.start_s = edges[i], .cumulative = cumulative};
      if (i + 1 < edges.size()) piece.end_s = edges[i + 1];
      if (const RateSpike* spike = SpikeAt(options.spikes, piece.start_s)) {
        piece.rate = spike->rate;
      } else if (options.ramp_to && piece.start_s < *options.duration_s) {
        piece.rate = options.rate + ramp_slope * piece.start_s;
        piece.slope = ramp_slope;
      } else {
        piece.rate = options.ramp_to ? *options.ramp_to : options.rate;
      }
      if (std::isinf(piece.end_s)) {
        piece.area = piece.rate > 0 ? kInfinity : 0;
      } else {
        const double length = piece.end_s - piece.start_s;
        piece.area = std::max(0.0, piece.rate * length + piece.slope * length * length / 2);
      }
      cumulative += piece.area;
      pieces_.push_back(piece);
    }
  }

  /// ∫ rate from 0 to t.
  double CumulativeAt(double t) const {
    for (const Piece& piece : pieces_) {
      if (t >= piece.end_s) continue;
      const double tau = t - piece.start_s;
      return piece.cumulative + piece.rate * tau + piece.slope * tau * tau / 2;
    }
    return pieces_.back().cumulative + pieces_.back().area;
  }

  /// The first time at which the cumulative rate exceeds u (so an arrival never lands where the
  /// rate is 0), or nullopt when it never does. Calls must come with non-decreasing u.
  std::optional<double> TimeOf(double u) {
    while (cursor_ < pieces_.size() && u >= pieces_[cursor_].cumulative + pieces_[cursor_].area)
      ++cursor_;
    if (cursor_ == pieces_.size()) return std::nullopt;
    const Piece& piece = pieces_[cursor_];
    const double x = u - piece.cumulative;
    double tau = 0;
    if (piece.slope == 0) {
      tau = x / piece.rate;
    } else if (x > 0) {
      // The root of rate * tau + slope * tau^2 / 2 = x, in the form that does not cancel.
      const double root = std::sqrt(std::max(0.0, piece.rate * piece.rate + 2 * piece.slope * x));
      tau = 2 * x / (piece.rate + root);
    }
    return std::min(piece.start_s + tau, piece.end_s);
  }

 private:
  static const RateSpike* SpikeAt(const std::vector<RateSpike>& spikes, double t) {
    for (const RateSpike& spike : spikes)
      if (spike.at_s <= t && t < spike.at_s + spike.duration_s) return &spike;
    return nullptr;
  }

  std::vector<Piece> pieces_;
  size_t cursor_ = 0;
};

void CheckSpikes(const std::vector<RateSpike>& spikes, std::vector<std::string>& problems) {
  std::vector<size_t> valid;
  for (size_t i = 0; i < spikes.size(); ++i) {
    const RateSpike& spike = spikes[i];
    const std::string name = "spike " + std::to_string(i + 1) + ": ";
    const size_t before = problems.size();
    if (!std::isfinite(spike.at_s) || spike.at_s < 0)
      problems.push_back(name + "'at_s' must be a number >= 0, got " + Num(spike.at_s));
    if (!std::isfinite(spike.duration_s) || spike.duration_s <= 0)
      problems.push_back(name + "'duration_s' must be a number > 0, got " + Num(spike.duration_s));
    if (!std::isfinite(spike.rate) || spike.rate < 0)
      problems.push_back(name + "'rate' must be a number >= 0, got " + Num(spike.rate));
    if (problems.size() == before) valid.push_back(i);
  }
  std::sort(valid.begin(), valid.end(),
            [&](size_t a, size_t b) { return spikes[a].at_s < spikes[b].at_s; });
  for (size_t i = 1; i < valid.size(); ++i) {
    const size_t a = std::min(valid[i - 1], valid[i]);
    const size_t b = std::max(valid[i - 1], valid[i]);
    const RateSpike& earlier = spikes[valid[i - 1]];
    if (earlier.at_s + earlier.duration_s > spikes[valid[i]].at_s)
      problems.push_back("spikes " + std::to_string(a + 1) + " and " + std::to_string(b + 1) +
                         " overlap: " + Window(spikes[a]) + " and " + Window(spikes[b]));
  }
}

std::vector<std::string> Validate(const OpenLoopOptions& options) {
  std::vector<std::string> problems;
  if (!std::isfinite(options.rate) || options.rate < 0)
    problems.push_back("'rate' must be a number >= 0, got " + Num(options.rate));
  if (options.ramp_to && (!std::isfinite(*options.ramp_to) || *options.ramp_to < 0))
    problems.push_back("'ramp_to' must be a number >= 0, got " + Num(*options.ramp_to));
  if (options.ramp_to && !options.duration_s)
    problems.push_back("'ramp_to' needs 'duration_s': the ramp runs over the whole phase");
  if (!std::isfinite(options.burstiness) || options.burstiness <= 0)
    problems.push_back("'burstiness' must be a number > 0, got " + Num(options.burstiness));
  if (!options.duration_s && !options.requests)
    problems.push_back("give 'duration_s', 'requests' or both");
  if (options.duration_s && (!std::isfinite(*options.duration_s) || *options.duration_s <= 0))
    problems.push_back("'duration_s' must be a number > 0, got " + Num(*options.duration_s));
  if (options.requests && *options.requests < 1)
    problems.push_back("'requests' must be at least 1, got " + std::to_string(*options.requests));
  if (options.exact_count_s &&
      (!std::isfinite(*options.exact_count_s) || *options.exact_count_s <= 0))
    problems.push_back("'exact_count_s' must be a number > 0, got " + Num(*options.exact_count_s));
  CheckSpikes(options.spikes, problems);
  if (Status shard = ValidateShard(options.shard); !shard.ok()) problems.push_back(shard.message());
  return problems;
}

// The operational time between two arrivals: mean 1 for every process.
double Gap(const OpenLoopOptions& options, Random& random) {
  switch (options.process) {
    case ArrivalProcess::kConstant:
      return 1;
    case ArrivalProcess::kPoisson:
      return random.Exponential();
    case ArrivalProcess::kGamma:
      return random.Gamma(options.burstiness) / options.burstiness;
  }
  return 1;
}

}  // namespace

template <class Engine>
double BasicRandom<Engine>::Uniform() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

template <class Engine>
double BasicRandom<Engine>::Exponential() {
  return -std::log1p(-Uniform());
}

template <class Engine>
double BasicRandom<Engine>::Normal() {
  if (spare_normal_) {
    const double value = *spare_normal_;
    spare_normal_.reset();
    return value;
  }
  const double radius = std::sqrt(-2 * std::log(1 - Uniform()));  // 1 - Uniform() is in (0, 1]
  const double angle = 2 * std::numbers::pi * Uniform();
  spare_normal_ = radius * std::sin(angle);
  return radius * std::cos(angle);
}

template <class Engine>
double BasicRandom<Engine>::Gamma(double shape) {
  assert(shape > 0);
  if (shape < 1) {
    const double boosted = Gamma(shape + 1);
    return boosted * std::pow(1 - Uniform(), 1 / shape);
  }
  const double d = shape - 1.0 / 3;
  const double c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = Normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = Uniform();
    const double x2 = x * x;
    if (u < 1 - 0.0331 * x2 * x2) return d * v;
    if (std::log(u) < 0.5 * x2 + d * (1 - v + std::log(v))) return d * v;
  }
}

template class BasicRandom<std::mt19937_64>;
template class BasicRandom<SplitMix64>;

Result<Shard> ParseShard(std::string_view text) {
  const std::string prefix = "shard '" + std::string(text) + "': ";
  const size_t slash = text.find('/');
  std::optional<int64_t> index;
  std::optional<int64_t> count;
  if (slash != std::string_view::npos) {
    index = ParseWholeNumber(text.substr(0, slash));
    count = ParseWholeNumber(text.substr(slash + 1));
  }
  if (!index || !count)
    return Status::InvalidInput(prefix + "expected I/N, shard I of N counting from 1, e.g. 1/4");
  if (*count < 1) return Status::InvalidInput(prefix + "N must be at least 1");
  if (*index < 1 || *index > *count)
    return Status::InvalidInput(prefix + "I must be from 1 to " + std::to_string(*count) +
                                " (shards count from 1)");
  return Shard{.index = *index - 1, .count = *count};
}

Status ValidateShard(Shard shard) {
  if (shard.count >= 1 && shard.index >= 0 && shard.index < shard.count) return Status::Ok();
  return Status::InvalidInput("shard index " + std::to_string(shard.index) + " of " +
                              std::to_string(shard.count) +
                              " is out of range (the index counts from 0 and must be below the "
                              "count)");
}

std::string FormatShard(Shard shard) {
  return std::to_string(shard.index + 1) + "/" + std::to_string(shard.count);
}

int64_t ShardConcurrency(int64_t concurrency, Shard shard) {
  assert(ValidateShard(shard).ok() && concurrency >= 0);
  return concurrency / shard.count + (shard.index < concurrency % shard.count ? 1 : 0);
}

int64_t ShardCount(int64_t requests, Shard shard) {
  // Sequences index, index + count, ... below `requests`: the same split as the workers.
  return ShardConcurrency(requests, shard);
}

Result<std::vector<Arrival>> BuildOpenLoop(const OpenLoopOptions& options) {
  std::vector<std::string> problems = Validate(options);
  std::optional<RateCurve> curve;
  double expected = 0;
  if (problems.empty()) {
    curve.emplace(options);
    const double total = curve->CumulativeAt(options.duration_s.value_or(kInfinity));
    expected =
        std::min(total + 1, options.requests ? static_cast<double>(*options.requests) : kInfinity);
    if (total == 0) {
      problems.push_back("the rate is 0 throughout the phase: no request would be sent");
    } else if (expected > static_cast<double>(kMaxArrivals)) {
      problems.push_back("the schedule would hold about " + Num(std::floor(expected)) +
                         " arrivals; at most " + std::to_string(kMaxArrivals) +
                         " are supported: lower 'rate', 'duration_s' or 'requests'");
    }
  }
  if (!problems.empty()) {
    std::string message;
    for (const std::string& problem : problems)
      message += (message.empty() ? "" : "\n") + problem;
    return Status::InvalidInput(message);
  }

  const int64_t limit = options.requests.value_or(std::numeric_limits<int64_t>::max());
  const int64_t end_ns = options.duration_s ? std::llround(*options.duration_s * 1e9)
                                            : std::numeric_limits<int64_t>::max();
  Random random(options.seed);
  std::vector<Arrival> arrivals;
  arrivals.reserve(static_cast<size_t>(expected / static_cast<double>(options.shard.count)) + 1);
  // Conditioned on its count: the operational times of `count` arrivals and of the one after,
  // scaled so that the one after falls at exact_count_s; the process goes on from there.
  std::vector<double> exact;
  if (options.exact_count_s) {
    const double total = curve->CumulativeAt(*options.exact_count_s);
    const auto count = std::max<int64_t>(1, std::llround(total));
    exact.reserve(static_cast<size_t>(count) + 1);
    exact.push_back(0);
    for (int64_t k = 0; k < count; ++k)
      exact.push_back(exact.back() + Gap(options, random));
    const double scale = total / exact.back();
    for (double& position : exact)
      position *= scale;
  }
  double u = 0;
  for (int64_t sequence = 0; sequence < limit; ++sequence) {
    if (sequence < static_cast<int64_t>(exact.size()))
      u = exact[static_cast<size_t>(sequence)];
    else if (sequence > 0)
      u += Gap(options, random);
    const std::optional<double> t = curve->TimeOf(u);
    if (!t) break;
    if (*t > kMaxSeconds)
      return Status::InvalidInput("arrival " + std::to_string(sequence) + " would be at " +
                                  Num(*t) + " s, past the latest time a schedule can hold (" +
                                  Num(kMaxSeconds) + " s): raise 'rate'");
    const int64_t intended_ns = std::llround(*t * 1e9);
    if (intended_ns >= end_ns) break;
    if (sequence == kMaxArrivals)
      return Status::InvalidInput("the schedule holds more than " + std::to_string(kMaxArrivals) +
                                  " arrivals: lower 'rate', 'duration_s' or 'requests'");
    if (sequence % options.shard.count == options.shard.index)
      arrivals.push_back({.sequence = sequence, .intended_ns = intended_ns});
  }
  return arrivals;
}

}  // namespace stagegate::load
