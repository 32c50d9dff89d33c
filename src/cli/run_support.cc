#include "cli/run_support.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/clock.h"
#include "base/files.h"
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
  char stamp[32];
  const time_t now = time(nullptr);
  tm utc{};
  gmtime_r(&now, &utc);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  std::random_device device;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", device() & 0xFFFF);
  return prefix + "-" + stamp + "-" + suffix;
}

Status WriteRequestsJsonl(const std::string& path, std::span<const load::RequestRecord> records) {
  // Line by line, not as one string: a long run has millions of records.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    std::string lines;
    lines.reserve(2 << 20);
    for (const load::RequestRecord& record : records) {
      load::AppendRecordLine(record, lines);
      if (lines.size() > (1 << 20)) {
        out << lines;
        lines.clear();
      }
    }
    out << lines;
    if (!out.flush()) return Status::IoError(temporary + ": write failed");
  }
  std::error_code renamed;
  std::filesystem::rename(temporary, path, renamed);
  if (renamed) return Status::IoError(path + ": " + renamed.message());
  return Status::Ok();
}

Status WriteAiperfExport(const std::string& dir, const load::AiperfExportInput& input) {
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return Status::IoError(dir + ": " + made.message());
  const nlohmann::json aiperf = load::AiperfJson(input);
  SG_RETURN_IF_ERROR(WriteFileAtomically(
      dir + "/profile_export_aiperf.json",
      aiperf.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  return WriteFileAtomically(dir + "/profile_export_aiperf.csv", load::AiperfCsv(aiperf));
}

int64_t WallNsAtSteady(int64_t steady_ns) {
  const int64_t now_steady = SteadyClock::Get().NowNs();
  const int64_t now_wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  return now_wall - (now_steady - steady_ns);
}

}  // namespace stagegate::cli
