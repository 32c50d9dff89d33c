#include "http/receive_time.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace stagegate::http {
namespace {

struct LastReceive {
  int socket = -1;  // -1: none
  int64_t realtime_ns = 0;
};

thread_local LastReceive last_receive;

// A wait for the kernel's stamping ran out once: it is not coming in this process.
std::atomic<bool> stamping_never_came{false};

int64_t Nanoseconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

bool EnableReceiveTimestamps(int socket) {
  const int on = 1;
  return setsockopt(socket, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
}

std::optional<int64_t> LastReceiveRealtimeNs(int socket) {
  if (socket < 0 || last_receive.socket != socket) return std::nullopt;
  return last_receive.realtime_ns;
}

void ForgetLastReceive() {
  last_receive.socket = -1;
}

int64_t RealtimeToSteadyNs(int64_t realtime_ns, int64_t steady_now_ns) {
  constexpr int64_t kRefreshNs = 10'000'000;
  constexpr int64_t kTightNs = 2'000;
  thread_local int64_t offset_ns = 0;  // realtime - steady
  thread_local int64_t measured_at_ns = -kRefreshNs;
  if (steady_now_ns - measured_at_ns >= kRefreshNs) {
    // The wall clock read between two steady readings: the narrowest of a few tries.
    int64_t best_width = INT64_MAX;
    for (int attempt = 0; attempt < 4 && best_width > kTightNs; ++attempt) {
      const int64_t before = Nanoseconds(CLOCK_MONOTONIC);
      const int64_t wall = Nanoseconds(CLOCK_REALTIME);
      const int64_t after = Nanoseconds(CLOCK_MONOTONIC);
      if (after - before < best_width) {
        best_width = after - before;
        offset_ns = wall - (before + (after - before) / 2);
        measured_at_ns = after;
      }
    }
  }
  return realtime_ns - offset_ns;
}

ReceiveStampingOn::ReceiveStampingOn(int wait_ms) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      listen(listener, 1) == 0 &&
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    client_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (client_ >= 0 && EnableReceiveTimestamps(client_) &&
        connect(client_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
      server_ = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  }
  close(listener);
  if (server_ < 0) return;
  const timeval limit{.tv_sec = 1, .tv_usec = 0};
  setsockopt(client_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  if (stamping_never_came.load()) wait_ms = 0;
  const int64_t give_up = Nanoseconds(CLOCK_MONOTONIC) + int64_t{wait_ms} * 1'000'000;
  char byte = 0;
  do {
    if (send(server_, &byte, 1, MSG_NOSIGNAL) != 1 || recv(client_, &byte, 1, 0) != 1) return;
    on_ = LastReceiveRealtimeNs(client_).has_value();
    if (!on_) usleep(1000);
  } while (!on_ && Nanoseconds(CLOCK_MONOTONIC) < give_up);
  if (!on_) stamping_never_came.store(true);
  ForgetLastReceive();
}

ReceiveStampingOn::~ReceiveStampingOn() {
  if (client_ >= 0) close(client_);
  if (server_ >= 0) close(server_);
}

}  // namespace stagegate::http

// recv() for the whole process (see receive_time.h): the same call as glibc's, made through
// recvmsg so that the kernel's receive stamp comes back with the bytes. The executable's
// definition comes first in the dynamic linker's search, so libcurl's reads land here.
extern "C" ssize_t recv(int socket, void* buffer, size_t length, int flags) {
  using stagegate::http::last_receive;
  iovec part{.iov_base = buffer, .iov_len = length};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  const ssize_t n = recvmsg(socket, &message, flags);
  last_receive.socket = -1;
  if (n <= 0 || (flags & MSG_PEEK) != 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec stamp{};
    std::memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
    last_receive.socket = socket;
    last_receive.realtime_ns = int64_t{stamp.tv_sec} * 1'000'000'000 + stamp.tv_nsec;
  }
  return n;
}
