#pragma once

#include <cstdint>
#include <optional>

namespace stagegate::http {

/// When the kernel received what a socket read returned.
///
/// A client that reads a thousand sockets one after another notices the last of them later than
/// its bytes arrived, and that delay would be counted as the server's. The kernel can stamp every
/// packet as it arrives (SO_TIMESTAMPNS); a read made with recvmsg returns, for the bytes it
/// copied, the stamp of the latest packet among them, so the stamp is never earlier than any of
/// those bytes arrived. libcurl reads its sockets with recv(), which drops such stamps, so this
/// file defines recv() for the process: it reads with recvmsg, returns exactly what recv would,
/// and keeps the stamp of the thread's latest read. A read that carries no stamp (the socket
/// never asked for them, TLS read through OpenSSL's read(), a kernel without them) leaves none,
/// and the caller falls back to its own clock.

/// Asks the kernel to stamp the packets `socket` receives from now on. False if it refuses.
bool EnableReceiveTimestamps(int socket);

/// The stamp (CLOCK_REALTIME, ns) of this thread's latest recv() if it was a read of `socket`
/// that returned bytes with a stamp, and ForgetLastReceive was not called after it.
std::optional<int64_t> LastReceiveRealtimeNs(int socket);

/// Drops the thread's latest stamp, so that a stamp is only ever used for the read that made it.
void ForgetLastReceive();

/// `realtime_ns` (a stamp, on CLOCK_REALTIME) on the steady clock (CLOCK_MONOTONIC), given the
/// steady clock's time now. The two clocks differ by an offset that moves only when the wall
/// clock is set; each thread measures it at most every 10 ms, between two readings of the steady
/// clock no more than a few microseconds apart, so a thread preempted between the readings does
/// not shift it.
int64_t RealtimeToSteadyNs(int64_t realtime_ns, int64_t steady_now_ns);

/// Keeps the kernel's receive stamping switched on while it lives. The kernel switches stamping
/// on a moment after the first socket asks for it (a deferred job), and packets that arrive in
/// between carry no stamp; so this asks on a loopback connection of its own and waits, up to
/// `wait_ms`, until a byte sent over it comes back stamped. The job is quick on an idle machine
/// and took over 200 ms on a loaded one, hence the long limit; once a wait has run out in a
/// process, later ones try once and do not wait. The connection stays open, so stamping stays
/// on for every other socket until this is destroyed.
class ReceiveStampingOn {
 public:
  explicit ReceiveStampingOn(int wait_ms = 2000);
  ~ReceiveStampingOn();
  ReceiveStampingOn(const ReceiveStampingOn&) = delete;
  ReceiveStampingOn& operator=(const ReceiveStampingOn&) = delete;
  /// A stamped byte came back in time.
  bool on() const { return on_; }

 private:
  int client_ = -1;
  int server_ = -1;
  bool on_ = false;
};

}  // namespace stagegate::http
