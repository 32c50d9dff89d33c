#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/prometheus.h"

namespace stagegate::telemetry {

struct TimedSample {
  int64_t t_ns;        // steady clock ns when the response arrived, minus the scraper's origin
  std::string source;  // the scraper's tag, e.g. "metrics" or "dcgm"
  Sample sample;
};

struct ScrapeStats {
  int64_t scrapes = 0;     // attempts, failed ones included
  int64_t failures = 0;    // attempts that yielded no samples
  std::string last_error;  // the message of the last failure; "" when none
};

/// Scrapes a Prometheus endpoint (GET through libcurl's easy interface, 2 s timeout) on its own
/// thread: once at Start(), then every `interval_ms` (at least 1) on a fixed schedule (a slow
/// scrape skips the slots it overran rather than bursting), and once more at Stop(). A failed
/// scrape (no connection, a status other than 200, an unparsable body) is counted with its message
/// and never stops the scraper. Start and Stop belong to the owner's thread; TakeSamples and stats
/// may be called from any thread at any time.
class Scraper {
 public:
  /// One reading: the samples, with `arrived_ns` set to the steady clock when they were taken.
  using Read = std::function<Result<std::vector<Sample>>(int64_t& arrived_ns)>;

  Scraper(std::string url, std::string source, int64_t interval_ms, int64_t origin_ns);
  /// Samples `read` (called on the scraper's thread only) instead of a URL; `name` stands for it
  /// in error messages, as the URL does.
  Scraper(std::string name, Read read, std::string source, int64_t interval_ms, int64_t origin_ns);
  ~Scraper();  // stops
  Scraper(const Scraper&) = delete;
  Scraper& operator=(const Scraper&) = delete;

  /// Starts the thread and waits for its first reading (at most a scrape's 2 s timeout and a
  /// little), so that what follows lies after it; a no-op while it runs.
  void Start();
  /// Wakes the thread, lets it scrape a last time and joins it (at most a scrape's 2 s timeout).
  /// Idempotent; Start may run the scraper again after.
  void Stop();

  /// Moves out the samples collected since the last call, oldest first.
  std::vector<TimedSample> TakeSamples();
  ScrapeStats stats() const;

 private:
  void Run(std::stop_token stop);

  const std::string url_;  // or the name of what `read_` reads
  const Read read_;
  const std::string source_;
  const int64_t interval_ms_;
  const int64_t origin_ns_;

  mutable std::mutex mutex_;  // guards samples_ and stats_
  std::vector<TimedSample> samples_;
  ScrapeStats stats_;
  std::condition_variable readings_;  // notified after each reading, for Start
  std::jthread thread_;
};

}  // namespace stagegate::telemetry
