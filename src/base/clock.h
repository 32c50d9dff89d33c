#pragma once

#include <cstdint>

namespace stagegate {

/// A monotonic clock in nanoseconds. The real one is std::chrono::steady_clock (CLOCK_MONOTONIC on
/// Linux, so its readings can arm a timerfd); tests use FakeClock. Implementations are thread-safe.
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

/// A clock that moves only when told. Not thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_ns = 0) : now_ns_(start_ns) {}
  int64_t NowNs() const override { return now_ns_; }
  void Advance(int64_t ns) { now_ns_ += ns; }
  void Set(int64_t ns) { now_ns_ = ns; }

 private:
  int64_t now_ns_;
};

/// Wall-clock time in ms since the Unix epoch: the one display anchor of a run, never used to
/// measure a duration.
int64_t WallUnixMs();

}  // namespace stagegate
