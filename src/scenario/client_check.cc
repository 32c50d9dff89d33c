#include "scenario/client_check.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "base/strings.h"

namespace stagegate::scenario {
namespace {

// Past this schedule lag p99 the client, not the server, may be what was measured.
constexpr double kMaxLagP99Ms = 1.0;
// Below this many sends a p99 is close to the largest lag, so one late wake-up of the client's
// thread would read as a client that fell behind; from 100 on, one outlier moves it by 1%.
constexpr int64_t kMinSentForLag = 100;
constexpr double kSaturatedBusy = 0.9;
// Past this read delay p99, arrivals stamped when read carry the client's delay.
constexpr double kMaxReadDelayP99Us = 1000;
// Above this share of reads without a kernel stamp, say that they were stamped when read.
constexpr double kMaxClientStampedShare = 0.01;
// Sent at under this share of the rate that was due: the client did not keep up.
constexpr double kMinAchievedShare = 0.95;
// A rate needs this many sends before it is compared.
constexpr int64_t kMinSentForRate = 21;

// Of the measured requests sent: the rate their schedule had them due, from the first intended
// send to the last.
std::optional<double> DueRate(std::span<const load::RequestRecord> records) {
  int64_t sent = 0, first = INT64_MAX, last = INT64_MIN;
  for (const load::RequestRecord& r : records) {
    if (r.warmup || !r.sent_ns) continue;
    ++sent;
    first = std::min(first, r.intended_ns);
    last = std::max(last, r.intended_ns);
  }
  if (sent < 2 || last <= first) return std::nullopt;
  return static_cast<double>(sent - 1) / (static_cast<double>(last - first) / 1e9);
}

}  // namespace

std::vector<std::string> CheckClient(const ClientLoad& load) {
  std::vector<std::string> warnings;
  const load::PhaseMetrics& m = load.metrics;
  // Closed loops re-send as answers end, often many at once, so their lag is the client's
  // turnaround, not a missed schedule; the busy check covers a client that limits them.
  if (load.open_loop && m.schedule_lag_ms.count >= kMinSentForLag &&
      m.schedule_lag_ms.Percentile(99) > kMaxLagP99Ms)
    warnings.push_back("the client fell behind its schedule: schedule lag p99 " +
                       FormatNumber(m.schedule_lag_ms.Percentile(99), 3) + " ms (over " +
                       FormatNumber(kMaxLagP99Ms, 0) +
                       " ms); latencies from the intended send (corrected_ms) are the honest ones");
  if (load.max_worker_busy > kSaturatedBusy)
    warnings.push_back("a worker thread was " + FormatNumber(load.max_worker_busy * 100, 0) +
                       "% busy: the client is near saturation; use more workers or fewer streams");
  const std::optional<double> read_p99 = load.receive.ReadDelayQuantileUs(0.99);
  if (load.receive_times == load::ReceiveTimes::kRead && read_p99 && *read_p99 > kMaxReadDelayP99Us)
    warnings.push_back("the client read arrivals p99 " + FormatMicroseconds(*read_p99) +
                       " after the kernel received them, and receive times \"read\" count that "
                       "in every latency; the default (kernel) does not");
  const int64_t reads = load.receive.kernel_stamped + load.receive.client_stamped;
  if (load.receive_times == load::ReceiveTimes::kKernel && reads > 0 &&
      static_cast<double>(load.receive.client_stamped) > kMaxClientStampedShare * reads)
    warnings.push_back(
        FormatNumber(100.0 * static_cast<double>(load.receive.client_stamped) / reads, 1) +
        "% of reads came without a kernel receive time (TLS is read inside OpenSSL) and were "
        "stamped when read: a busy client adds its delay to those");
  if (load.open_loop && m.sent >= kMinSentForRate && m.achieved_rate > 0)
    if (const std::optional<double> due = DueRate(load.records);
        due && m.achieved_rate < kMinAchievedShare * *due)
      warnings.push_back("sent " + FormatNumber(m.achieved_rate, 2) + " requests/s of the " +
                         FormatNumber(*due, 2) + " its schedule had due");
  return warnings;
}

}  // namespace stagegate::scenario
