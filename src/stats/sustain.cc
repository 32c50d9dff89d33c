#include "stats/sustain.h"

#include <algorithm>
#include <cmath>

#include "base/strings.h"
#include "stats/summary.h"

namespace stagegate::stats {
namespace {

// Fewer intervals than this give a slope interval too wide to say anything.
constexpr size_t kMinIntervals = 8;
// Intervals per span the latency series aims for, and the narrowest interval.
constexpr double kTargetIntervals = 20;
constexpr double kMinIntervalS = 0.5;
// Requests an interval should hold on average, so its median means something.
constexpr double kRequestsPerInterval = 3;
// Arrivals the pace check needs in its span.
constexpr int64_t kMinPaceArrivals = 20;

// Rising, settled or undecided, from the trend of `y` over `x` in [from_s, from_s + span_s].
void Classify(TrendCheck& check, const std::vector<double>& x, const std::vector<double>& y,
              double floor, double confidence) {
  check.intervals = x.size();
  if (x.size() < kMinIntervals) return;
  check.baseline = *Median(y);  // at least kMinIntervals values
  check.tolerance = std::max(floor, 0.25 * check.baseline);
  check.trend = TheilSen(x, y, confidence);
  if (!check.trend) return;
  const Trend& t = *check.trend;
  if (t.interval.low > 0 && t.slope * check.span_s > check.tolerance)
    check.state = TrendState::kRising;
  else if (t.interval.high * check.span_s <= check.tolerance)
    check.state = TrendState::kSettled;
}

PaceCheck CheckPace(std::span<const LevelRequest> requests, const SustainOptions& options) {
  PaceCheck pace;
  // The fill time: how long the level's first fifth took to end (the longest, so that almost
  // no request of a level that keeps pace takes longer); a request still in flight counts as
  // ending at the end of the window.
  std::vector<const LevelRequest*> by_intended;
  for (const LevelRequest& r : requests)
    by_intended.push_back(&r);
  std::sort(
      by_intended.begin(), by_intended.end(),
      [](const LevelRequest* a, const LevelRequest* b) { return a->intended_s < b->intended_s; });
  const size_t first = std::min(by_intended.size(), std::max<size_t>(10, by_intended.size() / 5));
  std::vector<double> took;
  for (size_t i = 0; i < first; ++i) {
    const LevelRequest& r = *by_intended[i];
    took.push_back(std::max(0.0, r.done_s.value_or(options.window_s) - r.intended_s));
  }
  pace.fill_s = took.empty() ? options.window_s : *std::max_element(took.begin(), took.end());
  pace.span_s = std::max(0.0, options.window_s - pace.fill_s);
  // Of the requests that arrived in [0, window - fill], those completed by the end of the
  // window: each had at least the fill time to end.
  for (const LevelRequest& r : requests) {
    if (r.intended_s > pace.span_s) continue;
    ++pace.arrived;
    if (!r.completed || !r.done_s || *r.done_s > options.window_s) continue;
    ++pace.completed;
    if (!r.answered) continue;
    ++pace.answered;
    pace.met_slos += r.met_slos ? 1 : 0;
    pace.output_tokens += r.output_tokens;
  }
  pace.decided =
      pace.span_s > 0 && pace.span_s >= options.window_s / 2 && pace.arrived >= kMinPaceArrivals;
  if (pace.span_s > 0) {
    pace.arriving_rate = static_cast<double>(pace.arrived) / pace.span_s;
    pace.completed_rate = static_cast<double>(pace.completed) / pace.span_s;
  }
  if (pace.arrived > 0)
    pace.share = static_cast<double>(pace.completed) / static_cast<double>(pace.arrived);
  // A request or two that took longer than the fill time is the edge of the span, not a queue.
  pace.kept_pace = pace.share >= options.min_share || pace.arrived - pace.completed <= 2;
  return pace;
}

TrendCheck CheckLatency(std::span<const LevelRequest> requests, double from_s,
                        const SustainOptions& options) {
  TrendCheck check{.from_s = from_s, .span_s = std::max(0.0, options.window_s - from_s)};
  int64_t in_span = 0;
  for (const LevelRequest& r : requests)
    if (r.wait_s && r.intended_s >= from_s && r.intended_s <= options.window_s) ++in_span;
  if (check.span_s <= 0 || in_span == 0) return check;
  const double rate = static_cast<double>(in_span) / check.span_s;
  check.interval_s =
      std::max({kMinIntervalS, check.span_s / kTargetIntervals, kRequestsPerInterval / rate});
  const auto count = static_cast<size_t>(std::floor(check.span_s / check.interval_s));
  if (count == 0) return check;
  std::vector<std::vector<double>> waits(count);
  for (const LevelRequest& r : requests) {
    if (!r.wait_s || r.intended_s < from_s) continue;
    const auto index = static_cast<size_t>((r.intended_s - from_s) / check.interval_s);
    if (index < count) waits[index].push_back(*r.wait_s);
  }
  std::vector<double> x, y;
  for (size_t i = 0; i < count; ++i) {
    if (waits[i].empty()) continue;
    x.push_back(from_s + (static_cast<double>(i) + 0.5) * check.interval_s);
    y.push_back(*Median(std::move(waits[i])));
  }
  Classify(check, x, y, 0.050, options.confidence);
  return check;
}

TrendCheck CheckQueue(std::span<const QueueSample> queue, double from_s,
                      const SustainOptions& options) {
  TrendCheck check{.from_s = from_s, .span_s = std::max(0.0, options.window_s - from_s)};
  std::vector<double> x, y;
  for (const QueueSample& s : queue)
    if (s.t_s >= from_s && s.t_s <= options.window_s && std::isfinite(s.waiting)) {
      x.push_back(s.t_s);
      y.push_back(s.waiting);
    }
  Classify(check, x, y, 2.0, options.confidence);
  return check;
}

}  // namespace

std::string DescribeRise(const TrendCheck& check, const std::string& name, bool queue) {
  if (!check.trend) return name + " trend unknown";
  const double slope = check.trend->slope;
  if (queue) return name + " rising " + FormatNumber(slope, 2) + " requests/s";
  return name + " rising " + FormatNumber(slope * 1000, slope * 1000 >= 10 ? 0 : 1) + " ms/s";
}

SustainFinding JudgeSustained(std::span<const LevelRequest> requests,
                              std::span<const QueueSample> queue, const SustainOptions& options) {
  SustainFinding f;
  for (const LevelRequest& r : requests)
    f.completed += r.completed && r.done_s ? 1 : 0;

  double from_s = 0;
  if (options.open_loop) {
    f.pace = CheckPace(requests, options);
    from_s = std::min(f.pace->fill_s, options.window_s);
    if (!f.pace->decided)
      f.unknowns.push_back("too short to tell whether completions keep pace (" +
                           std::to_string(f.pace->arrived) + " arrivals in the " +
                           FormatNumber(f.pace->span_s, 1) + " s that had " +
                           FormatNumber(f.pace->fill_s, 1) + " s to end)");
    else if (!f.pace->kept_pace)
      f.failures.push_back("completed " + FormatNumber(f.pace->completed_rate, 1) + " of " +
                           FormatNumber(f.pace->arriving_rate, 1) + " req/s");
  }

  f.latency = CheckLatency(requests, from_s, options);
  if (f.latency.state == TrendState::kRising) {
    f.failures.push_back(DescribeRise(f.latency, options.latency_name, false));
  } else if (f.latency.state == TrendState::kUndecided) {
    if (!f.latency.trend)
      f.unknowns.push_back("too short to tell whether " + options.latency_name + " settles (" +
                           std::to_string(f.latency.intervals) + " intervals with requests, " +
                           std::to_string(kMinIntervals) + " needed)");
    else
      f.unknowns.push_back(options.latency_name +
                           " trend unclear: " + FormatNumber(f.latency.trend->slope * 1000, 1) +
                           " ms/s (" + FormatNumber(options.confidence * 100, 0) + "% interval " +
                           FormatNumber(f.latency.trend->interval.low * 1000, 1) + " to " +
                           FormatNumber(f.latency.trend->interval.high * 1000, 1) +
                           ") against a tolerance of " +
                           FormatNumber(f.latency.tolerance * 1000, 0) + " ms over " +
                           FormatNumber(f.latency.span_s, 1) + " s");
  }

  if (!queue.empty()) {
    f.queue = CheckQueue(queue, from_s, options);
    // A second witness: it can show a queue that grows, not stand in for the latency's trend.
    if (f.queue->state == TrendState::kRising)
      f.failures.push_back(DescribeRise(*f.queue, "server queue", true));
  }

  if (f.completed < options.min_completed)
    f.unknowns.push_back("too short to tell: " + std::to_string(f.completed) + " of the " +
                         std::to_string(options.min_completed) +
                         " completed requests a level needs");
  f.verdict = !f.failures.empty()   ? Sustained::kNo
              : !f.unknowns.empty() ? Sustained::kUndecided
                                    : Sustained::kYes;
  return f;
}

}  // namespace stagegate::stats
