#include "sim/http_server.h"

#include <chrono>
#include <functional>

#include <http_parser.h>

#include <algorithm>
#include <cctype>

namespace stagegate::sim {

/// One accepted socket: reads and parses requests, hands each to the handler, writes responses in
/// order through a queue with one write in flight.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::ip::tcp::socket socket, const HttpHandler& handler)
      : socket_(std::move(socket)), handler_(handler) {
    http_parser_settings_init(&settings_);
    settings_.on_url = OnUrl;
    settings_.on_header_field = OnHeaderField;
    settings_.on_header_value = OnHeaderValue;
    settings_.on_headers_complete = OnHeadersComplete;
    settings_.on_body = OnBody;
    settings_.on_message_complete = OnMessageComplete;
    http_parser_init(&parser_, HTTP_REQUEST);
    parser_.data = this;
  }

  asio::awaitable<void> Serve() {
    auto self = shared_from_this();
    std::vector<char> buffer(16384);
    try {
      while (open_) {
        size_t n = co_await socket_.async_read_some(asio::buffer(buffer), asio::use_awaitable);
        size_t offset = 0;
        while (offset < n && open_) {
          size_t parsed =
              http_parser_execute(&parser_, &settings_, buffer.data() + offset, n - offset);
          offset += parsed;
          http_errno error = HTTP_PARSER_ERRNO(&parser_);
          if (error == HPE_PAUSED) {
            // A whole request arrived: answer it before parsing the next one.
            http_parser_pause(&parser_, 0);
            co_await Dispatch();
            continue;
          }
          if (error != HPE_OK) {
            SendParseError(http_errno_description(error));
            co_return;
          }
        }
      }
    } catch (const std::system_error&) {
      // The peer went away or the server is stopping: nothing to answer.
    }
    Close();
  }

  void Queue(std::string data, std::function<void(int64_t)> on_written = nullptr) {
    if (!open_) return;
    pending_.push_back(std::move(data));
    if (on_written) on_written_.push_back(std::move(on_written));
    if (!writing_) WriteNext();
  }

  /// Called when a response is complete: lets the read loop go on (or close the connection).
  void ResponseDone(bool keep_alive) {
    keep_alive_ = keep_alive_ && keep_alive;
    response_done_ = true;
    if (!writing_) FinishResponse();
  }

  void Close() {
    if (!open_) return;
    open_ = false;
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    waiter_.cancel();
  }

  void Reset() {
    if (!open_) return;
    asio::error_code ignored;
    socket_.set_option(asio::socket_base::linger(true, 0), ignored);
    open_ = false;
    socket_.close(ignored);
    waiter_.cancel();
  }

  bool open() const { return open_; }

 private:
  asio::awaitable<void> Dispatch() {
    response_done_ = false;
    waiter_.expires_at(asio::steady_timer::time_point::max());
    HttpRequest request = std::move(request_);
    request_ = HttpRequest{};
    size_t query = request.target.find('?');
    request.path = request.target.substr(0, query);
    handler_(std::move(request), std::make_shared<HttpResponder>(shared_from_this()));
    // Wait until the handler's response is written (it may stream for a long time).
    while (open_ && !(response_done_ && !writing_)) {
      asio::error_code ignored;
      co_await waiter_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
    if (!keep_alive_) Close();
  }

  void FinishResponse() { waiter_.cancel(); }

  void WriteNext() {
    if (pending_.empty() || !open_) {
      writing_ = false;
      if (response_done_) FinishResponse();
      return;
    }
    writing_ = true;
    // Coalesce everything queued into one write: many small SSE events become one syscall.
    std::string out;
    for (std::string& piece : pending_)
      out += piece;
    pending_.clear();
    if (!on_written_.empty()) {
      // The moment the bytes go to the socket (asio writes at once when it can), not the moment
      // they were queued behind an earlier write.
      const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now().time_since_epoch())
                              .count();
      for (const auto& on_written : on_written_)
        on_written(now);
      on_written_.clear();
    }
    auto data = std::make_shared<std::string>(std::move(out));
    asio::async_write(socket_, asio::buffer(*data),
                      [self = shared_from_this(), data](asio::error_code error, size_t) {
                        if (error) {
                          self->Close();
                          return;
                        }
                        self->WriteNext();
                      });
  }

