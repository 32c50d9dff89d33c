#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base/hashing.h"
#include "base/status.h"

namespace stagegate::load {

/// splitmix64 (Steele, Lea and Flood) as a standard random bit generator: its state is one word,
/// so seeding it costs nothing. For short streams drawn per request, where seeding
/// std::mt19937_64 (312 words) would cost more than the draws.
class SplitMix64 {
 public:
  using result_type = uint64_t;
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() {
    const uint64_t x = state_;
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(x);
  }

 private:
  uint64_t state_;
};

/// Random variates computed here from the engine's bits alone (std::mt19937_64, whose output the
/// C++ standard fixes, or SplitMix64), rather than from <random>'s distributions, whose
/// algorithms differ between standard libraries: the same seed gives the same numbers with any
/// compiler (up to the last bit of libm's log, exp and cos). Not thread-safe; one generator per
/// user.
template <class Engine>
class BasicRandom {
 public:
  explicit BasicRandom(uint64_t seed) : engine_(seed) {}

  /// The engine's next 64 random bits.
  uint64_t Bits() { return engine_(); }
  /// Uniform on [0, 1), from the 53 high bits of one engine output.
  double Uniform();
  /// Exponential with mean 1: -log1p(-Uniform()).
  double Exponential();
  /// Standard normal, by Box–Muller. Each pair is computed at once: the cosine value is returned
  /// and the sine value kept for the next call.
  double Normal();
  /// Gamma with shape `shape` > 0 and scale 1 (mean `shape`), by Marsaglia–Tsang, with the
  /// Gamma(k) = Gamma(k + 1) * U^(1/k) boost for shape < 1.
  double Gamma(double shape);

 private:
  Engine engine_;
  std::optional<double> spare_normal_;
};

/// Schedules draw from std::mt19937_64.
using Random = BasicRandom<std::mt19937_64>;

enum class ArrivalProcess { kConstant, kPoisson, kGamma };

/// During [at_s, at_s + duration_s) the schedule's rate is `rate` instead of the base rate.
struct RateSpike {
  double at_s = 0;
  double duration_s = 0;
  double rate = 0;
};

/// One slice of a run split across processes or machines (`--shard I/N`). `index` counts from 0
/// and is below `count`; the user writes it counting from 1 (see ParseShard).
struct Shard {
  int64_t index = 0;
  int64_t count = 1;
};

/// Parses the `--shard` text "I/N", with I counted from 1 as people count ("1/4" .. "4/4"), into
/// a Shard counted from 0 ({.index = 0, .count = 4} .. {.index = 3, .count = 4}). Digits only, no
/// spaces or signs. InvalidInput errors quote the text, e.g. "shard '0/4': I must be from 1 to 4
/// (shards count from 1)".
Result<Shard> ParseShard(std::string_view text);

/// Ok when 0 <= index < count, else InvalidInput naming both numbers.
Status ValidateShard(Shard shard);

/// "I/N" as the user writes it (the index counted from 1): FormatShard({3, 4}) == "4/4".
std::string FormatShard(Shard shard);

/// The workers that `shard` runs of a closed loop of `concurrency`: the total split as evenly as
/// possible, the lower indices taking the remainder, so the shards' numbers sum to `concurrency`.
/// A shard may get 0 when there are more shards than workers. `shard` must be valid (as from
/// ParseShard) and `concurrency` >= 0.
int64_t ShardConcurrency(int64_t concurrency, Shard shard);

/// How many of a count-limited closed loop's `requests` the shard sends: those whose sequence
/// (0, 1, .., requests - 1) satisfies sequence % count == index. The shards' numbers sum to
/// `requests`. Same preconditions as ShardConcurrency.
int64_t ShardCount(int64_t requests, Shard shard);

/// An open-loop (fixed-rate) phase. The rate at time t is `rate`, ramping linearly to `ramp_to`
/// over `duration_s` when that is set, except inside a spike's window, where the spike's rate
/// applies. Where the rate is 0 there are no arrivals.
struct OpenLoopOptions {
  double rate = 0;  // requests/s at t = 0; > 0 unless `ramp_to` or `spikes` supply the rate
  ArrivalProcess process = ArrivalProcess::kConstant;
  double burstiness = 1;          // kGamma's shape k: inter-arrival CV is 1/sqrt(k); < 1 burstier
  std::optional<double> ramp_to;  // needs duration_s
  std::vector<RateSpike> spikes;  // windows must not overlap; they may run past duration_s
  std::optional<double> duration_s;  // only arrivals whose intended time is < duration_s
  std::optional<int64_t> requests;   // at most this many arrivals (before sharding)
  uint64_t seed = 0;
  Shard shard;
  /// Exactly round(∫ rate over [0, exact_count_s)) arrivals (at least 1) before this time: their
  /// operational times are drawn as usual and scaled so that the next one falls at exactly
  /// exact_count_s, from where the process goes on as usual (to duration_s): the process
  /// conditioned on its count. A level of a capacity sweep then offers its nominal rate over the
  /// time it surely runs, not a draw 10% above or below it; the gaps keep their shape.
  std::optional<double> exact_count_s;
};

/// One scheduled send.
struct Arrival {
  int64_t sequence = 0;     // position in the unsharded schedule, from 0
  int64_t intended_ns = 0;  // when it should be sent, in ns from the phase start

  bool operator==(const Arrival&) const = default;
};

/// The most arrivals one schedule may hold (before sharding); larger schedules are refused.
inline constexpr int64_t kMaxArrivals = 50'000'000;

/// Computes an open-loop schedule ahead of the run, ordered by time (ties by sequence).
///
/// Method: a renewal process of rate 1 is drawn in "operational time" u (gaps: exactly 1 for
/// kConstant, Exp(1) for kPoisson, Gamma(k, scale 1/k) for kGamma: mean 1, CV 1/sqrt(k)), and each
/// u is mapped to the real time t at which the cumulative rate ∫0^t rate(s) ds first exceeds u. So
/// one code path serves every process, ramp and spike, and the expected count in any window is
/// the integral of the rate over it (to within one arrival for kConstant). For every process the
/// first arrival is at u = 0, i.e. at t = 0 (or where the rate first becomes positive): the phase
/// opens with a request. kConstant at rate R sends at exactly i / R seconds (rounded to the nearest
/// ns).
///
/// The schedule stops at whichever limit comes first: `requests`, `duration_s`, or the end of
/// the rate (e.g. base rate 0 after the last spike). The shard keeps exactly the arrivals whose
/// sequence % count == index, so the union of all shards is the unsharded schedule.
///
/// Deterministic: the same options give the same vector, bit for bit; give each phase its own
/// seed when their schedules should not repeat each other. Every problem with the
/// options (a rate < 0 or nowhere > 0, no limit, ramp_to without duration_s, burstiness <= 0, a
/// bad or overlapping spike, a shard out of range, more than kMaxArrivals arrivals) is reported in
/// one InvalidInput Status, one problem a line.
Result<std::vector<Arrival>> BuildOpenLoop(const OpenLoopOptions& options);

}  // namespace stagegate::load
