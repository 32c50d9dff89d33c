#pragma once

// What `profile` and `run` share: the stop on SIGINT, run ids, --shard and --start-at.

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

/// `--shard`: "I/N" (load::ParseShard), or "job/N", which takes I from a Kubernetes Indexed
/// Job's JOB_COMPLETION_INDEX (counted from 0, so I is it + 1). InvalidInput names the text, or
/// the variable when it is missing or not an index below N.
Result<load::Shard> ShardOption(const std::string& text);

/// `--start-at`: RFC 3339 with a zone ("2026-12-02T10:00:00Z", "...T11:00:00.250+01:00") or
/// Unix milliseconds (digits only), as Unix ms. InvalidInput quotes the text.
Result<int64_t> StartAtOption(const std::string& text);

}  // namespace stagegate::cli
