#include "telemetry/scraper.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <utility>

#include "base/clock.h"
#include "base/redact.h"
#include "http/curl_handles.h"

namespace stagegate::telemetry {
namespace {

constexpr long kTimeoutMs = 2000;
// An exposition is kilobytes to a few megabytes; a bigger body is not one, and is not kept.
constexpr size_t kMaxBodyBytes = size_t{16} << 20;

size_t AppendBody(char* data, size_t size, size_t count, void* body_ptr) {
  auto* body = static_cast<std::string*>(body_ptr);
  if (body->size() + size * count > kMaxBodyBytes) return 0;  // curl fails with a write error
  body->append(data, size * count);
  return size * count;
}

// One easy handle for every scrape of a URL, so a server that keeps connections alive is not
// asked for a new one each time. Not movable: curl holds pointers to body_ and error_.
class Fetcher {
 public:
  explicit Fetcher(const std::string& url) : easy_(curl_easy_init()) {
    if (!easy_) return;
    CURL* easy = easy_.get();
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, kTimeoutMs);
    // Signals would reach whichever thread: timeouts must not use them off the main thread.
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &AppendBody);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body_);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_);
  }
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  /// GETs the URL and parses the body; `arrived_ns` is the steady clock when the response was in.
  Result<Exposition> Fetch(int64_t& arrived_ns) {
    if (!easy_) return Status::Internal("curl_easy_init failed");
    body_.clear();
    const CURLcode code = curl_easy_perform(easy_.get());
    arrived_ns = SteadyClock::Get().NowNs();
    if (code == CURLE_WRITE_ERROR) return Status::IoError("response body over 16 MiB");
    if (code != CURLE_OK)
      return Status::IoError(error_[0] != '\0' ? error_ : curl_easy_strerror(code));
    long status = 0;
    curl_easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) return Status::IoError("HTTP status " + std::to_string(status));
    return ParsePrometheusText(body_);
  }

 private:
  http::EasyHandle easy_;
  std::string body_;
  char error_[CURL_ERROR_SIZE] = "";
};

}  // namespace

Scraper::Scraper(std::string url, std::string source, int64_t interval_ms, int64_t origin_ns)
    : Scraper(
          UrlWithoutUserinfo(url),  // the name in messages, which reach the run's notes
          [url, fetcher = std::shared_ptr<Fetcher>()](
              int64_t& arrived_ns) mutable -> Result<std::vector<Sample>> {
            if (!fetcher) fetcher = std::make_shared<Fetcher>(url);  // on the scraper's thread
            Result<Exposition> exposition = fetcher->Fetch(arrived_ns);
            if (!exposition.ok()) return exposition.status();
            return std::move(exposition->samples);
          },
          std::move(source), interval_ms, origin_ns) {}

Scraper::Scraper(std::string name, Read read, std::string source, int64_t interval_ms,
                 int64_t origin_ns)
    : url_(std::move(name)),
      read_(std::move(read)),
      source_(std::move(source)),
      interval_ms_(std::max<int64_t>(interval_ms, 1)),
      origin_ns_(origin_ns) {}

Scraper::~Scraper() {
  Stop();
}

void Scraper::Start() {
  if (thread_.joinable()) return;
  http::EnsureCurlGlobalInit();
  int64_t before = 0;
  {
    std::lock_guard lock(mutex_);
    before = stats_.scrapes;
  }
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  std::unique_lock lock(mutex_);
  readings_.wait_for(lock, std::chrono::milliseconds(2500),
                     [&] { return stats_.scrapes > before; });
}

void Scraper::Stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

std::vector<TimedSample> Scraper::TakeSamples() {
  std::lock_guard lock(mutex_);
  return std::exchange(samples_, {});
}

ScrapeStats Scraper::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Scraper::Run(std::stop_token stop) {
  std::condition_variable_any wake;  // notified by the stop request only
  const std::chrono::milliseconds interval(interval_ms_);
  auto next = std::chrono::steady_clock::now();
  while (true) {
    // A last reading as it stops, so that the end of the last phase lies between two readings
    // (an energy counter is read on each side of it).
    const bool last = stop.stop_requested();
    int64_t arrived_ns = 0;
    Result<std::vector<Sample>> read = read_(arrived_ns);

    std::unique_lock lock(mutex_);
    ++stats_.scrapes;
    if (read.ok()) {
      for (Sample& sample : *read)
        samples_.push_back({arrived_ns - origin_ns_, source_, std::move(sample)});
    } else {
      ++stats_.failures;
      stats_.last_error = read.status().WithContext(url_).message();
    }
    readings_.notify_all();
    if (last) return;
    const auto now = std::chrono::steady_clock::now();
    if (next <= now) next += ((now - next) / interval + 1) * interval;
    wake.wait_until(lock, stop, next, [] { return false; });
  }
}

}  // namespace stagegate::telemetry
