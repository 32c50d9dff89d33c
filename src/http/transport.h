#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/curl_handles.h"

namespace stagegate::http {

/// One HTTP exchange driven by a Transport: the owner configures easy() (URL, body, callbacks)
/// before Add and learns the end through OnDone. A transport without curl (ScriptedTransport)
/// reads what is asked from request() and delivers the response through OnSent, OnStatus,
/// OnHeader and OnBody, as curl's callbacks would.
class Transfer {
 public:
  virtual ~Transfer() = default;
  virtual CURL* easy() = 0;
  /// What the transfer asks, for a transport that answers it without curl.
  struct Request {
    std::string_view url;
    std::string_view body;
    int64_t total_timeout_ms = 0;          // 0: none
    std::span<const std::string> headers;  // "Name: value", as sent (credentials among them)
  };
  virtual Request request() const { return {}; }
  /// The request has been written (curl's CURLOPT_PREREQFUNCTION).
  virtual void OnSent() {}
  /// The response's status, before its header lines.
  virtual void OnStatus(long status) { (void)status; }
  /// One header line with its CRLF, the status line first (curl's CURLOPT_HEADERFUNCTION).
  virtual size_t OnHeader(std::string_view line) { return line.size(); }
  /// Body bytes (curl's CURLOPT_WRITEFUNCTION); fewer taken than given ends the transfer.
  virtual size_t OnBody(std::string_view bytes) { return bytes.size(); }
  /// curl finished the transfer with `code` (CURLE_OK also for HTTP error statuses). The
  /// transport has already removed it; the owner may destroy or reuse it from here on.
  virtual void OnDone(CURLcode code) = 0;
  /// The transfer uses `socket`. Called when curl starts or changes waiting on a socket for the
  /// transfer's easy handle, but not again for a later transfer of the same easy handle that
  /// reuses the same connection: an owner that reuses its easy handle keeps the last socket.
  virtual void OnSocket(int socket) { (void)socket; }
};

/// What a worker drives its transfers through, on one thread: MultiTransport over sockets, or
/// ScriptedTransport (http/scripted_transport.h), which answers without one on a fake clock.
class Transport {
 public:
  virtual ~Transport() = default;
  /// Starts `transfer`, which must stay alive until its OnDone or Remove. Returns false when
  /// it cannot be started (then nothing was).
  virtual bool Add(Transfer* transfer) = 0;
  /// Stops `transfer` without calling OnDone (cancel, first-token timeout).
  virtual void Remove(Transfer* transfer) = 0;
  /// Waits until something is due or `deadline_ns` (on the worker's clock; negative: none) or
  /// `max_wait_ms` has passed; then moves the transfers along, and calls OnDone for those that
  /// ended.
  virtual void WaitAndDrive(int64_t deadline_ns, int max_wait_ms) = 0;
  /// Ends a WaitAndDrive early. Thread-safe.
  virtual void Wakeup() = 0;
  /// Polls without ever sleeping (MultiTransport::set_busy_poll); others ignore it.
  virtual void set_busy_poll() {}
  /// Time spent polling and finding nothing ready.
  virtual int64_t idle_spin_ns() const { return 0; }
};

/// Makes a worker's transport. Empty: MultiTransport::Create.
using TransportFactory = std::function<Result<std::unique_ptr<Transport>>()>;

/// Event-driven transport over one curl multi handle and one epoll set, for one thread: every
/// call must come from the thread that owns it, except Wakeup. curl's socket interface
/// (curl_multi_socket_action) is driven from epoll, so a wake-up costs in proportion to the
/// sockets that are ready, not to the transfers in flight. Connections are cached in the multi
/// handle and reused (keep-alive) by later transfers to the same host.
class MultiTransport : public Transport {
 public:
  static constexpr int64_t kDefaultSpinNs = 100'000;
  static Result<std::unique_ptr<MultiTransport>> Create();
  ~MultiTransport();
  MultiTransport(const MultiTransport&) = delete;
  MultiTransport& operator=(const MultiTransport&) = delete;

  /// Starts `transfer`, which must stay alive until its OnDone or Remove. Returns false when
  /// curl refuses it (then nothing was started).
  bool Add(Transfer* transfer) override;
  /// Stops `transfer` without calling OnDone (cancel, first-token timeout).
  void Remove(Transfer* transfer) override;
  /// Waits until a socket is ready, curl's own timer is due, Wakeup is called, `deadline_ns`
  /// (steady clock, to the nanosecond; negative: none) or `max_wait_ms` has passed; then lets
  /// curl move the ready transfers along, and calls OnDone for those that ended.
  void WaitAndDrive(int64_t deadline_ns, int max_wait_ms) override;
  /// Ends a WaitAndDrive early. Thread-safe.
  void Wakeup() override;
  /// For how long after a socket was last ready WaitAndDrive looks again without sleeping
  /// (busy polling), in ns; 0: it always sleeps. Spinning costs CPU only while sockets keep
  /// becoming ready; it spares each of them the time a sleeping thread takes to wake.
  void set_spin_ns(int64_t spin_ns) { spin_ns_ = spin_ns; }
  /// Busy polling that never sleeps: for a client with a core of its own, where the time a
  /// sleeping thread takes to wake must not reach the measurements.
  void set_busy_poll() override { spin_ns_ = std::numeric_limits<int64_t>::max() / 2; }
  /// Time spent polling and finding nothing ready: CPU time that did no work.
  int64_t idle_spin_ns() const override { return idle_spin_ns_; }

 private:
  MultiTransport() = default;
  static int OnSocket(CURL* easy, curl_socket_t socket, int what, void* self, void* socket_data);
  static int OnTimer(CURLM* multi, long timeout_ms, void* self);
  void Drive(curl_socket_t socket, int flags);
  void Reap();

  MultiHandle multi_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;               // an eventfd in the epoll set, for Wakeup
  int64_t curl_deadline_ns_ = -1;  // when curl wants its timeout action; -1: none
  int64_t spin_ns_ = kDefaultSpinNs;
  int64_t last_ready_ns_ = -1'000'000'000'000;  // when a socket was last ready
  int64_t idle_spin_ns_ = 0;
};

}  // namespace stagegate::http
