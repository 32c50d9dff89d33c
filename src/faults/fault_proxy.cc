#include "faults/fault_proxy.h"

#include <asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <future>

namespace stagegate::faults {
namespace {

using asio::ip::tcp;
using asio::experimental::awaitable_operators::operator&&;
using Mode = ProxyFault::Mode;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxRequestHead = 64 * 1024;
constexpr std::string_view kInjectedBody = R"({"error":"injected by stagegate's fault proxy"})";

auto Redirect(asio::error_code& error) {
  return asio::redirect_error(asio::use_awaitable, error);
}

Mode ModeOf(manifest::ProxyMode mode) {
  switch (mode) {
    case manifest::ProxyMode::kRefuse:
      return Mode::kRefuse;
    case manifest::ProxyMode::kReset:
      return Mode::kReset;
    case manifest::ProxyMode::kDelay:
      return Mode::kDelay;
    case manifest::ProxyMode::kHang:
      return Mode::kHang;
    case manifest::ProxyMode::kStatus:
      return Mode::kStatus;
    case manifest::ProxyMode::kTrickle:
      return Mode::kTrickle;
  }
  return Mode::kPass;
}

/// The Content-Length of a request head ("...\r\n\r\n"); 0 when absent or malformed.
int64_t ContentLength(std::string_view head) {
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::string_view kName = "\r\ncontent-length:";
  size_t at = lower.find(kName);
  if (at == std::string::npos) return 0;
  at = lower.find_first_not_of(' ', at + kName.size());
  int64_t length = 0;
  if (at != std::string::npos)
    std::from_chars(lower.data() + at, lower.data() + lower.size(), length);
  return std::max<int64_t>(length, 0);
}

/// Reads once from `socket` and drops the bytes; returns the read's error.
asio::awaitable<asio::error_code> ReadOnce(tcp::socket& socket) {
  std::array<char, 4096> buffer;
  asio::error_code error;
  co_await socket.async_read_some(asio::buffer(buffer), Redirect(error));
  co_return error;
}

/// Writes `data` in slices of about 50 ms worth each, paced by `next` (when the next slice is due).
asio::awaitable<asio::error_code> Trickle(tcp::socket& to, asio::steady_timer& pace,
                                          std::string_view data, int64_t bytes_per_s,
                                          Clock::time_point& next) {
  // After an idle upstream the schedule restarts now: no burst to catch up on the idle time.
  next = std::max(next, Clock::now());
  const size_t slice = static_cast<size_t>(std::max<int64_t>(1, bytes_per_s / 20));
  asio::error_code error;
  for (size_t offset = 0; offset < data.size() && !error; offset += slice) {
    pace.expires_at(next);
    co_await pace.async_wait(Redirect(error));
    if (error) break;
    const std::string_view piece = data.substr(offset, slice);
    co_await asio::async_write(to, asio::buffer(piece), Redirect(error));
    next +=
        std::chrono::nanoseconds(static_cast<int64_t>(piece.size()) * 1'000'000'000 / bytes_per_s);
  }
  co_return error;
}

/// Copies `from` to `to` (at `bytes_per_s` if it is not 0) until `from` ends, then half-closes
/// `to`. A reset or failed write on either side closes both sockets, which ends the other
/// direction too.
asio::awaitable<void> Pump(tcp::socket& from, tcp::socket& to, asio::steady_timer& pace,
                           int64_t bytes_per_s) {
  std::array<char, 16384> buffer;
  Clock::time_point next = Clock::now();
  asio::error_code error;
  while (!error) {
    const size_t n = co_await from.async_read_some(asio::buffer(buffer), Redirect(error));
    if (error == asio::error::eof) {
      to.shutdown(tcp::socket::shutdown_send, error);
      co_return;
    }
    if (error) break;
    const std::string_view data(buffer.data(), n);
    if (bytes_per_s == 0)
      co_await asio::async_write(to, asio::buffer(data), Redirect(error));
    else
      error = co_await Trickle(to, pace, data, bytes_per_s, next);
  }
  from.close(error);
  to.close(error);
}

/// Reads one HTTP request and answers it with `status` and the injected error body.
asio::awaitable<void> Answer(tcp::socket& client, int64_t status) {
  std::string request;
  asio::error_code error;
  const size_t head_size = co_await asio::async_read_until(
      client, asio::dynamic_buffer(request, kMaxRequestHead), "\r\n\r\n", Redirect(error));
  if (error) co_return;
  // Read the body too: closing with unread bytes would reset the connection, and the client could
  // lose the answer.
  int64_t unread = ContentLength(std::string_view(request).substr(0, head_size)) -
                   static_cast<int64_t>(request.size() - head_size);
  std::array<char, 16384> buffer;
  while (unread > 0) {
    unread -= static_cast<int64_t>(
        co_await client.async_read_some(asio::buffer(buffer), Redirect(error)));
    if (error) co_return;
  }
  const std::string response = "HTTP/1.1 " + std::to_string(status) +
                               " Injected Fault\r\nContent-Type: application/json\r\n"
                               "Content-Length: " +
                               std::to_string(kInjectedBody.size()) +
                               "\r\nConnection: close\r\n\r\n" + std::string(kInjectedBody);
  co_await asio::async_write(client, asio::buffer(response), Redirect(error));
  client.shutdown(tcp::socket::shutdown_send, error);
}

}  // namespace

/// One client connection, owned by FaultProxy::links_ and served by one Serve coroutine.
struct FaultProxy::Link {
  Link(tcp::socket socket, const ProxyFault& accepted_under)
      : client(std::move(socket)), fault(accepted_under) {}

