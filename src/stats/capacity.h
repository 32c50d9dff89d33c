#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace stagegate::stats {

/// The window and the counts that every rate quoted for a level is drawn from, so that its
/// sustained rate, answered rate, goodput and output token rate (and the cost and energy at the
/// capacity) divide the same requests by the same seconds. Open loop: the requests that arrived
/// in [from_s, to_s] of level time and ended by the end of its arrival window (the pace check's
/// span); closed loop: every request, from the first send to the last end.
struct RateWindow {
  bool arrivals = true;  // open loop: counts requests by arrival; closed loop: by send
  double from_s = 0, to_s = 0;
  int64_t arrived = 0;
  int64_t completed = 0;  // answered, plus denials the corpus expects
  int64_t answered = 0;   // ended ok
  int64_t met_slos = 0;   // answered within every SLO
  double output_tokens = 0;

  double Seconds() const { return to_s - from_s; }
  /// count / Seconds(), or 0 for an empty window.
  double Rate(double count) const { return Seconds() > 0 ? count / Seconds() : 0; }
};

/// The verdict of one level of a load sweep or capacity search.
struct LevelOutcome {
  double level = 0;           // offered rate (req/s) or concurrency
  bool passed = false;        // thresholds held and the load was sustained
  bool inconclusive = false;  // not passed because it was too short to tell, not because it failed
  std::string failed;         // the first check that failed: "not sustained", "ttft p95 <= 1500 ms"
  std::optional<double> sustained_rate;  // completed req/s over `window`
  double goodput = 0;                    // req/s meeting every SLO, over `window`
  double output_tokens_per_s = 0;        // over `window`
  std::optional<RateWindow> window;
};

/// Where acceptable responsiveness ends in a sweep. A plain value, built by FindCapacity.
struct CapacityFinding {
  std::optional<double> holds_up_to;  // the highest passing level below the first level that did
                                      // not pass (levels compared by value, not run order)
  std::optional<double> fails_at;     // the lowest level that did not pass
  bool monotonic = true;  // false when some level above fails_at passed (the finding is then
                          // "first failure at Y", noisy); also when fails_at itself was tried
                          // twice and passed once, which is the same noise
  /// The lowest level that did not pass only could not tell (no run of it failed): where
  /// responsiveness ends is not known, and the finding says so.
  bool inconclusive = false;
  std::string failed;  // at fails_at: the first check that failed (empty when inconclusive)
  // At holds_up_to: what the application sustained there, all over `window`.
  std::optional<double> sustained_rate;
  double goodput = 0, output_tokens_per_s = 0;
  std::optional<RateWindow> window;
};

/// `levels` in any order (a sweep adds bisection levels at the end). Empty: both nullopt.
/// Levels must be finite (a programmer error otherwise: asserted).
CapacityFinding FindCapacity(std::span<const LevelOutcome> levels);

/// The level to try between a passing level `pass` and a failing level `fail` (pass < fail): the
/// midpoint. With `integer` (concurrency), rounded to the nearest integer, halves up (4 and 7:
/// 6), and nullopt when no integer lies strictly between (4 and 5). Rates are rounded to 3
/// significant decimals of the step fail - pass (4 and 6: 5; 4 and 4.5: 4.25; 1 and 1.1: 1.05),
/// so a bisection never asks for 4.333333 req/s. nullopt when fail <= pass, when either is not
/// finite, or when the two are so close that no double lies between them.
std::optional<double> BisectLevel(double pass, double fail, bool integer);

/// One line for people: "sustained 11.8 req/s; thresholds hold up to 12 req/s and fail at 14
/// req/s (not sustained)", "sustained 15.9 req/s; thresholds hold at every level tried (up to 16
/// req/s)", "thresholds fail at every level tried (from 2 req/s: ttft p95 <= 1500 ms)",
/// "inconclusive: sustained 11.8 req/s; thresholds hold up to 12 req/s and 14 req/s was too
/// short to tell", "no levels". A non-monotonic finding names the highest level that passed
/// above the failure: "thresholds hold up to 8 req/s and first fail at 10 req/s (not sustained),
/// but hold at 14 req/s (not monotonic)". `unit` is "req/s" or "concurrent" ("up to 8
/// concurrent"); the sustained rate is always in req/s. `levels` are the ones `finding` was
/// built from. Numbers without trailing zeros (8, 7.5, 0.25).
std::string DescribeCapacity(const CapacityFinding& finding, std::span<const LevelOutcome> levels,
                             std::string_view unit);

/// What the application did at the highest sustained level, every figure over its one window:
/// "at 12 req/s: 11.3 answered req/s and 1.2 expected denials/s, goodput 10.8 req/s, 2,345
/// output tokens/s (the 128 requests that arrived in its first 10.6 s)". Empty without a
/// sustained level.
std::string DescribeCapacityRates(const CapacityFinding& finding, std::string_view unit);

}  // namespace stagegate::stats
