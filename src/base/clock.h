#pragma once

#include <cstdint>
#include <string>

namespace stagegate {

/// A monotonic clock in nanoseconds, the seam through which the load engine reads time. The real
/// one is std::chrono::steady_clock (CLOCK_MONOTONIC on Linux, the clock of epoll and of the
/// reference application's timestamps). Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  /// Nanoseconds since an arbitrary origin that stays fixed for the process.
  virtual int64_t NowNs() const = 0;
};

class SteadyClock : public Clock {
 public:
  int64_t NowNs() const override;
  /// The process-wide instance.
  static const SteadyClock& Get();
};

/// Wall-clock time in ms since the Unix epoch: the one display anchor of a run, never used to
/// measure a duration.
int64_t WallUnixMs();

/// The wall clock (ns since the Unix epoch) and the steady clock read together: the steady
/// reading is the midpoint of two taken either side of the wall one. What a sharded run keeps
/// so that shards on different machines can be set on one timeline.
struct ClockAnchors {
  int64_t wall_ns = 0;
  int64_t steady_ns = 0;
};
ClockAnchors ReadClockAnchors();

/// Wall-clock ns since the Unix epoch at the steady-clock reading `steady_ns` (SteadyClock's
/// origin), from one reading of each clock now.
int64_t WallNsAtSteady(int64_t steady_ns);

/// `unix_s` (seconds since the Unix epoch) in UTC, through strftime's `format`.
std::string FormatUtc(int64_t unix_s, const char* format);

}  // namespace stagegate
