#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace stagegate::telemetry {

/// One sample line of an exposition.
struct Sample {
  std::string name;  // metric name, e.g. vllm:num_requests_running or ..._bucket
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written, unescaped
  double value = 0;                                         // NaN, +Inf and -Inf included
  std::optional<int64_t> timestamp_ms;                      // the optional trailing timestamp

  bool operator==(const Sample&) const = default;  // false for NaN values, as for doubles
};

/// What the HELP and TYPE lines say of a metric.
struct MetricFamily {
  std::string name;
  std::string type;  // counter, gauge, histogram, summary or untyped; "" when only HELP was given
  std::string help;  // unescaped

  bool operator==(const MetricFamily&) const = default;
};

struct Exposition {
  std::vector<Sample> samples;         // in the order written
  std::vector<MetricFamily> families;  // in the order first named by a HELP or TYPE line
};

/// Parse errors listed in full; the rest are counted in a last line.
inline constexpr int kMaxPrometheusErrors = 10;

/// Parses a whole exposition in the Prometheus text format 0.0.4. Lines end in LF or CRLF, the
/// last one maybe in neither. Every bad line is reported (one problem each, the first
/// kMaxPrometheusErrors in full) as "line 7, column 12: expected '=' after label name", lines
/// joined by "\n", columns counted in bytes from 1; a failed parse returns no samples.
Result<Exposition> ParsePrometheusText(std::string_view text);

/// The value of the first sample called `name` whose labels include every pair in `labels`.
std::optional<double> FindValue(
    const Exposition& exposition, std::string_view name,
    const std::vector<std::pair<std::string, std::string>>& labels = {});

}  // namespace stagegate::telemetry
