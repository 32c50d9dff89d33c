#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "load/request_record.h"
#include "stats/summary.h"

namespace stagegate::load {

/// A service-level objective on one per-request metric: the request meets it when the metric is
/// at most `max_ms`. Metrics: ttft_ms, ttst_ms, tpot_ms, itl_ms (every gap of the request),
/// e2e_ms, corrected_ms.
struct Slo {
  std::string metric;
  double max_ms = 0;

  bool operator==(const Slo&) const = default;
};

/// One completed request's latency figures, in ms.
struct RequestLatency {
  std::optional<double> ttft, ttst, tpot, max_itl;  // absent when the request cannot have them
  double e2e = 0, corrected = 0;
};

/// The latencies of a request that completed: it has sent_ns and end_ns (a programmer error
/// otherwise). TPOT is (e2e - TTFT) / (output tokens - 1), for answers of two tokens or more.
RequestLatency LatencyOf(const RequestRecord& r);

/// Whether `l` meets every one of `slos` (none: true). A metric the request cannot have (TTFT of
/// an unstreamed answer) is not met: goodput never credits what was not measured.
bool MeetsSlos(const RequestLatency& l, const std::vector<Slo>& slos);

/// Parses `--slo ttft_ms:500,e2e_ms:4000`. Errors name the part and list the known metrics.
Result<std::vector<Slo>> ParseSlos(std::string_view text);

/// Everything DESIGN.md's metric table defines, for the measured (non-warmup) requests of one
/// phase or level. Latencies in ms. Distributions of latency are over requests that completed ok;
/// schedule lag and queue time are over every request that was sent.
struct PhaseMetrics {
  stats::Summary ttft_ms, ttst_ms, itl_ms, tpot_ms, e2e_ms, corrected_ms, schedule_lag_ms, queue_ms,
      input_tokens, output_tokens, output_tokens_per_s;
  int64_t offered = 0;  // measured requests in the schedule (sent, dropped or cancelled)
  int64_t sent = 0;
  int64_t completed = 0;                    // outcome ok
  int64_t warmup = 0;                       // left out
  std::map<std::string, int64_t> outcomes;  // every outcome name, zeros included
  int64_t met_slos = 0;
  double window_s = 0;                 // first measured send to last measured end
  double request_throughput = 0;       // completed / window
  double output_token_throughput = 0;  // output tokens of completed requests / window
  double goodput = 0;                  // completed requests meeting every SLO / window
  double completion_rate = 0;          // completed / offered
  double achieved_rate = 0;            // (sent - 1) / (last send - first send)
  int64_t usage_tokens = 0;            // completed requests whose output count came from usage
  int64_t counted_tokens = 0;          // ... from counted content events
  int64_t tokenizer_tokens = 0;        // ... counted with the model's tokenizer
  int64_t length_mismatches = 0;       // completed with output tokens != requested
  int64_t requested_length = 0;        // completed requests that asked for a length
  int64_t streamed = 0, not_streamed = 0;
  std::vector<std::string> warnings;  // plain sentences for the console and the report
};

PhaseMetrics ComputeMetrics(std::span<const RequestRecord> records, const std::vector<Slo>& slos);

/// {"requests": {...counts}, "throughput": {...}, "metrics": {"ttft_ms": summary, ...},
/// "warnings": [...]}: the shape profile.json and run.json use.
nlohmann::json MetricsToJson(const PhaseMetrics& metrics);

/// The names and summaries in table order, for writers that print rows.
std::vector<std::pair<std::string, const stats::Summary*>> NamedSummaries(
    const PhaseMetrics& metrics);

}  // namespace stagegate::load
