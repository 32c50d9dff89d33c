#include "cli/run_support.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
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

}  // namespace stagegate::cli
