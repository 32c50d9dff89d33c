#pragma once

// The telemetry of one run, `run` or `profile` alike: the target's Prometheus metrics, a DCGM
// exporter and NVML, each scraped on its own thread on the run's clock, its samples stored with the
// run as it goes.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/store.h"
#include "telemetry/nvml.h"
#include "telemetry/scraper.h"

namespace stagegate::scenario {

/// One telemetry source scraped through the run.
struct TelemetrySource {
  std::string source;  // "metrics" (the target's Prometheus endpoint), "dcgm" or "gpu" (NVML)
  std::string url;
  int64_t scrapes = 0, failures = 0, samples = 0;  // samples: those the store kept
  std::string last_error;
};

/// What to scrape.
struct ScrapePlan {
  std::string metrics_url;  // "": the target's metrics are not scraped
  std::string dcgm_url;     // "": no DCGM exporter
  bool nvml = false;        // NVML, when its library opens
  int64_t interval_ms = 1000;
};

class TelemetryScrapers {
 public:
  /// Starts the plan's scrapers, their times ns from `origin_ns` on `clock` (NVML's reads are
  /// stamped by it). `notes` receives what is absent (no NVML library).
  TelemetryScrapers(const ScrapePlan& plan, int64_t origin_ns, const Clock& clock,
                    std::vector<std::string>& notes);
  ~TelemetryScrapers();
  TelemetryScrapers(const TelemetryScrapers&) = delete;
  TelemetryScrapers& operator=(const TelemetryScrapers&) = delete;

  /// Stores the samples read so far with `run_id`, but those that are not finite (NaN, an
  /// infinity), which no reader could use; `kept`, when given, receives a copy of those stored.
  Status Flush(store::Store& store, const std::string& run_id,
               std::vector<telemetry::TimedSample>* kept = nullptr);
  /// Stops every scraper (each reads once more), stores what is left, and gives each source with
  /// its counts.
  Result<std::vector<TelemetrySource>> Finish(store::Store& store, const std::string& run_id,
                                              std::vector<telemetry::TimedSample>* kept = nullptr);
  bool any() const { return !scrapers_.empty(); }

 private:
  void Stop();

  std::unique_ptr<telemetry::NvmlSampler> nvml_;
  std::vector<std::pair<TelemetrySource, std::unique_ptr<telemetry::Scraper>>> scrapers_;
};

}  // namespace stagegate::scenario
