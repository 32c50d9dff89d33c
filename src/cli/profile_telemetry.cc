#include "cli/profile_telemetry.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/clock.h"
#include "base/redact.h"
#include "base/strings.h"
#include "http/url_check.h"
#include "report/server_series.h"
#include "telemetry/series.h"

namespace stagegate::cli {
namespace {

using json = nlohmann::json;

// The level whose window holds `t_ns`, if any.
const LevelWindow* LevelAt(const std::vector<LevelWindow>& levels, int64_t t_ns) {
  for (const LevelWindow& level : levels)
    if (t_ns >= level.started_ns && t_ns <= level.ended_ns) return &level;
  return nullptr;
}

std::string LabelsJson(const telemetry::Sample& sample) {
  json labels = json::object();
  for (const auto& [name, value] : sample.labels)
    labels[name] = value;
  return labels.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::vector<std::string> CheckTelemetryOptions(const ProfileTelemetryOptions& options) {
  std::vector<std::string> problems;
  if (!options.metrics_url.empty())
    if (Status url = http::CheckHttpUrl(options.metrics_url); !url.ok())
      problems.push_back("--metrics-url: " + url.message());
  const std::vector<std::string>& gpu = options.gpu;
  if (gpu.empty() || (gpu[0] != "auto" && gpu[0] != "off" && gpu[0] != "dcgm"))
    problems.push_back("--gpu: give auto, off, or dcgm URL");
  else if (gpu[0] == "dcgm" && gpu.size() != 2)
    problems.push_back("--gpu dcgm: give the DCGM exporter's metrics URL after it");
  else if (gpu[0] != "dcgm" && gpu.size() != 1)
    problems.push_back("--gpu " + gpu[0] + ": takes no URL");
  else if (gpu[0] == "dcgm")
    if (Status url = http::CheckHttpUrl(gpu[1]); !url.ok())
      problems.push_back("--gpu dcgm: " + url.message());
  if (options.interval_ms < 1) problems.push_back("--scrape-interval-ms: must be at least 1");
  return problems;
}

Result<json> ServerMetricsJson(const std::vector<scenario::TelemetrySource>& telemetry,
                               const std::vector<LevelWindow>& levels, store::Store& store,
                               const std::string& run_id) {
  json sources = json::array();
  for (const scenario::TelemetrySource& s : telemetry)
    sources.push_back({{"source", s.source},
                       {"url", s.url},
                       {"scrapes", s.scrapes},
                       {"failures", s.failures},
                       {"last_error", s.last_error}});
  // Per level and canonical series, as the report reads them (report::ReadServerSeries): each
  // scrape's value, then their mean and peak.
  json per_level = json::array();
  for (const LevelWindow& level : levels) {
    Result<std::map<telemetry::Series, report::SeriesValues>> read =
        report::ReadServerSeries(store, run_id, level.started_ns, level.ended_ns);
    if (!read.ok()) return read.status();
    json series = json::object();
    for (const auto& [name, values] : *read) {
      double sum = 0, peak = values.front().second;
      for (const auto& [t, v] : values) {
        sum += v;
        peak = std::max(peak, v);
      }
      series[std::string(telemetry::Name(name))] = {
          {"scrapes", values.size()},
          {"mean", sum / static_cast<double>(values.size())},
          {"max", peak}};
    }
    per_level.push_back({{"kind", level.kind},
                         {"value", level.value},
                         {"started_ns", level.started_ns},
                         {"ended_ns", level.ended_ns},
                         {"series", series}});
  }
  return json{{"sources", sources}, {"levels", per_level}};
}

std::string ServerMetricsCsv(const std::vector<telemetry::TimedSample>& samples,
                             const std::vector<LevelWindow>& levels) {
  std::string out = "t_ns,level,source,series,labels,value,canonical,canonical_value\n";
  for (const telemetry::TimedSample& t : samples) {
    const LevelWindow* level = LevelAt(levels, t.t_ns);
    const std::optional<telemetry::VendorName> v = telemetry::Recognise(t.sample.name);
    out += std::to_string(t.t_ns) + "," +
           (level ? CsvField(level->kind + "=" + FormatNumber(level->value)) : "") + "," +
           CsvField(t.source) + "," + CsvField(t.sample.name) + "," +
           CsvField(LabelsJson(t.sample)) + "," + FormatNumber(t.sample.value, 6) + "," +
           (v ? CsvField(std::string(telemetry::Name(v->series))) : "") + "," +
           (v ? FormatNumber(t.sample.value * v->scale, 6) : "") + "\n";
  }
  return out;
}

}  // namespace stagegate::cli
