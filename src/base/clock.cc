#include "base/clock.h"

#include <chrono>
#include <ctime>

namespace stagegate {

int64_t SteadyClock::NowNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const SteadyClock& SteadyClock::Get() {
  static const SteadyClock kClock;
  return kClock;
}

int64_t WallUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

ClockAnchors ReadClockAnchors() {
  const int64_t before = SteadyClock::Get().NowNs();
  const int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  const int64_t after = SteadyClock::Get().NowNs();
  return {.wall_ns = wall, .steady_ns = before + (after - before) / 2};
}

std::string FormatUtc(int64_t unix_s, const char* format) {
  const std::time_t seconds = static_cast<std::time_t>(unix_s);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  const size_t n = std::strftime(text, sizeof text, format, &utc);
  return std::string(text, n);
}

int64_t WallNsAtSteady(int64_t steady_ns) {
  const int64_t now_steady = SteadyClock::Get().NowNs();
  const int64_t now_wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  return now_wall - (now_steady - steady_ns);
}

}  // namespace stagegate
