#pragma once

#include <asio.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace stagegate::sim {

/// One parsed HTTP/1.1 request. Header names are lower-cased; a repeated header keeps its last
/// value.
struct HttpRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::string path;    // target without the query
  std::map<std::string, std::string> headers;
  std::string body;

  /// The header's value, or "" when absent. `name` must be lower-case.
  const std::string& Header(const std::string& name) const;
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

class Connection;

/// Answers one request: either Send() a whole response, or StartStream(), Write() any number of
/// chunks and EndStream(). Abort() drops the connection with a TCP reset. Shared by the handler
/// and the connection (a response outlives the handler call when it streams: that is why it is
/// handed out as a shared_ptr); all calls must come from the server's io_context thread. Calls
/// after the response ended or the peer went away are ignored.
class HttpResponder {
 public:
  explicit HttpResponder(std::shared_ptr<Connection> connection)
      : connection_(std::move(connection)) {}

  void Send(int status, const HeaderList& headers, std::string body);
  void StartStream(int status, const HeaderList& headers);
  /// `on_written`, when given, is called with the steady-clock time (ns) at which these bytes
  /// are handed to the socket, which may be later than this call when an earlier write is still
  /// in progress.
  void Write(std::string_view data, std::function<void(int64_t)> on_written = nullptr);
  void EndStream();
  /// Ends the response without the terminating chunk, then closes the connection: what a server
  /// that crashes mid-stream looks like to the client.
  void CloseMidStream();
  void Abort();

  /// True once the client has gone away (or the response was aborted).
  bool closed() const;
  bool finished() const { return finished_; }

 private:
  std::shared_ptr<Connection> connection_;
  bool streaming_ = false;
  bool finished_ = false;
};

using HttpHandler =
    std::function<void(HttpRequest request, std::shared_ptr<HttpResponder> responder)>;

/// An HTTP/1.1 server on the caller's io_context: keep-alive, one request at a time per
/// connection, requests parsed by http-parser. Runs entirely on the io_context's thread.
class HttpServer {
 public:
  HttpServer(asio::io_context& io, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds and starts accepting. Port 0 picks a free one; port() tells which.
  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return port_; }
  /// Stops accepting and closes every open connection. Call on the io_context's thread.
  void Stop();

 private:
  asio::awaitable<void> Accept();

  asio::io_context& io_;
  HttpHandler handler_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::vector<std::weak_ptr<Connection>> connections_;
};

/// Reason phrase for a status code ("OK", "Too Many Requests", ...).
const char* ReasonPhrase(int status);

}  // namespace stagegate::sim
