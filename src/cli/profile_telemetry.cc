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

ProfileTelemetry::ProfileTelemetry(const ProfileTelemetryOptions& options, int64_t origin_ns,
                                   std::vector<std::string>& notes) {
  const auto add = [&](std::string source, std::string url,
                       std::unique_ptr<telemetry::Scraper> scraper) {
    sources_.push_back({std::move(source), std::move(url), std::move(scraper), {}});
    sources_.back().scraper->Start();
  };
  const auto scrape = [&](const std::string& source, const std::string& url) {
    add(source, UrlWithoutUserinfo(url),
        std::make_unique<telemetry::Scraper>(url, source, options.interval_ms, origin_ns));
  };
  if (!options.metrics_url.empty()) scrape("metrics", options.metrics_url);
  if (options.gpu.size() == 2 && options.gpu[0] == "dcgm") scrape("dcgm", options.gpu[1]);
  if (options.gpu.empty() || options.gpu[0] != "auto") return;
  Result<std::unique_ptr<telemetry::NvmlSampler>> opened =
      telemetry::NvmlSampler::Open(telemetry::NvmlLibrary());
  if (!opened.ok()) {
    notes.push_back("GPU telemetry: none (" + opened.status().message() + ")");
    return;
  }
  nvml_ = std::move(*opened);
  add("gpu", "nvml",
      std::make_unique<telemetry::Scraper>(
          "nvml",
          [sampler = nvml_.get()](int64_t& arrived_ns) {
            arrived_ns = SteadyClock::Get().NowNs();
            return sampler->Read();
          },
          "gpu", options.interval_ms, origin_ns));
}

ProfileTelemetry::~ProfileTelemetry() {
  for (Source& s : sources_)
    s.scraper->Stop();  // before the NVML sampler they may read goes
}

Status ProfileTelemetry::Finish(store::Store& store, const std::string& run_id) {
  for (Source& s : sources_) {
    s.scraper->Stop();
    s.stats = s.scraper->stats();
    std::vector<telemetry::TimedSample> taken = s.scraper->TakeSamples();
    // What the store leaves out (NaN, infinities), the CSV and the summaries leave out too.
    std::erase_if(taken, [](const auto& t) { return !std::isfinite(t.sample.value); });
    Result<int64_t> left_out = store.AddTelemetry(run_id, taken);
    if (!left_out.ok()) return left_out.status();
    samples_.insert(samples_.end(), std::make_move_iterator(taken.begin()),
                    std::make_move_iterator(taken.end()));
  }
  std::stable_sort(samples_.begin(), samples_.end(),
                   [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
  return Status::Ok();
}

Result<json> ProfileTelemetry::Json(const std::vector<LevelWindow>& levels, store::Store& store,
                                    const std::string& run_id) const {
  json sources = json::array();
  for (const Source& s : sources_)
    sources.push_back({{"source", s.source},
                       {"url", s.url},
                       {"scrapes", s.stats.scrapes},
                       {"failures", s.stats.failures},
                       {"last_error", s.stats.last_error}});
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

std::string ProfileTelemetry::Csv(const std::vector<LevelWindow>& levels) const {
  std::string out = "t_ns,level,source,series,labels,value,canonical,canonical_value\n";
  for (const telemetry::TimedSample& t : samples_) {
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