  void SendParseError(const char* description) {
    std::string body = std::string(R"({"error":{"message":"malformed HTTP request: )") +
                       description + R"(","type":"invalid_request_error","code":400}})";
    Queue("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    keep_alive_ = false;
    response_done_ = true;
    if (!writing_) Close();
  }

  static Connection* Self(http_parser* parser) { return static_cast<Connection*>(parser->data); }

  static int OnUrl(http_parser* parser, const char* at, size_t length) {
    Self(parser)->request_.target.append(at, length);
    return 0;
  }
  static int OnHeaderField(http_parser* parser, const char* at, size_t length) {
    Connection* self = Self(parser);
    if (!self->header_value_.empty() || self->header_done_) self->StoreHeader();
    self->header_field_.append(at, length);
    return 0;
  }
  static int OnHeaderValue(http_parser* parser, const char* at, size_t length) {
    Self(parser)->header_value_.append(at, length);
    Self(parser)->header_done_ = true;
    return 0;
  }
  static int OnHeadersComplete(http_parser* parser) {
    Connection* self = Self(parser);
    if (!self->header_field_.empty()) self->StoreHeader();
    self->request_.method = http_method_str(static_cast<http_method>(parser->method));
    self->keep_alive_ = http_should_keep_alive(parser) != 0;
    return 0;
  }
  static int OnBody(http_parser* parser, const char* at, size_t length) {
    Self(parser)->request_.body.append(at, length);
    return 0;
  }
  static int OnMessageComplete(http_parser* parser) {
    http_parser_pause(parser, 1);
    return 0;
  }

  void StoreHeader() {
    std::transform(header_field_.begin(), header_field_.end(), header_field_.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    request_.headers[header_field_] = header_value_;
    header_field_.clear();
    header_value_.clear();
    header_done_ = false;
  }

  asio::ip::tcp::socket socket_;
  const HttpHandler& handler_;
  http_parser parser_;
  http_parser_settings settings_;
  HttpRequest request_;
  std::string header_field_;
  std::string header_value_;
  bool header_done_ = false;
  bool open_ = true;
  bool keep_alive_ = true;
  bool writing_ = false;
  bool response_done_ = false;
  std::deque<std::string> pending_;
  std::vector<std::function<void(int64_t)>> on_written_;  // of pieces in pending_
  asio::steady_timer waiter_{socket_.get_executor()};
};

const std::string& HttpRequest::Header(const std::string& name) const {
  static const std::string kEmpty;
  auto it = headers.find(name);
  return it == headers.end() ? kEmpty : it->second;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Unknown";
  }
}

namespace {

std::string Head(int status, const HeaderList& headers) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + ReasonPhrase(status) + "\r\n";
  for (const auto& [name, value] : headers)
    head += name + ": " + value + "\r\n";
  return head;
}

}  // namespace

void HttpResponder::Send(int status, const HeaderList& headers, std::string body) {
  if (finished_ || streaming_) return;
  finished_ = true;
  connection_->Queue(Head(status, headers) + "Content-Length: " + std::to_string(body.size()) +
                     "\r\n\r\n" + body);
  connection_->ResponseDone(true);
}

void HttpResponder::StartStream(int status, const HeaderList& headers) {
  if (finished_ || streaming_) return;
  streaming_ = true;
  connection_->Queue(Head(status, headers) + "Transfer-Encoding: chunked\r\n\r\n");
}

void HttpResponder::Write(std::string_view data, std::function<void(int64_t)> on_written) {
  if (!streaming_ || finished_ || data.empty()) return;
  char size[32];
  int length = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string frame(size, static_cast<size_t>(length));
  frame.append(data);
  frame += "\r\n";
  connection_->Queue(std::move(frame), std::move(on_written));
}

void HttpResponder::EndStream() {
  if (!streaming_ || finished_) return;
  finished_ = true;
  connection_->Queue("0\r\n\r\n");
  connection_->ResponseDone(true);
}

void HttpResponder::CloseMidStream() {
  if (finished_) return;
  finished_ = true;
  connection_->ResponseDone(false);
}

void HttpResponder::Abort() {
  finished_ = true;
  connection_->Reset();
}

bool HttpResponder::closed() const {
  return !connection_->open();
}

HttpServer::HttpServer(asio::io_context& io, HttpHandler handler)
    : io_(io), handler_(std::move(handler)), acceptor_(io) {}

HttpServer::~HttpServer() = default;

Status HttpServer::Listen(const std::string& host, uint16_t port) {
  asio::error_code error;
  asio::ip::address address = asio::ip::make_address(host, error);
  if (error) return Status::InvalidInput("not an IP address: " + host);
  asio::ip::tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error)
    return Status::IoError("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                           error.message());
  port_ = acceptor_.local_endpoint().port();
  asio::co_spawn(io_, Accept(), asio::detached);
  return Status::Ok();
}

asio::awaitable<void> HttpServer::Accept() {
  while (acceptor_.is_open()) {
    asio::error_code error;
    asio::ip::tcp::socket socket =
        co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (error) {
      if (error == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      continue;  // e.g. too many open files: keep serving the connections we have
    }
    socket.set_option(asio::ip::tcp::no_delay(true), error);
    auto connection = std::make_shared<Connection>(std::move(socket), handler_);
    std::erase_if(connections_, [](const std::weak_ptr<Connection>& c) { return c.expired(); });
    connections_.push_back(connection);
    asio::co_spawn(io_, connection->Serve(), asio::detached);
  }
}

void HttpServer::Stop() {
  asio::error_code ignored;
  acceptor_.close(ignored);
  for (const std::weak_ptr<Connection>& weak : connections_) {
    if (std::shared_ptr<Connection> connection = weak.lock()) connection->Close();
  }
  connections_.clear();
}

}  // namespace stagegate::sim
