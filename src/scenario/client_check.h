#pragma once

// Whether the client, not the application, may have limited what a load step measured: one check
// for every step of a run and every level of a profile.

#include <span>
#include <string>
#include <vector>

#include "load/metrics.h"
#include "load/receive_stats.h"
#include "load/request_record.h"

namespace stagegate::scenario {

/// What the client did during one load step.
struct ClientLoad {
  const load::PhaseMetrics& metrics;
  std::span<const load::RequestRecord> records;  // the step's, for the rate that was due
  bool open_loop = false;
  /// The busiest worker thread's CPU over the step's time (load::LoadResult::worker_busy); 0 when
  /// the step ran on a fake clock, where CPU against its time says nothing.
  double max_worker_busy = 0;
  load::ReceiveTimes receive_times = load::ReceiveTimes::kKernel;
  const load::ReceiveStats& receive;
};

/// Each way the client may have limited the step, as a sentence; empty when none:
/// - open loop: schedule lag p99 over 1 ms (over at least 100 sends: of fewer, a p99 is close to
///   the largest, one late wake-up), or the requests sent at under 95% of the rate their
///   schedule had them due (from the first to the last one sent, so a level ended early is not
///   taken for a client that fell behind);
/// - a worker thread over 90% busy;
/// - receive times "read" with a read delay p99 over 1 ms, or "kernel" with over 1% of reads
///   stamped when read (no kernel stamp: TLS).
std::vector<std::string> CheckClient(const ClientLoad& load);

/// "may be the client's limit": the sentence a capacity finding adds when the level that decided
/// it was limited by the client.
inline constexpr const char* kClientLimitNote =
    "the client may have limited this level, not the application (see its client check)";

}  // namespace stagegate::scenario
