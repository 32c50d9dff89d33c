// The memory the responses in flight may keep between them: ResponseBudget alone, and the engine
// against a server that sends large streams on several connections at once.

#include "load/response_budget.h"

#include <catch2/catch.hpp>

#include <asio.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/openai_request.h"
#include "load/engine.h"

namespace stagegate::load {
namespace {

RequestSource Source(const std::string& url) {
  const RequestSpec spec{.url = url, .body = http::BuildRequestBody({.model = "m"}, "question")};
  return [spec](int64_t) { return spec; };
}

RunControl Control() {
  return {.clock = &SteadyClock::Get(), .origin_ns = SteadyClock::Get().NowNs()};
}

TEST_CASE("ResponseBudget takes up to its limit and takes again what was given back", "[load]") {
  ResponseBudget budget(100);
  CHECK(budget.TryTake(60));
  CHECK_FALSE(budget.TryTake(41));  // nothing is taken by a refusal
  CHECK(budget.held() == 60);
  CHECK(budget.TryTake(40));
  budget.Give(60);
  CHECK(budget.TryTake(60));
  CHECK(budget.held() == 100);
  CHECK(budget.peak() == 100);

  ResponseBudget unlimited(0);
  CHECK(unlimited.TryTake(int64_t{1} << 40));
}

/// Answers each of `connections` requests with a stream of `chunks` content chunks of
/// `chunk_bytes`, then [DONE]. With `together`, each connection sends half its chunks, then waits
/// until every connection has sent its half, so that all the streams are in flight at once.
class WideStreamServer {
 public:
  WideStreamServer(int connections, int chunks, size_t chunk_bytes, bool together)
      : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}),
        connections_(connections),
        chunks_(chunks),
        chunk_bytes_(chunk_bytes),
        together_(together),
        chunk_(R"(data: {"choices":[{"index":0,"delta":{"content":")" +
               std::string(chunk_bytes, 'x') + "\"}}]}\n\n") {
    thread_ = std::thread([this] { Serve(); });
  }
  ~WideStreamServer() {
    // Connections that never came (a failed test) are made here, so that the accepts end.
    for (int i = accepted_; i < connections_; ++i) {
      asio::ip::tcp::socket wake(io_);
      asio::error_code ignored;
      wake.connect(acceptor_.local_endpoint(), ignored);
    }
    thread_.join();
    for (std::thread& connection : handlers_)
      connection.join();
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) +
           "/v1/chat/completions";
  }
  std::string answer() const { return std::string(chunks_ * chunk_bytes_, 'x'); }

 private:
  void Serve() {
    for (; accepted_ < connections_; ++accepted_) {
      auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
      asio::error_code error;
      acceptor_.accept(*socket, error);
      if (error) continue;
      handlers_.emplace_back([this, socket] { Answer(*socket); });
    }
  }

  void Answer(asio::ip::tcp::socket& socket) {
    asio::error_code error;
    std::string request;
    const size_t head = asio::read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n", error);
    if (!error) {
      const size_t at = request.find("Content-Length: ");
      const size_t length = at == std::string::npos ? 0 : std::stoul(request.substr(at + 16));
      if (request.size() < head + length)
        asio::read(socket, asio::dynamic_buffer(request),
                   asio::transfer_exactly(head + length - request.size()), error);
    }
    asio::write(socket,
                asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                         "Connection: close\r\n\r\n")),
                error);
    for (size_t i = 0; i < chunks_; ++i) {
      if (together_ && i == chunks_ / 2) WaitForTheOthers();
      if (!error) asio::write(socket, asio::buffer(chunk_), error);
    }
    if (!error) asio::write(socket, asio::buffer(std::string("data: [DONE]\n\n")), error);
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, error);
  }

  void WaitForTheOthers() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++halfway_;
    halfway_reached_.notify_all();
    halfway_reached_.wait_for(lock, std::chrono::seconds(5),
                              [this] { return halfway_ == connections_; });
  }

  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  const int connections_;
  const size_t chunks_;
  const size_t chunk_bytes_;
  const bool together_;
  const std::string chunk_;
  std::atomic<int> accepted_ = 0;
  std::mutex mutex_;
  std::condition_variable halfway_reached_;
  int halfway_ = 0;
  std::vector<std::thread> handlers_;
  std::thread thread_;
};

TEST_CASE("streams past the response-memory limit are cut as memory_limit, the rest complete",
          "[load]") {
  constexpr int kStreams = 6;
  constexpr int64_t kLimit = 2 << 20;
  // Each stream keeps 1 MiB of answer; half of each (3 MiB in all) is more than the limit.
  WideStreamServer server(kStreams, 16, 64 << 10, /*together=*/true);
  Result<LoadResult> result = RunLoad({.concurrency = kStreams,
                                       .requests = kStreams,
                                       .workers = 2,
                                       .timeouts = {.first_token_ms = 20000, .total_ms = 20000},
                                       .response_memory_bytes = kLimit},
                                      Source(server.url()), Control());
  INFO(result.status().message());
  REQUIRE(result.ok());
  REQUIRE(result->records.size() == kStreams);
  int ok = 0, cut = 0;
  const std::string answer = server.answer();
  for (const RequestRecord& r : result->records) {
    INFO("sequence " << r.sequence << ": " << OutcomeName(r.outcome) << ", '" << r.error_message
                     << "', " << r.answer_text.size() << " answer bytes");
    if (r.outcome == Outcome::kOk) {
      ++ok;
      CHECK(r.answer_text == answer);
      continue;
    }
    REQUIRE(r.outcome == Outcome::kMemoryLimit);
    ++cut;
    CHECK(r.error_message.starts_with("cut after "));
    CHECK(r.error_message.ends_with(
        " bytes: the responses in flight held the client's limit of 2 MiB "
        "(--max-response-memory); the rest was not read"));
    CHECK(r.http_status == 200);
    CHECK(answer.starts_with(r.answer_text));  // what arrived before the cut is kept
    CHECK(r.answer_text.size() < answer.size());
  }
  CHECK(cut >= 1);
  CHECK(result->response_memory_peak <= kLimit);
  CHECK(result->response_memory_peak > kLimit / 2);
}

TEST_CASE("a stream gives its share of the response memory back when it ends", "[load]") {
  // Three streams of 1 MiB one after another, under a limit of 2 MiB: each fits alone.
  WideStreamServer server(3, 16, 64 << 10, /*together=*/false);
  Result<LoadResult> result =
      RunLoad({.concurrency = 1, .requests = 3, .workers = 1, .response_memory_bytes = 2 << 20},
              Source(server.url()), Control());
  INFO(result.status().message());
  REQUIRE(result.ok());
  REQUIRE(result->records.size() == 3);
  for (const RequestRecord& r : result->records) {
    INFO("sequence " << r.sequence << ": " << r.error_message);
    CHECK(r.outcome == Outcome::kOk);
    CHECK(r.answer_text == server.answer());
  }
  CHECK(result->response_memory_peak > (1 << 20));
  CHECK(result->response_memory_peak <= (2 << 20));
}

}  // namespace
}  // namespace stagegate::load
