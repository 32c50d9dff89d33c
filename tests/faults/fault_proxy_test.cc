#include "faults/fault_proxy.h"

#include <catch2/catch.hpp>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "http/curl_handles.h"
#include "test_util.h"

namespace stagegate::faults {
namespace {

using namespace std::chrono_literals;
using asio::ip::tcp;
using Mode = ProxyFault::Mode;

const std::string kBody = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kResponse = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kBody.size()) +
                              "\r\nConnection: close\r\n\r\n" + kBody;
const std::string kInjectedBody = R"({"error":"injected by stagegate's fault proxy"})";

/// The real tool service: a blocking HTTP server on 127.0.0.1 that reads each request's head,
/// answers kResponse and closes. Serves from construction to destruction on its own thread.
class UpstreamServer {
 public:
  UpstreamServer()
      : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}),
        endpoint_(acceptor_.local_endpoint()),
        thread_([this] { Serve(); }) {}

  ~UpstreamServer() {
    stopping_ = true;
    // A blocking accept cannot be cancelled from another thread; a connection ends it.
    tcp::socket wake(io_);
    asio::error_code ignored;
    wake.connect(endpoint_, ignored);
    thread_.join();
  }

  uint16_t port() const { return endpoint_.port(); }
  int64_t requests() const { return requests_; }
  std::string last_head() const {
    std::lock_guard lock(mutex_);
    return last_head_;
  }

 private:
  void Serve() {
    while (true) {
      tcp::socket socket(io_);
      asio::error_code error;
      acceptor_.accept(socket, error);
      if (stopping_) return;
      if (error) continue;
      std::string request;
      const size_t head_size =
          asio::read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n", error);
      if (error) continue;
      {
        std::lock_guard lock(mutex_);
        last_head_ = request.substr(0, head_size);
      }
      ++requests_;
      asio::write(socket, asio::buffer(kResponse), error);
      socket.shutdown(tcp::socket::shutdown_both, error);
    }
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  const tcp::endpoint endpoint_;
  std::atomic<bool> stopping_ = false;
  std::atomic<int64_t> requests_ = 0;
  mutable std::mutex mutex_;
  std::string last_head_;  // guarded by mutex_
  std::thread thread_;     // last: starts once the members it uses exist
};

struct Reply {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::chrono::steady_clock::duration elapsed{};
};

/// GET (or POST, with a body) through libcurl; `timeout_ms` bounds the whole request.
Reply Request(const std::string& url, long timeout_ms = 5000, const std::string& post_body = "") {
  http::EnsureCurlGlobalInit();
  http::EasyHandle easy(curl_easy_init());
  Reply reply;
  curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy.get(), CURLOPT_PROXY, "");  // no proxy from the environment in between
  curl_easy_setopt(easy.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy.get(), CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(
      easy.get(), CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t count, void* body) {
        static_cast<std::string*>(body)->append(data, size * count);
        return size * count;
      });
  if (!post_body.empty()) curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDS, post_body.c_str());
  const auto begin = std::chrono::steady_clock::now();
  reply.code = curl_easy_perform(easy.get());
  reply.elapsed = std::chrono::steady_clock::now() - begin;
  curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

std::unique_ptr<FaultProxy> StartProxy(const UpstreamServer& upstream) {
  Result<std::unique_ptr<FaultProxy>> proxy = FaultProxy::Start("127.0.0.1", upstream.port());
  REQUIRE(proxy.status().message() == "");
  return std::move(proxy).value();
}

TEST_CASE("FaultOf maps each actuator mode to the proxy mode of the same name", "[faults]") {
  const std::pair<manifest::ProxyMode, std::string_view> kModes[] = {
      {manifest::ProxyMode::kRefuse, "refuse"}, {manifest::ProxyMode::kReset, "reset"},
      {manifest::ProxyMode::kDelay, "delay"},   {manifest::ProxyMode::kHang, "hang"},
      {manifest::ProxyMode::kStatus, "status"}, {manifest::ProxyMode::kTrickle, "trickle"}};
  for (const auto& [mode, name] : kModes) {
    const ProxyFault fault = FaultOf(
        manifest::Actuator{.mode = mode, .delay_ms = 250, .status = 429, .bytes_per_s = 32});
    CHECK(ModeName(fault.mode) == name);
    CHECK(fault.delay_ms == 250);
    CHECK(fault.status == 429);
    CHECK(fault.bytes_per_s == 32);
  }
  CHECK(ModeName(Mode::kPass) == "pass");
}

TEST_CASE("A fault proxy in pass mode forwards requests and responses unchanged", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  CHECK(proxy->url() == "http://127.0.0.1:" + std::to_string(proxy->port()));
  CHECK(proxy->fault().mode == Mode::kPass);

  const Reply reply = Request(proxy->url() + "/tools/echo");
  CHECK(reply.code == CURLE_OK);
  CHECK(reply.status == 200);
  CHECK(reply.body == kBody);
  CHECK(proxy->connections() == 1);
  CHECK(upstream.requests() == 1);
  // The Host header names the proxy: nothing was rewritten on the way.
  CHECK_THAT(upstream.last_head(),
             Catch::StartsWith("GET /tools/echo HTTP/1.1\r\nHost: 127.0.0.1:" +
                               std::to_string(proxy->port()) + "\r\n"));
}

TEST_CASE("A fault proxy in pass mode propagates a client's half-close", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  asio::io_context io;
  tcp::socket client(io);
  client.connect({asio::ip::make_address("127.0.0.1"), proxy->port()});
  asio::write(client, asio::buffer(std::string("GET / HTTP/1.1\r\nHost: upstream\r\n\r\n")));
  // The client has nothing more to say, yet the answer must still come back.
  client.shutdown(tcp::socket::shutdown_send);
  std::string response;
  asio::error_code error;
  asio::read(client, asio::dynamic_buffer(response), error);
  CHECK(error == asio::error::eof);
  CHECK(response == kResponse);
}

