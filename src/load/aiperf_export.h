#pragma once

// The aggregate statistics of one level or phase in AIPerf's layout: profile_export_aiperf.json
// and profile_export_aiperf.csv, with AIPerf's metric names, stats keys and units, so that
// dashboards and notebooks written for AIPerf and GenAI-Perf read stagegate's measurements.
// docs/metrics.md maps every metric; note that AIPerf's inter_token_latency is stagegate's TPOT
// and AIPerf's inter_chunk_latency is stagegate's ITL.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "base/status.h"
#include "load/metrics.h"
#include "load/request_record.h"

namespace stagegate::load {

struct AiperfExportInput {
  /// The records of one level or phase; warmup records are left out, as everywhere.
  std::span<const RequestRecord> records;
  std::vector<Slo> slos;  // goodput and good_request_count are null without them
  /// Wall-clock ns since the Unix epoch at the run's origin (record time 0), for start and end.
  int64_t wall_origin_ns = 0;
  bool interrupted = false;  // AIPerf's was_cancelled
  /// AIPerf's input_config: endpoint, input, loadgen and cli_command as stagegate ran them. No
  /// header, key or credential belongs here.
  nlohmann::json input_config = nlohmann::json::object();
  /// Under the key "stagegate": which run, level and token sources these figures come from.
  nlohmann::json stagegate = nlohmann::json::object();
};

/// profile_export_aiperf.json. Record metrics (a distribution each: unit, avg, p1..p99, min,
/// max, std; population std and numpy's linear percentiles, as AIPerf computes them) appear only
/// when some completed request has them: a run without streaming has no time_to_first_token.
/// Summary metrics carry only unit and avg, as AIPerf writes them. Over the completed requests:
/// request_latency, time_to_first_token, time_to_second_token, inter_token_latency (TPOT),
/// inter_chunk_latency (every gap), output_token_throughput_per_user (1 / TPOT in seconds),
/// output_sequence_length, input_sequence_length. Errors: requests sent that did not complete,
/// grouped by HTTP status (null without one) and stagegate outcome, with the first message.
nlohmann::json AiperfJson(const AiperfExportInput& input);

/// profile_export_aiperf.csv from AiperfJson's object: the distributions ("Metric,avg,min,max,
/// p1,...,p99,std", one row each, "Time to First Token (ms)"), a blank line, then the summary
/// metrics ("Metric,Value"). Values have two decimals, as AIPerf writes them.
std::string AiperfCsv(const nlohmann::json& aiperf);

/// Writes profile_export_aiperf.json and profile_export_aiperf.csv into `dir`, creating it, each
/// through a temporary file renamed at the end.
Status WriteAiperfExport(const std::string& dir, const AiperfExportInput& input);

}  // namespace stagegate::load