  /// Ends every wait on this link, so its Serve coroutine winds up.
  void Close() {
    asio::error_code ignored;
    client.close(ignored);
    upstream.close(ignored);
    timer.cancel();
  }

  tcp::socket client;
  tcp::socket upstream{client.get_executor()};
  asio::steady_timer timer{client.get_executor()};  // the delay, then the trickle's pace
  const ProxyFault fault;
};

ProxyFault FaultOf(const manifest::Actuator& actuator) {
  return {.mode = ModeOf(actuator.mode),
          .delay_ms = actuator.delay_ms,
          .status = actuator.status,
          .bytes_per_s = actuator.bytes_per_s};
}

std::string_view ModeName(ProxyFault::Mode mode) {
  switch (mode) {
    case Mode::kPass:
      return "pass";
    case Mode::kRefuse:
      return "refuse";
    case Mode::kReset:
      return "reset";
    case Mode::kDelay:
      return "delay";
    case Mode::kHang:
      return "hang";
    case Mode::kStatus:
      return "status";
    case Mode::kTrickle:
      return "trickle";
  }
  return "unknown";
}

Result<std::unique_ptr<FaultProxy>> FaultProxy::Start(std::string upstream_host,
                                                      uint16_t upstream_port, uint16_t port) {
  std::unique_ptr<FaultProxy> proxy(new FaultProxy());
  asio::error_code error;
  proxy->upstream_ =
      tcp::resolver(proxy->io_).resolve(upstream_host, std::to_string(upstream_port), error);
  if (error)
    return Status::InvalidInput("cannot resolve the fault proxy's upstream " + upstream_host +
                                ": " + error.message());
  proxy->port_ = port;
  SG_RETURN_IF_ERROR(proxy->Listen());
  proxy->thread_ = std::thread([&io = proxy->io_] { io.run(); });
  return proxy;
}

FaultProxy::~FaultProxy() {
  Stop();
}

std::string FaultProxy::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void FaultProxy::Set(const ProxyFault& fault) {
  if (!thread_.joinable()) {
    std::lock_guard lock(fault_mutex_);
    fault_ = fault;
    return;
  }
  std::promise<void> applied;
  asio::post(io_, [this, &fault, &applied] {
    Apply(fault);
    applied.set_value();
  });
  applied.get_future().wait();
}

ProxyFault FaultProxy::fault() const {
  std::lock_guard lock(fault_mutex_);
  return fault_;
}

void FaultProxy::Stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    asio::error_code ignored;
    acceptor_.close(ignored);
    for (Link& link : links_)
      link.Close();
    // run() returns once every coroutine has seen its socket closed and wound up.
    work_.reset();
  });
  thread_.join();
}

