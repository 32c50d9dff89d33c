#include "load/aiperf_export.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "base/clock.h"
#include "base/files.h"
#include "base/strings.h"
#include "stats/summary.h"

namespace stagegate::load {
namespace {

using json = nlohmann::json;

struct MetricName {
  const char* tag;     // AIPerf's key
  const char* header;  // AIPerf's display name, the CSV's first column
  const char* unit;
};

// Record metrics, in the order the CSV lists them.
constexpr MetricName kDistributions[] = {
    {"request_latency", "Request Latency", "ms"},
    {"time_to_first_token", "Time to First Token", "ms"},
    {"time_to_second_token", "Time to Second Token", "ms"},
    {"inter_token_latency", "Inter Token Latency", "ms"},
    {"inter_chunk_latency", "Inter Chunk Latency", "ms"},
    {"output_token_throughput_per_user", "Output Token Throughput Per User", "tokens/sec/user"},
    {"output_sequence_length", "Output Sequence Length", "tokens"},
    {"input_sequence_length", "Input Sequence Length", "tokens"},
};

// Single-value metrics, in the order the CSV lists them.
constexpr MetricName kSummaries[] = {
    {"benchmark_duration", "Benchmark Duration", "sec"},
    {"request_throughput", "Request Throughput", "requests/sec"},
    {"request_count", "Request Count", "requests"},
    {"error_request_count", "Error Request Count", "requests"},
    {"good_request_count", "Good Request Count", "requests"},
    {"goodput", "Goodput", "requests/sec"},
    {"output_token_throughput", "Output Token Throughput", "tokens/sec"},
    {"total_isl", "Total Input Sequence Length", "tokens"},
    {"total_osl", "Total Output Sequence Length", "tokens"},
    {"total_error_isl", "Total Error Input Sequence Length", "tokens"},
};

json Distribution(const char* unit, const stats::Summary& s) {
  json out = {{"unit", unit}, {"avg", s.mean}};
  for (size_t i = 0; i < stats::kPercentiles.size(); ++i)
    out["p" + FormatNumber(stats::kPercentiles[i])] = s.percentiles[i];
  out["min"] = s.min;
  out["max"] = s.max;
  out["std"] = s.std;
  return out;
}

json Single(const char* unit, double value) {
  return {{"unit", unit}, {"avg", value}};
}

// "2026-12-01T23:44:47.123456", UTC, with microseconds: AIPerf's ISO 8601 layout.
std::string IsoTime(int64_t unix_ns) {
  char micros[16];
  std::snprintf(micros, sizeof micros, ".%06lld",
                static_cast<long long>((unix_ns % 1'000'000'000) / 1000));
  return FormatUtc(unix_ns / 1'000'000'000, "%Y-%m-%dT%H:%M:%S") + micros;
}

// What AIPerf reports beyond PhaseMetrics, from one pass over the records sent (warmup aside).
struct Tally {
  std::vector<double> per_user, error_isl;
  double total_isl = 0, total_osl = 0, total_error_isl = 0;
  int64_t errors = 0;
  int64_t first_send = std::numeric_limits<int64_t>::max(), last_end = 0;
  // (status, outcome) -> (first message, count), in the order first seen.
  std::map<std::pair<int64_t, std::string>, std::pair<std::string, int64_t>> error_groups;
  std::vector<std::pair<int64_t, std::string>> error_order;
};

// Tallies the records that were sent, warmup aside.
Tally TallyRecords(std::span<const RequestRecord> records) {
  Tally t;
  for (const RequestRecord& r : records) {
    if (r.warmup || !r.sent_ns) continue;
    t.first_send = std::min(t.first_send, *r.sent_ns);
    if (r.end_ns) t.last_end = std::max(t.last_end, *r.end_ns);
    if (r.outcome == Outcome::kOk && r.end_ns) {
      if (const std::optional<double> tpot = LatencyOf(r).tpot; tpot && *tpot > 0)
        t.per_user.push_back(1000.0 / *tpot);
      if (r.input_tokens) t.total_isl += static_cast<double>(*r.input_tokens);
      if (r.output_tokens) t.total_osl += static_cast<double>(*r.output_tokens);
      continue;
    }
    ++t.errors;
    const std::optional<int64_t> isl = r.input_tokens ? r.input_tokens : r.requested_input_tokens;
    if (isl) {
      t.error_isl.push_back(static_cast<double>(*isl));
      t.total_error_isl += static_cast<double>(*isl);
    }
    const std::pair<int64_t, std::string> key{r.http_status.value_or(-1),
                                              std::string(OutcomeName(r.outcome))};
    auto [group, added] = t.error_groups.try_emplace(key, r.error_message, 0);
    if (added) t.error_order.push_back(key);
    ++group->second.second;
  }
  return t;
}

// Adds the record metrics that have values, in kDistributions' order; `per_user` is the output
// token throughput per user.
void AddDistributions(const PhaseMetrics& m, const stats::Summary& per_user, json& out) {
  const stats::Summary* distributions[] = {&m.e2e_ms,        &m.ttft_ms,     &m.ttst_ms,
                                           &m.tpot_ms,       &m.itl_ms,      &per_user,
                                           &m.output_tokens, &m.input_tokens};
  static_assert(std::size(distributions) == std::size(kDistributions));
  for (size_t i = 0; i < std::size(kDistributions); ++i)
    if (distributions[i]->count > 0)
      out[kDistributions[i].tag] = Distribution(kDistributions[i].unit, *distributions[i]);
}

// Adds the single-value metrics, in kSummaries' order, null where AIPerf writes null (no errors;
// no SLOs unless `judged`), and the errors' input lengths, which it takes from `t`.
void AddSummaries(const PhaseMetrics& m, bool judged, Tally& t, json& out) {
  const stats::Summary isl = stats::Summarize(std::move(t.error_isl));
  const std::optional<double> singles[] = {
      m.window_s,
      m.request_throughput,
      static_cast<double>(m.completed),
      t.errors > 0 ? std::optional<double>(static_cast<double>(t.errors)) : std::nullopt,
      judged ? std::optional<double>(static_cast<double>(m.met_slos)) : std::nullopt,
      judged ? std::optional<double>(m.goodput) : std::nullopt,
      m.output_token_throughput,
      t.total_isl,
      t.total_osl,
      isl.count > 0 ? std::optional<double>(t.total_error_isl) : std::nullopt};
  static_assert(std::size(singles) == std::size(kSummaries));
  for (size_t i = 0; i < std::size(kSummaries); ++i)
    out[kSummaries[i].tag] = singles[i] ? Single(kSummaries[i].unit, *singles[i]) : json(nullptr);
  out["error_isl"] = isl.count > 0 ? Distribution("tokens", isl) : json(nullptr);
}

// AIPerf's error_summary: each (status, outcome) with its first message and count, in the order
// first seen.
json ErrorSummary(const Tally& t) {
  json summary = json::array();
  for (const auto& key : t.error_order) {
    const auto& [message, count] = t.error_groups.at(key);
    summary.push_back({{"error_details",
                        {{"code", key.first >= 0 ? json(key.first) : json(nullptr)},
                         {"type", key.second},
                         {"message", message}}},
                       {"count", count}});
  }
  return summary;
}

}  // namespace

json AiperfJson(const AiperfExportInput& input) {
  const PhaseMetrics m = ComputeMetrics(input.records, input.slos);
  Tally tally = TallyRecords(input.records);
  json out = json::object();
  AddDistributions(m, stats::Summarize(std::move(tally.per_user)), out);
  AddSummaries(m, !input.slos.empty(), tally, out);
  out["was_cancelled"] = input.interrupted;
  const bool sent_any = tally.first_send != std::numeric_limits<int64_t>::max();
  out["start_time"] =
      sent_any ? json(IsoTime(input.wall_origin_ns + tally.first_send)) : json(nullptr);
  out["end_time"] =
      sent_any ? json(IsoTime(input.wall_origin_ns + std::max(tally.last_end, tally.first_send)))
               : json(nullptr);
  out["error_summary"] = ErrorSummary(tally);
  out["input_config"] = input.input_config;
  out["stagegate"] = input.stagegate;
  return out;
}

std::string AiperfCsv(const json& aiperf) {
  const auto number = [](const json& value) {
    if (!value.is_number()) return std::string();
    char text[64];
    std::snprintf(text, sizeof text, "%.2f", value.get<double>());
    return std::string(text);
  };
  const auto label = [](const MetricName& name) {
    // AIPerf writes a count without its unit: "Request Count".
    return std::string(name.header) +
           (std::string_view(name.unit) == "requests" ? "" : " (" + std::string(name.unit) + ")");
  };
  std::string csv = "Metric,avg,min,max";
  for (double p : stats::kPercentiles)
    csv += ",p" + FormatNumber(p);
  csv += ",std\n";
  for (const MetricName& name : kDistributions) {
    if (!aiperf.contains(name.tag) || !aiperf[name.tag].is_object()) continue;
    const json& d = aiperf[name.tag];
    csv += CsvField(label(name));
    for (const char* key : {"avg", "min", "max"})
      csv += "," + number(d.value(key, json()));
    for (double p : stats::kPercentiles)
      csv += "," + number(d.value("p" + FormatNumber(p), json()));
    csv += "," + number(d.value("std", json())) + "\n";
  }
  csv += "\nMetric,Value\n";
  for (const MetricName& name : kSummaries) {
    if (!aiperf.contains(name.tag) || !aiperf[name.tag].is_object()) continue;
    csv += CsvField(label(name)) + "," + number(aiperf[name.tag].value("avg", json())) + "\n";
  }
  return csv;
}

Status WriteAiperfExport(const std::string& dir, const AiperfExportInput& input) {
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return Status::IoError(dir + ": " + made.message());
  const nlohmann::json aiperf = AiperfJson(input);
  SG_RETURN_IF_ERROR(WriteFileAtomically(
      dir + "/profile_export_aiperf.json",
      aiperf.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  return WriteFileAtomically(dir + "/profile_export_aiperf.csv", AiperfCsv(aiperf));
}

}  // namespace stagegate::load