TEST_CASE("A fault proxy in refuse mode closes its listener", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  proxy->Set({.mode = Mode::kRefuse});
  CHECK(proxy->fault().mode == Mode::kRefuse);
  const Reply reply = Request(proxy->url());
  CHECK(reply.code == CURLE_COULDNT_CONNECT);
  CHECK(proxy->connections() == 0);
  CHECK(upstream.requests() == 0);
}

TEST_CASE("A fault proxy in reset mode resets new connections", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  proxy->Set({.mode = Mode::kReset});
  const Reply reply = Request(proxy->url());
  INFO(curl_easy_strerror(reply.code));
  CHECK((reply.code == CURLE_RECV_ERROR || reply.code == CURLE_GOT_NOTHING));
  CHECK(proxy->connections() == 1);  // accepted, unlike refuse
  CHECK(upstream.requests() == 0);
}

TEST_CASE("A fault proxy in delay mode passes after the delay", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  proxy->Set({.mode = Mode::kDelay, .delay_ms = 300});
  const Reply reply = Request(proxy->url());
  CHECK(reply.code == CURLE_OK);
  CHECK(reply.body == kBody);
  CHECK(reply.elapsed >= 300ms);
  CHECK(reply.elapsed < 2s);
}

TEST_CASE("A fault proxy in hang mode never answers", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  proxy->Set({.mode = Mode::kHang});
  const Reply reply = Request(proxy->url(), 300);
  CHECK(reply.code == CURLE_OPERATION_TIMEDOUT);
  CHECK(proxy->connections() == 1);
  CHECK(upstream.requests() == 0);
}

TEST_CASE("A fault proxy in status mode answers every request with the status", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  proxy->Set({.mode = Mode::kStatus, .status = 503});
  const Reply get = Request(proxy->url() + "/tools/search");
  CHECK(get.code == CURLE_OK);
  CHECK(get.status == 503);
  CHECK(get.body == kInjectedBody);

  // A request with a body is answered once the body has been read.
  proxy->Set({.mode = Mode::kStatus, .status = 429});
  const Reply post = Request(proxy->url() + "/tools/search", 5000, R"({"arguments":{"q":"x"}})");
  CHECK(post.code == CURLE_OK);
  CHECK(post.status == 429);
  CHECK(post.body == kInjectedBody);
  CHECK(upstream.requests() == 0);
}

TEST_CASE("A fault proxy in trickle mode slows the response to the rate", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  proxy->Set({.mode = Mode::kTrickle, .bytes_per_s = 64});
  const Reply reply = Request(proxy->url(), 10'000);
  CHECK(reply.code == CURLE_OK);
  CHECK(reply.body == kBody);
  // The body alone is a second's worth at 64 bytes/s, and the head comes before it.
  CHECK(reply.elapsed >= 1s);
}

TEST_CASE("Setting pass restores the upstream after every fault", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  const ProxyFault kFaults[] = {{.mode = Mode::kRefuse},
                                {.mode = Mode::kReset},
                                {.mode = Mode::kDelay, .delay_ms = 50},
                                {.mode = Mode::kHang},
                                {.mode = Mode::kStatus, .status = 500},
                                {.mode = Mode::kTrickle, .bytes_per_s = 1000}};
  for (const ProxyFault& fault : kFaults) {
    INFO("after " << ModeName(fault.mode));
    proxy->Set(fault);
    Request(proxy->url(), 300);
    proxy->Set({});
    CHECK(proxy->fault().mode == Mode::kPass);
    const Reply reply = Request(proxy->url());
    CHECK(reply.code == CURLE_OK);
    CHECK(reply.body == kBody);
  }
}

TEST_CASE("A connection hung by hang mode is closed when the mode changes", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  proxy->Set({.mode = Mode::kHang});
  std::future<Reply> hung =
      std::async(std::launch::async, [url = proxy->url()] { return Request(url, 5000); });
  // Waits until the proxy has read the request, so the close is seen on receive, not as a failed
  // send or a reset over unread bytes.
  REQUIRE(testing::WaitUntil([&] { return proxy->hung_reads() > 0; }, 5));
  REQUIRE(proxy->connections() == 1);
  proxy->Set({});
  const Reply reply = hung.get();
  // Closed by the proxy, long before the client's own 5 s timeout.
  CHECK(reply.code == CURLE_GOT_NOTHING);
  CHECK(reply.elapsed < 2s);
}

TEST_CASE("A fault proxy reports a port it cannot listen on", "[faults]") {
  asio::io_context io;
  tcp::acceptor taken(io, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = taken.local_endpoint().port();
  Result<std::unique_ptr<FaultProxy>> proxy = FaultProxy::Start("127.0.0.1", 9, port);
  REQUIRE(!proxy.ok());
  CHECK(proxy.status().code() == Status::Code::kIoError);
  CHECK(proxy.status().message() ==
        "cannot listen on 127.0.0.1:" + std::to_string(port) + ": Address already in use");
}

TEST_CASE("Stop closes the listener and is idempotent", "[faults]") {
  UpstreamServer upstream;
  std::unique_ptr<FaultProxy> proxy = StartProxy(upstream);
  proxy->Stop();
  proxy->Stop();
  CHECK(Request(proxy->url()).code == CURLE_COULDNT_CONNECT);
  // Set after Stop records the fault instead of waiting for a thread that is gone.
  proxy->Set({.mode = Mode::kHang});
  CHECK(proxy->fault().mode == Mode::kHang);
}

}  // namespace
}  // namespace stagegate::faults
