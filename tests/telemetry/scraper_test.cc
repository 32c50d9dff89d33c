#include "telemetry/scraper.h"

#include <catch2/catch.hpp>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "base/clock.h"
#include "http_test_server.h"

namespace stagegate::telemetry {
namespace {

using namespace std::chrono_literals;

using testing::FixedResponseServer;
using testing::HttpResponse;

// The scraper works on its own thread: waits up to 5 s for it to have made `scrapes` attempts.
ScrapeStats WaitForScrapes(const Scraper& scraper, int64_t scrapes) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (scraper.stats().scrapes < scrapes && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  return scraper.stats();
}

TEST_CASE("A scraper collects timestamped samples at its interval", "[telemetry]") {
  FixedResponseServer server(
      HttpResponse("200 OK",
                   "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n"
                   "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.25\n"));
  const int64_t origin_ns = SteadyClock::Get().NowNs();
  Scraper scraper(server.url(), "metrics", 50, origin_ns);
  scraper.Start();
  REQUIRE(WaitForScrapes(scraper, 3).scrapes >= 3);
  scraper.Stop();
  const int64_t stopped_ns = SteadyClock::Get().NowNs() - origin_ns;

  const ScrapeStats stats = scraper.stats();
  CHECK(stats.failures == 0);
  CHECK(stats.last_error == "");
  CHECK(stats.scrapes >= 4);  // the three waited for, and one at Stop
  // One scrape at Start, then one per 50 ms slot, and one at Stop: never a burst.
  CHECK(stats.scrapes <= stopped_ns / 50'000'000 + 2);

  const std::vector<TimedSample> samples = scraper.TakeSamples();
  REQUIRE(samples.size() == static_cast<size_t>(2 * stats.scrapes));
  int64_t previous_ns = 0;
  for (size_t i = 0; i < samples.size(); i += 2) {
    INFO("scrape " << i / 2);
    CHECK(samples[i].source == "metrics");
    CHECK(samples[i].sample == Sample{"vllm:num_requests_running", {}, 3});
    CHECK(samples[i + 1].sample ==
          Sample{"vllm:gpu_cache_usage_perc", {{"model_name", "m"}}, 0.25});
    CHECK(samples[i + 1].t_ns == samples[i].t_ns);  // one scrape, one arrival time
    CHECK(samples[i].t_ns > previous_ns);
    previous_ns = samples[i].t_ns;
  }
  CHECK(previous_ns < stopped_ns);
  CHECK(scraper.TakeSamples().empty());  // taken once
}

TEST_CASE("A scraper counts a status other than 200 as a failure", "[telemetry]") {
  FixedResponseServer server(HttpResponse("500 Internal Server Error", "up 1\n"));
  Scraper scraper(server.url(), "metrics", 20, SteadyClock::Get().NowNs());
  scraper.Start();
  const ScrapeStats stats = WaitForScrapes(scraper, 3);
  scraper.Stop();
  CHECK(stats.scrapes >= 3);
  CHECK(stats.failures == stats.scrapes);
  CHECK(stats.last_error == server.url() + ": HTTP status 500");
  CHECK(scraper.TakeSamples().empty());
}

TEST_CASE("A scraper counts a refused connection and stops promptly", "[telemetry]") {
  uint16_t port = 0;
  {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    port = acceptor.local_endpoint().port();
  }  // closed: nothing listens there now
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  // A long interval: Stop must wake the wait between scrapes, not sleep it out.
  Scraper scraper(url, "dcgm", 60'000, SteadyClock::Get().NowNs());
  scraper.Start();
  CHECK(WaitForScrapes(scraper, 1).scrapes == 1);
  const auto stop_begin = std::chrono::steady_clock::now();
  scraper.Stop();
  CHECK(std::chrono::steady_clock::now() - stop_begin < 1s);

  const ScrapeStats stats = scraper.stats();

  CHECK(stats.scrapes == 2);  // at Start, and the last one at Stop
  CHECK(stats.failures == 2);
  CHECK_THAT(stats.last_error, Catch::StartsWith(url + ": Failed to connect to 127.0.0.1 port " +
                                                 std::to_string(port)));
  CHECK(scraper.TakeSamples().empty());
}

TEST_CASE("A scraper counts a body that does not parse as a failure", "[telemetry]") {
  FixedResponseServer server(HttpResponse("200 OK", "up 1\nbroken{ 2\n"));
  Scraper scraper(server.url(), "metrics", 20, SteadyClock::Get().NowNs());
  scraper.Start();
  const ScrapeStats stats = WaitForScrapes(scraper, 2);
  scraper.Stop();
  CHECK(stats.scrapes >= 2);
  CHECK(stats.failures == stats.scrapes);
  CHECK(stats.last_error == server.url() + ": line 2, column 9: expected a label name");
  CHECK(scraper.TakeSamples().empty());  // the good first line is not kept either
}

}  // namespace
}  // namespace stagegate::telemetry
