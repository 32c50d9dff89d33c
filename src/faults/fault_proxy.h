#pragma once

#include <asio.hpp>

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "base/status.h"
#include "manifest/scenario.h"

namespace stagegate::faults {

/// What the proxy does to connections, switched at any time from any thread.
struct ProxyFault {
  enum class Mode { kPass, kRefuse, kReset, kDelay, kHang, kStatus, kTrickle };
  Mode mode = Mode::kPass;
  int64_t delay_ms = 0;      // kDelay: wait this long before connecting upstream, then pass
  int64_t status = 503;      // kStatus: answer every HTTP request with this status
  int64_t bytes_per_s = 16;  // kTrickle: forward the upstream's response at this rate (min 1)
};

/// ProxyFault from a scenario's actuator (kRefuse -> kRefuse, ... one to one).
ProxyFault FaultOf(const manifest::Actuator& actuator);
/// "pass", "refuse", "reset", "delay", "hang", "status" or "trickle".
std::string_view ModeName(ProxyFault::Mode mode);

/// A TCP proxy on 127.0.0.1 in front of an upstream service, on its own thread. Modes:
/// - pass: bytes both ways unchanged, each client connection to its own upstream connection,
///   half-closes propagated;
/// - refuse: the listening socket is closed, so connect() gets ECONNREFUSED; it is reopened on the
///   same port when the mode changes (if another process took the port meanwhile, the proxy keeps
///   refusing);
/// - reset: a new connection is reset (SO_LINGER 0 and close) once the client has sent something,
///   so the client sees ECONNRESET on receive;
/// - delay: as pass, after delay_ms;
/// - hang: accepted and read, never answered, never closed until the mode changes or Stop;
/// - status: each HTTP request, read up to the end of its headers and its Content-Length body, is
///   answered with `status`, a JSON error body and Connection: close;
/// - trickle: as pass, but the upstream's bytes reach the client at bytes_per_s.
/// A mode applies to connections accepted after Set; connections that are open keep the mode they
/// were accepted under, except hung ones, which are closed when the mode changes.
class FaultProxy {
 public:
  /// Resolves the upstream and listens on 127.0.0.1:`port` (0: any free port) in pass mode.
  static Result<std::unique_ptr<FaultProxy>> Start(std::string upstream_host,
                                                   uint16_t upstream_port, uint16_t port = 0);
  ~FaultProxy();  // Stop()
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:<port>"
  /// Thread-safe; returns once the change is in effect (the listener closed for refuse, hung
  /// connections closed). After Stop it only records the fault.
  void Set(const ProxyFault& fault);
  ProxyFault fault() const;
  int64_t connections() const { return connections_; }  // accepted so far
  int64_t hung_reads() const { return hung_reads_; }    // reads held unanswered in hang mode
  /// Closes the listener and every connection and joins the thread; idempotent. Not concurrent
  /// with Set.
  void Stop();

 private:
  struct Link;
  FaultProxy() = default;

  // Everything below runs on the proxy's thread.
  Status Listen();
  void Apply(const ProxyFault& fault);
  asio::awaitable<void> Accept(uint64_t epoch);
  asio::awaitable<void> Serve(std::list<Link>::iterator link);
  asio::awaitable<void> Forward(Link& link);

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  asio::ip::tcp::acceptor acceptor_{io_};
  asio::ip::tcp::resolver::results_type upstream_;
  uint16_t port_ = 0;
  uint64_t listen_epoch_ = 0;  // one Accept loop per opening of the listener
  std::list<Link> links_;      // open client connections; declared after io_, destroyed first
  std::atomic<int64_t> connections_ = 0;
  std::atomic<int64_t> hung_reads_ = 0;
  mutable std::mutex fault_mutex_;
  ProxyFault fault_;  // guarded by fault_mutex_; written on the proxy's thread
  std::thread thread_;
};

}  // namespace stagegate::faults
