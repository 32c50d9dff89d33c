#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "load/schedule.h"

namespace stagegate::load {

/// The longest prompt or answer a trace entry may ask for, in tokens, and the latest timestamp
/// (one week, in milliseconds): larger values only exhaust memory or overflow a schedule.
inline constexpr int64_t kMaxTraceTokens = 1'000'000;
inline constexpr double kMaxTraceMs = 604'800'000;

/// One request of a recorded trace (the Mooncake / "timestamp, input_length, output_length"
/// format).
struct TraceEntry {
  double timestamp_ms = 0;  // when it arrived, in ms from any fixed origin
  int64_t input_length = 0;
  int64_t output_length = 0;
  std::vector<int64_t> hash_ids;  // prompt-prefix block ids, when the trace has them

  bool operator==(const TraceEntry&) const = default;
};

/// The most bad lines LoadTrace lists before it summarises the rest.
inline constexpr int kMaxTraceErrors = 20;

/// Reads a JSONL trace: one JSON object a line with `timestamp` (a number >= 0, in ms),
/// `input_length` and `output_length` (integers > 0), and optionally `hash_ids` (an array of
/// integers), which are kept. Other keys are ignored; blank lines are skipped; a line may end in
/// CRLF. The entries are sorted by timestamp, stably, so lines with equal timestamps keep their
/// order and the file need not be sorted.
///
/// Errors: NotFound / IoError from reading the file. Otherwise every problem of every line in one
/// InvalidInput Status, one a line, each as "path:line: message" (a JSON syntax error as
/// "path:line:column: not JSON: <the parser's message>"), lines counted from 1. Past
/// kMaxTraceErrors problems the rest are summarised in a last line. A trace with no entry is an
/// error.
Result<std::vector<TraceEntry>> LoadTrace(const std::string& path);

struct TraceScheduleOptions {
  double speedup = 1;                // > 0; 2 replays twice as fast
  std::optional<int64_t> requests;   // at most the first this many entries
  std::optional<double> duration_s;  // only entries whose intended time is < duration_s
  Shard shard;
};

/// The replay schedule of `trace`, which must be sorted by timestamp as LoadTrace returns it:
/// entry i gets sequence i (so trace[sequence] is its entry) and intended_ns =
/// (timestamp_ms - trace[0].timestamp_ms) / speedup, in ns, rounded. The shard keeps the entries
/// whose sequence % count == index. InvalidInput, one problem a line, for an empty or unsorted
/// trace, speedup <= 0, requests < 1, duration_s <= 0 or a shard out of range.
Result<std::vector<Arrival>> BuildTraceSchedule(const std::vector<TraceEntry>& trace,
                                                const TraceScheduleOptions& options);

/// A trace replayed at a mean of `rate` requests a second, looped as often as `requests` or
/// `duration_s` need (a scenario's open-loop phase whose input is a trace): the timestamps are
/// scaled by rate / the trace's own mean rate ((entries - 1) / its span), so the replay keeps the
/// trace's bursts and gaps; each pass starts one mean gap after the last entry of the pass
/// before. Sequence n is entry n % size. At most `requests` arrivals, and only those intended
/// before `duration_s`. InvalidInput for an empty or unsorted trace, a trace of several entries
/// that all share one timestamp (it has no rate), rate <= 0, neither requests nor duration_s, or
/// more than kMaxArrivals arrivals.
Result<std::vector<Arrival>> BuildTraceReplay(const std::vector<TraceEntry>& trace, double rate,
                                              std::optional<int64_t> requests,
                                              std::optional<double> duration_s);

}  // namespace stagegate::load
