#pragma once

#include <atomic>
#include <cstdint>

#include "base/clock.h"

namespace stagegate {

/// A clock that moves only when told: what a test, or the scripted transport
/// (http/scripted_transport.h), runs the load engine on, so that every time in a record is
/// exact and no phase waits on real time. Thread-safe; it never moves back.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_ns = 1'000'000'000) : now_(start_ns) {}
  int64_t NowNs() const override { return now_.load(std::memory_order_acquire); }
  /// Moves to `ns`, or stays where it is when that is not later.
  void AdvanceTo(int64_t ns) {
    int64_t now = now_.load(std::memory_order_relaxed);
    while (ns > now && !now_.compare_exchange_weak(now, ns, std::memory_order_acq_rel)) {
    }
  }
  void Advance(int64_t ns) { AdvanceTo(NowNs() + ns); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace stagegate
