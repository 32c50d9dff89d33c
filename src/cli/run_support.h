#pragma once

// What `profile` and `run` share: the stop on SIGINT and run ids.

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "load/aiperf_export.h"
#include "load/request_record.h"
#include "load/schedule.h"

namespace stagegate::cli {

/// Blocks SIGINT and SIGTERM in this thread and every thread it starts afterwards, and turns
/// their arrival into `stop` on a watcher thread (sigtimedwait: no handler, nothing async).
class StopOnSignal {
 public:
  explicit StopOnSignal(std::atomic<bool>& stop);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  std::atomic<bool>& stop_;
  std::atomic<bool> done_{false};
  sigset_t signals_{}, previous_{};
  std::thread watcher_;
};

/// "<prefix>-20261130-193042-de2d": UTC time and 16 random bits.
std::string NewRunId(const std::string& prefix);

}  // namespace stagegate::cli