Status FaultProxy::Listen() {
  const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), port_);
  asio::error_code error;
  acceptor_.open(endpoint.protocol(), error);
  // After refuse the same port is bound again while earlier connections on it linger.
  if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    asio::error_code ignored;
    acceptor_.close(ignored);
    return Status::IoError("cannot listen on 127.0.0.1:" + std::to_string(port_) + ": " +
                           error.message());
  }
  if (port_ == 0) port_ = acceptor_.local_endpoint().port();
  asio::co_spawn(io_, Accept(++listen_epoch_), asio::detached);
  return Status::Ok();
}

void FaultProxy::Apply(const ProxyFault& fault) {
  {
    std::lock_guard lock(fault_mutex_);
    fault_ = fault;
  }
  if (fault.mode != Mode::kHang) {
    for (Link& link : links_)
      if (link.fault.mode == Mode::kHang) link.Close();
  }
  if (fault.mode == Mode::kRefuse) {
    asio::error_code ignored;
    acceptor_.close(ignored);
  } else if (!acceptor_.is_open()) {
    // Set has no way to report a failure; the header documents that the proxy keeps refusing.
    (void)Listen();
  }
}

asio::awaitable<void> FaultProxy::Accept(uint64_t epoch) {
  while (true) {
    asio::error_code error;
    tcp::socket socket = co_await acceptor_.async_accept(Redirect(error));
    // The listener was closed (refuse or Stop), and perhaps reopened with its own loop, after
    // this connection arrived: it is turned away with this loop.
    if (epoch != listen_epoch_ || !acceptor_.is_open()) co_return;
    if (error) continue;
    ++connections_;
    // fault_ is only written on this thread: no lock needed to read it here.
    auto link = links_.emplace(links_.end(), std::move(socket), fault_);
    asio::co_spawn(io_, Serve(link), asio::detached);
  }
}

asio::awaitable<void> FaultProxy::Serve(std::list<Link>::iterator link) {
  switch (link->fault.mode) {
    case Mode::kPass:
    case Mode::kDelay:
    case Mode::kTrickle:
      co_await Forward(*link);
      break;
    case Mode::kRefuse:  // not reached: Accept serves nothing while the listener is closed
    case Mode::kReset:
      // Reset after the client's first bytes, so it sees the reset when it reads the answer
      // rather than sometimes as a failed send.
      if (!co_await ReadOnce(link->client)) {
        asio::error_code ignored;
        link->client.set_option(asio::socket_base::linger(true, 0), ignored);
      }
      break;
    case Mode::kHang:
      while (!co_await ReadOnce(link->client))
        ++hung_reads_;
      break;
    case Mode::kStatus:
      co_await Answer(link->client, link->fault.status);
      break;
  }
  link->Close();
  links_.erase(link);
}

asio::awaitable<void> FaultProxy::Forward(Link& link) {
  asio::error_code error;
  if (link.fault.mode == Mode::kDelay) {
    link.timer.expires_after(std::chrono::milliseconds(link.fault.delay_ms));
    co_await link.timer.async_wait(Redirect(error));
  }
  // A closed client means Stop came during the delay: do not open an upstream connection.
  if (error || !link.client.is_open()) co_return;
  co_await asio::async_connect(link.upstream, upstream_, Redirect(error));
  if (error) co_return;
  const int64_t bytes_per_s =
      link.fault.mode == Mode::kTrickle ? std::max<int64_t>(1, link.fault.bytes_per_s) : 0;
  co_await (Pump(link.client, link.upstream, link.timer, 0) &&
            Pump(link.upstream, link.client, link.timer, bytes_per_s));
}

}  // namespace stagegate::faults
