#include "http/transport.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/clock.h"
#include "http/receive_time.h"

namespace stagegate::http {
namespace {

constexpr int kMaxEvents = 256;

}  // namespace

Result<std::unique_ptr<MultiTransport>> MultiTransport::Create() {
  EnsureCurlGlobalInit();
  std::unique_ptr<MultiTransport> transport(new MultiTransport());
  transport->multi_.reset(curl_multi_init());
  if (!transport->multi_) return Status::Internal("curl_multi_init failed");
  transport->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  transport->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (transport->epoll_fd_ < 0 || transport->wake_fd_ < 0)
    return Status::IoError(std::string("epoll/eventfd: ") + std::strerror(errno));
  epoll_event wake{.events = EPOLLIN, .data = {.fd = transport->wake_fd_}};
  epoll_ctl(transport->epoll_fd_, EPOLL_CTL_ADD, transport->wake_fd_, &wake);

  CURLM* multi = transport->multi_.get();
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &MultiTransport::OnSocket);
  curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, transport.get());
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &MultiTransport::OnTimer);
  curl_multi_setopt(multi, CURLMOPT_TIMERDATA, transport.get());
  // One multi handle serves thousands of streams, each holding its connection until it ends.
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 100000L);
  // Sleeps end when asked, not up to 50 µs later (the default timer slack of a thread).
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  return transport;
}

MultiTransport::~MultiTransport() {
  multi_.reset();  // its sockets leave the epoll set through OnSocket first
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

int MultiTransport::OnSocket(CURL* easy, curl_socket_t socket, int what, void* self_ptr, void*) {
  auto* self = static_cast<MultiTransport*>(self_ptr);
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(self->epoll_fd_, EPOLL_CTL_DEL, socket, nullptr);
    return 0;
  }
  Transfer* transfer = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &transfer);
  if (transfer != nullptr) transfer->OnSocket(socket);
  epoll_event event{};
  event.data.fd = socket;
  if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) event.events |= EPOLLIN;
  if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) event.events |= EPOLLOUT;
  if (epoll_ctl(self->epoll_fd_, EPOLL_CTL_MOD, socket, &event) != 0 && errno == ENOENT)
    epoll_ctl(self->epoll_fd_, EPOLL_CTL_ADD, socket, &event);
  return 0;
}

int MultiTransport::OnTimer(CURLM*, long timeout_ms, void* self_ptr) {
  auto* self = static_cast<MultiTransport*>(self_ptr);
  self->curl_deadline_ns_ =
      timeout_ms < 0 ? -1 : SteadyClock::Get().NowNs() + int64_t{timeout_ms} * 1'000'000;
  return 0;
}

bool MultiTransport::Add(Transfer* transfer) {
  curl_easy_setopt(transfer->easy(), CURLOPT_PRIVATE, transfer);
  return curl_multi_add_handle(multi_.get(), transfer->easy()) == CURLM_OK;
}

void MultiTransport::Remove(Transfer* transfer) {
  curl_multi_remove_handle(multi_.get(), transfer->easy());
}

void MultiTransport::Wakeup() {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

void MultiTransport::WaitAndDrive(int64_t deadline_ns, int max_wait_ms) {
  int64_t now = SteadyClock::Get().NowNs();
  int64_t until = now + int64_t{max_wait_ms} * 1'000'000;
  if (deadline_ns >= 0) until = std::min(until, deadline_ns);
  if (curl_deadline_ns_ >= 0) until = std::min(until, curl_deadline_ns_);
  epoll_event events[kMaxEvents];
  int ready = 0;
  // Shortly after a socket was ready, more are likely to be: look without sleeping, since a
  // thread put to sleep can take a hundred microseconds or more to wake (a virtual machine's
  // idle CPU), and every chunk in a burst would be noticed that much later.
  const int64_t spin_until = std::min(until, last_ready_ns_ + spin_ns_);
  const int64_t spin_start = now;
  while (now < spin_until) {
    ready = epoll_wait(epoll_fd_, events, kMaxEvents, 0);
    if (ready != 0) break;
    now = SteadyClock::Get().NowNs();
  }
  idle_spin_ns_ += now - spin_start;
  if (ready == 0) {
    const int64_t wait_ns = std::max<int64_t>(0, until - now);
    const timespec timeout{.tv_sec = wait_ns / 1'000'000'000, .tv_nsec = wait_ns % 1'000'000'000};
    ready = epoll_pwait2(epoll_fd_, events, kMaxEvents, &timeout, nullptr);
  }
  if (ready > 0) last_ready_ns_ = SteadyClock::Get().NowNs();
  for (int i = 0; i < ready; ++i) {
    const int fd = events[i].data.fd;
    if (fd == wake_fd_) {
      uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof count);
      continue;
    }
    int flags = 0;
    if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) flags |= CURL_CSELECT_IN;
    if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
    if (events[i].events & EPOLLERR) flags |= CURL_CSELECT_ERR;
    Drive(fd, flags);
  }
  if (curl_deadline_ns_ >= 0 && SteadyClock::Get().NowNs() >= curl_deadline_ns_) {
    curl_deadline_ns_ = -1;
    Drive(CURL_SOCKET_TIMEOUT, 0);
  }
  Reap();
}

void MultiTransport::Drive(curl_socket_t socket, int flags) {
  // A receive stamp belongs to the read that made it, never to a later action.
  ForgetLastReceive();
  int running = 0;
  curl_multi_socket_action(multi_.get(), socket, flags, &running);
}

void MultiTransport::Reap() {
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_.get(), &queued)) {
    if (message->msg != CURLMSG_DONE) continue;
    CURL* easy = message->easy_handle;
    const CURLcode code = message->data.result;
    Transfer* transfer = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &transfer);
    curl_multi_remove_handle(multi_.get(), easy);
    if (transfer != nullptr) transfer->OnDone(code);
  }
}

}  // namespace stagegate::http
