#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stagegate::stats {

/// One request of the recovery watch, timed from the end of the overload.
struct RecoverySample {
  double end_s = 0;  // when the request ended, in s from the end of the overload (may be negative
                     // for requests that started during it)
  std::optional<double> ttft_ms;  // absent when no token arrived
  std::optional<double> e2e_ms;   // absent when the request did not finish
  bool ok = false;  // outcome ok, or a denial the task expects (scenario::RecoverySamples)
};

/// What "back within thresholds" means.
struct RecoveryCriteria {
  double window_s = 5;  // the rolling window
  std::optional<double> max_ttft_p95_ms;
  std::optional<double> max_e2e_p95_ms;
  int64_t min_requests = 3;  // a window with fewer requests cannot show recovery
};

/// How long latency took to come back within thresholds. A plain value, built by FindRecovery.
struct RecoveryFinding {
  std::optional<double> recovered_after_s;  // the end of the first window (end_s of its last
                                            // request) that meets the criteria; nullopt: did not
                                            // recover
  int64_t windows_checked = 0;  // one per distinct end time, up to and including the first that
                                // meets the criteria
  std::optional<double> ttft_p95_ms;  // of that window (or of the last window checked when not
                                      // recovered); nullopt when it has no TTFT values
  std::optional<double> e2e_p95_ms;
};

/// Considers only samples with end_s >= 0. At each sample's end time t (ascending), the window
/// holds the samples with end_s in (t - window_s, t]. A window meets the criteria when it has at
/// least min_requests samples, every sample in it is ok, and the p95 (numpy linear, over the
/// samples that have the value) of TTFT and of e2e are within the given maxima (an absent maximum
/// is not checked; a window where a checked metric has no values does not meet it).
/// Times and latencies must be finite (a programmer error otherwise). O(n log n) in the number
/// of samples, whatever the window's size (see recovery.cc).
RecoveryFinding FindRecovery(std::vector<RecoverySample> samples, const RecoveryCriteria& criteria);

/// "recovered 3.2 s after the overload ended (TTFT p95 420 ms, e2e p95 2100 ms over a 3 s window)"
/// or "did not recover within 15 s (last window: TTFT p95 2600 ms, e2e p95 9100 ms)";
/// `observed_s` is how long recovery was watched. A p95 the window has no values for is left
/// out; with none at all: "(over a 3 s window)", "(last window: no TTFT or e2e values)", and with
/// no window: "did not recover within 15 s (no request ended after the overload)".
std::string DescribeRecovery(const RecoveryFinding& finding, const RecoveryCriteria& criteria,
                             double observed_s);

}  // namespace stagegate::stats
