#include "sim/tool_client.h"

#include <http_parser.h>

#include <memory>

namespace stagegate::sim {

namespace {

struct Url {
  std::string host;
  std::string port;
  std::string path;
};

bool ParseUrl(const std::string& url, Url& out) {
  http_parser_url parts;
  http_parser_url_init(&parts);
  if (http_parser_parse_url(url.data(), url.size(), 0, &parts) != 0) return false;
  auto field = [&](int f) {
    return (parts.field_set & (1 << f))
               ? url.substr(parts.field_data[f].off, parts.field_data[f].len)
               : std::string();
  };
  out.host = field(UF_HOST);
  out.port = field(UF_PORT);
  out.path = field(UF_PATH);
  if (out.port.empty()) out.port = "80";
  if (out.path.empty()) out.path = "/";
  if (parts.field_set & (1 << UF_QUERY)) out.path += "?" + field(UF_QUERY);
  return !out.host.empty();
}

// One call in flight: owns the socket, the deadline and the response parser.
class Call : public std::enable_shared_from_this<Call> {
 public:
  Call(asio::io_context& io, std::function<void(ToolResponse)> done)
      : socket_(io), deadline_(io), resolver_(io), done_(std::move(done)) {
    http_parser_settings_init(&settings_);
    settings_.on_status = [](http_parser*, const char*, size_t) { return 0; };
    settings_.on_body = [](http_parser* p, const char* at, size_t length) {
      static_cast<Call*>(p->data)->response_.body.append(at, length);
      return 0;
    };
    settings_.on_message_complete = [](http_parser* p) {
      static_cast<Call*>(p->data)->complete_ = true;
      return 0;
    };
    http_parser_init(&parser_, HTTP_RESPONSE);
    parser_.data = this;
  }

  void Start(const Url& url, std::string body, std::chrono::milliseconds timeout) {
    request_ =
        "POST " + url.path + " HTTP/1.1\r\nHost: " + url.host + ":" + url.port +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n\r\n" + body;
    timeout_ms_ = timeout.count();
    deadline_.expires_after(timeout);
    deadline_.async_wait([self = shared_from_this()](asio::error_code error) {
      if (!error) self->Finish("timed out after " + std::to_string(self->timeout_ms_) + " ms");
    });
    resolver_.async_resolve(
        url.host, url.port,
        [self = shared_from_this()](asio::error_code error,
                                    asio::ip::tcp::resolver::results_type results) {
          if (error) return self->Finish("cannot resolve: " + error.message());
          asio::async_connect(self->socket_, results, [self](asio::error_code e, const auto&) {
            if (e) return self->Finish(e.message());
            self->Send();
          });
        });
  }

 private:
  void Send() {
    asio::async_write(socket_, asio::buffer(request_),
                      [self = shared_from_this()](asio::error_code error, size_t) {
                        if (error) return self->Finish(error.message());
                        self->Read();
                      });
  }

  void Read() {
    socket_.async_read_some(
        asio::buffer(buffer_), [self = shared_from_this()](asio::error_code error, size_t n) {
          if (n > 0) {
            http_parser_execute(&self->parser_, &self->settings_, self->buffer_.data(), n);
            if (HTTP_PARSER_ERRNO(&self->parser_) != HPE_OK)
              return self->Finish(std::string("malformed response: ") +
                                  http_errno_description(HTTP_PARSER_ERRNO(&self->parser_)));
            if (self->complete_) {
              self->response_.ok = true;
              self->response_.status = static_cast<int>(self->parser_.status_code);
              return self->Finish("");
            }
          }
          if (error == asio::error::eof) {
            http_parser_execute(&self->parser_, &self->settings_, nullptr, 0);
            if (self->complete_) {
              self->response_.ok = true;
              self->response_.status = static_cast<int>(self->parser_.status_code);
              return self->Finish("");
            }
            return self->Finish("connection closed before the response was complete");
          }
          if (error) return self->Finish(error.message());
          self->Read();
        });
  }

  void Finish(const std::string& error) {
    if (finished_) return;
    finished_ = true;
    asio::error_code ignored;
    deadline_.cancel();
    resolver_.cancel();
    socket_.close(ignored);
    if (!response_.ok) {
      response_.error = error;
      response_.body.clear();
    }
    done_(std::move(response_));
  }

  asio::ip::tcp::socket socket_;
  asio::steady_timer deadline_;
  asio::ip::tcp::resolver resolver_;
  std::function<void(ToolResponse)> done_;
  http_parser parser_;
  http_parser_settings settings_;
  std::array<char, 8192> buffer_;
  std::string request_;
  ToolResponse response_;
  int64_t timeout_ms_ = 0;
  bool complete_ = false;
  bool finished_ = false;
};

}  // namespace

void PostJson(asio::io_context& io, const std::string& url, std::string body,
              std::chrono::milliseconds timeout, std::function<void(ToolResponse)> done) {
  Url parsed;
  if (!ParseUrl(url, parsed)) {
    asio::post(io, [done = std::move(done), url] {
      done(ToolResponse{.ok = false, .error = "not a URL: " + url});
    });
    return;
  }
  std::make_shared<Call>(io, std::move(done))->Start(parsed, std::move(body), timeout);
}

}  // namespace stagegate::sim
