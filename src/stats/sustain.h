#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stats/trend.h"

namespace stagegate::stats {

/// One request of a load level, for the sustained-load checks. Times in seconds from the
/// level's start (its schedule's time zero).
struct LevelRequest {
  double intended_s = 0;         // when the schedule said it should go
  std::optional<double> done_s;  // when it ended; nullopt while still in flight
  bool completed = false;        // ended ok, or with a denial the corpus expects
  bool answered = false;         // ended ok: an answer, not a denial
  bool met_slos = false;         // answered within every SLO (goodput counts these)
  double output_tokens = 0;      // of the answer
  /// Time to the first token (or to the end, for an answer without tokens) from the intended
  /// send. For a request cut off, timed out or still waiting, a lower bound: the time it waited.
  /// nullopt leaves it out of the latency trend (shed, refused, failed fast).
  std::optional<double> wait_s;
};

/// The server's own count of waiting requests (num_requests_waiting) at `t_s`, level time.
struct QueueSample {
  double t_s = 0;
  double waiting = 0;
};

struct SustainOptions {
  bool open_loop = true;  // a closed loop's arrivals follow its completions: no pace to keep
  double window_s = 0;    // arrivals were scheduled in [0, window_s] (or up to now, while running)
  double min_share = 0.95;            // completions must reach this share of arrivals
  int64_t min_completed = 30;         // fewer completed requests cannot tell
  double confidence = 0.90;           // of the slope intervals: each side is a one-sided 95% bound
  std::string latency_name = "TTFT";  // what wait_s is, in sentences
};

/// Whether a series trends upward through the level.
enum class TrendState { kSettled, kRising, kUndecided };

/// Completions against arrivals over the level's arrival window: of the requests that arrived in
/// [0, window_s - fill_s], how many completed by window_s. A level that keeps pace completes
/// nearly all of them, since each had the fill time to end; one that falls behind leaves a
/// growing queue of them unfinished.
struct PaceCheck {
  /// How long the level's first fifth took to end (intended send to end), the longest: when the
  /// pipeline has filled, and how long each request counted gets to end. The latency trend
  /// starts there.
  double fill_s = 0;
  double span_s = 0;                             // window_s - fill_s
  int64_t arrived = 0;                           // in [0, span_s]
  int64_t completed = 0;                         // of those, completed by window_s
  double arriving_rate = 0, completed_rate = 0;  // per second over span_s
  double share = 0;                              // completed / arrived
  /// Of the `completed`: the answers (the rest are denials the corpus expects), those that met
  /// every SLO, and their output tokens. Divided by span_s, they are the level's answered rate,
  /// goodput and output token rate, on the same window and counts as completed_rate.
  int64_t answered = 0, met_slos = 0;
  double output_tokens = 0;
  bool decided = false;    // long enough: span_s >= window_s / 2 and >= 20 arrivals in it
  bool kept_pace = false;  // share >= min_share, or at most 2 requests short
};

/// The Theil–Sen trend of per-interval medians (latency in s, or queue depth) through the level
/// past `from_s` (the pace check's fill_s), and what it says against `tolerance`: rising when the
/// interval's lower end is above zero and the rise over the span (slope x span) exceeds the
/// tolerance; settled when even the interval's upper end gives a rise within it.
struct TrendCheck {
  std::optional<Trend> trend;  // nullopt: too few intervals
  double from_s = 0, span_s = 0;
  double interval_s = 0;  // the width of each interval (latency) or 0 (queue: one sample each)
  size_t intervals = 0;
  double baseline = 0;   // median of the interval medians
  double tolerance = 0;  // max(50 ms, 25% of the baseline); queue: max(2, 25% of the baseline)
  TrendState state = TrendState::kUndecided;
};

enum class Sustained { kYes, kNo, kUndecided };

struct SustainFinding {
  Sustained verdict = Sustained::kUndecided;
  int64_t completed = 0;
  std::optional<PaceCheck> pace;  // open loop only
  TrendCheck latency;
  std::optional<TrendCheck> queue;    // when the server's queue depth was scraped
  std::vector<std::string> failures;  // "completed 11.8 of 16 req/s", "TTFT rising 160 ms/s"
  std::vector<std::string> unknowns;  // why it cannot tell yet
};

/// Judges whether a level was sustained: completions kept pace with arrivals (open loop), and
/// neither latency nor the server's queue trended upward. kNo when any check fails; otherwise
/// kUndecided when any cannot tell (too few requests, too short a span, an unclear trend);
/// otherwise kYes. Plain values in, plain values out.
SustainFinding JudgeSustained(std::span<const LevelRequest> requests,
                              std::span<const QueueSample> queue, const SustainOptions& options);

/// "TTFT rising 160 ms/s", "server queue rising 1.3 requests/s": a rising trend in a sentence.
std::string DescribeRise(const TrendCheck& check, const std::string& name, bool queue);

}  // namespace stagegate::stats
