#include "scenario/telemetry_scrapers.h"

#include <algorithm>
#include <cmath>

#include "base/redact.h"

namespace stagegate::scenario {

TelemetryScrapers::TelemetryScrapers(const ScrapePlan& plan, int64_t origin_ns, const Clock& clock,
                                     std::vector<std::string>& notes) {
  const auto add = [&](TelemetrySource source, std::unique_ptr<telemetry::Scraper> scraper) {
    scrapers_.emplace_back(std::move(source), std::move(scraper));
    scrapers_.back().second->Start();
  };
  const auto scrape = [&](const std::string& source, const std::string& url) {
    add({.source = source, .url = UrlWithoutUserinfo(url)},
        std::make_unique<telemetry::Scraper>(url, source, plan.interval_ms, origin_ns));
  };
  if (!plan.metrics_url.empty()) scrape("metrics", plan.metrics_url);
  if (!plan.dcgm_url.empty()) scrape("dcgm", plan.dcgm_url);
  if (!plan.nvml) return;
  Result<std::unique_ptr<telemetry::NvmlSampler>> opened =
      telemetry::NvmlSampler::Open(telemetry::NvmlLibrary());
  if (!opened.ok()) {
    notes.push_back("GPU telemetry: none (" + opened.status().message() + ")");
    return;
  }
  nvml_ = std::move(*opened);
  add({.source = "gpu", .url = "nvml"}, std::make_unique<telemetry::Scraper>(
                                            "nvml",
                                            [sampler = nvml_.get(), &clock](int64_t& arrived_ns) {
                                              arrived_ns = clock.NowNs();
                                              return sampler->Read();
                                            },
                                            "gpu", plan.interval_ms, origin_ns));
}

TelemetryScrapers::~TelemetryScrapers() {
  Stop();  // before the NVML sampler they may read goes
}

void TelemetryScrapers::Stop() {
  for (auto& [source, scraper] : scrapers_)
    scraper->Stop();
}

Status TelemetryScrapers::Flush(store::Store& store, const std::string& run_id,
                                std::vector<telemetry::TimedSample>* kept) {
  for (auto& [source, scraper] : scrapers_) {
    std::vector<telemetry::TimedSample> samples = scraper->TakeSamples();
    std::erase_if(samples, [](const auto& t) { return !std::isfinite(t.sample.value); });
    Result<int64_t> left_out = store.AddTelemetry(run_id, samples);
    if (!left_out.ok()) return left_out.status();
    source.samples += static_cast<int64_t>(samples.size()) - *left_out;
    if (kept) kept->insert(kept->end(), samples.begin(), samples.end());
  }
  return Status::Ok();
}

Result<std::vector<TelemetrySource>> TelemetryScrapers::Finish(
    store::Store& store, const std::string& run_id, std::vector<telemetry::TimedSample>* kept) {
  Stop();
  SG_RETURN_IF_ERROR(Flush(store, run_id, kept));
  std::vector<TelemetrySource> sources;
  for (auto& [source, scraper] : scrapers_) {
    const telemetry::ScrapeStats stats = scraper->stats();
    source.scrapes = stats.scrapes;
    source.failures = stats.failures;
    source.last_error = stats.last_error;
    sources.push_back(source);
  }
  return sources;
}

}  // namespace stagegate::scenario
