#pragma once

#include <asio.hpp>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace stagegate::testing {

/// An HTTP/1.1 response with `body`, its length, and Connection: close.
inline std::string HttpResponse(const std::string& status, const std::string& body,
                                const std::string& content_type = "text/plain; version=0.0.4") {
  return "HTTP/1.1 " + status + "\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         body;
}

/// A blocking HTTP server on 127.0.0.1 that answers every connection with one fixed response (or
/// the responder's answer to the request it read) and closes it, keeping each request (headers
/// and Content-Length body) it read. Serves from construction to destruction on its own thread.
class FixedResponseServer {
 public:
  using Responder = std::function<std::string(const std::string& request)>;

  explicit FixedResponseServer(std::string response)
      : FixedResponseServer([response](const std::string&) { return response; }) {}
  explicit FixedResponseServer(Responder responder)
      : responder_(std::move(responder)),
        acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}),
        endpoint_(acceptor_.local_endpoint()),
        thread_([this] { Serve(); }) {}

  ~FixedResponseServer() {
    stopping_ = true;
    // A blocking accept cannot be cancelled from another thread; a connection ends it.
    asio::ip::tcp::socket wake(io_);
    asio::error_code ignored;
    wake.connect(endpoint_, ignored);
    thread_.join();
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(endpoint_.port()); }
  std::string url() const { return base() + "/metrics"; }
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  void Serve() {
    while (true) {
      asio::ip::tcp::socket socket(io_);
      asio::error_code error;
      acceptor_.accept(socket, error);
      if (stopping_) return;
      if (error) continue;
      // Read the whole request first: closing a socket with unread bytes resets the connection.
      std::string request;
      const size_t head =
          asio::read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n", error);
      if (!error) {
        size_t length = 0;
        std::string lower = request.substr(0, head);
        for (char& c : lower)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const size_t at = lower.find("content-length:");
        if (at != std::string::npos) length = std::stoul(lower.substr(at + 15));
        if (request.size() < head + length)
          asio::read(socket, asio::dynamic_buffer(request),
                     asio::transfer_exactly(head + length - request.size()), error);
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back(request);
      }
      const std::string response = responder_(request);
      asio::write(socket, asio::buffer(response), error);
      socket.shutdown(asio::ip::tcp::socket::shutdown_both, error);
    }
  }

  const Responder responder_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  const asio::ip::tcp::endpoint endpoint_;
  std::atomic<bool> stopping_ = false;
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::thread thread_;  // last: starts once the members it uses exist
};

}  // namespace stagegate::testing
