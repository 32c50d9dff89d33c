#pragma once

// What `profile` and `run` share: the stop on SIGINT, run ids, the live progress line, and the
// writers of records to the store and to requests.jsonl.

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "console/console.h"
#include "load/engine.h"
#include "load/request_record.h"
#include "store/store.h"

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

/// The engine's tick callback that draws the live progress line of a phase labelled `label`:
/// redrawn at every tick on a terminal, a plain line every 5 s elsewhere.
std::function<void(const load::LiveSnapshot&)> ProgressLine(console::Console& console,
                                                            const Clock& clock, std::string label);

/// Stores a phase's records in transactions of a few thousand, each all or nothing.
Status StoreRecords(store::Store& store, std::span<const load::RequestRecord> records);

/// Writes one JSON line a record to `path`, through a temporary file renamed at the end.
Status WriteRequestsJsonl(const std::string& path, std::span<const load::RequestRecord> records);

}  // namespace stagegate::cli
