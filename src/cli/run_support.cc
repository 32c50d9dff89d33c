#include "cli/run_support.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/clock.h"
#include "base/files.h"
#include "base/strings.h"
#include "load/record_json.h"

namespace stagegate::cli {
StopOnSignal::StopOnSignal(std::atomic<bool>& stop) : stop_(stop) {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
  watcher_ = std::thread([this] {
    const timespec tick{.tv_sec = 0, .tv_nsec = 50'000'000};
    while (!done_.load()) {
      if (sigtimedwait(&signals_, nullptr, &tick) > 0) stop_.store(true);
    }
  });
}

StopOnSignal::~StopOnSignal() {
  done_.store(true);
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

std::string NewRunId(const std::string& prefix) {
  const std::string stamp = FormatUtc(time(nullptr), "%Y%m%d-%H%M%S");
  std::random_device device;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", device() & 0xFFFF);
  return prefix + "-" + stamp + "-" + suffix;
}

Result<load::Shard> ShardOption(const std::string& text) {
  if (!text.starts_with("job/")) return load::ParseShard(text);
  const char* value = std::getenv("JOB_COMPLETION_INDEX");
  const std::optional<int64_t> index = value ? ParseWholeNumber(value) : std::optional<int64_t>();
  const std::optional<int64_t> count = ParseWholeNumber(std::string_view(text).substr(4));
  if (!count || *count < 1)
    return Status::InvalidInput("shard '" + text + "': expected job/N, N a whole number from 1");
  if (!index || *index >= *count)
    return Status::InvalidInput(
        "shard '" + text + "': JOB_COMPLETION_INDEX " +
        (value ? "is '" + std::string(value) + "', not an index from 0 to " +
                     std::to_string(*count - 1)
               : std::string("is not set (it is set in the pods of an Indexed Job)")));
  return load::Shard{.index = *index, .count = *count};
}

Result<int64_t> StartAtOption(const std::string& text) {
  const auto bad = [&text] {
    return Status::InvalidInput("--start-at '" + text +
                                "': expected RFC 3339 with a zone, e.g. 2026-12-02T10:00:00Z, "
                                "or Unix milliseconds");
  };
  // Within a week of now either way: a start further off is a mistake, and its ns would not fit.
  const auto near = [&text](int64_t ms) -> Result<int64_t> {
    constexpr int64_t kWeekMs = 7LL * 86'400'000;
    if (ms < WallUnixMs() - kWeekMs || ms > WallUnixMs() + kWeekMs)
      return Status::InvalidInput("--start-at '" + text + "': more than a week from now");
    return ms;
  };
  if (std::optional<int64_t> ms = ParseWholeNumber(text)) return near(*ms);
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return bad();
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  if (*rest == '.') {
    int64_t scale = 100;
    for (++rest; std::isdigit(static_cast<unsigned char>(*rest)); ++rest, scale /= 10)
      ms += (*rest - '0') * scale;  // digits past the millisecond add nothing
  }
  if (*rest == 'Z' || *rest == 'z') return rest[1] == '\0' ? near(ms) : bad();
  int hours = 0, minutes = 0;
  char sign = 0, end = 0;
  if (std::sscanf(rest, "%c%2d:%2d%c", &sign, &hours, &minutes, &end) != 3 ||
      (sign != '+' && sign != '-') || hours > 23 || minutes > 59 || std::strlen(rest) != 6)
    return bad();
  const int64_t offset_ms = (hours * 60 + minutes) * 60'000;
  return near(sign == '+' ? ms - offset_ms : ms + offset_ms);
}

}  // namespace stagegate::cli
