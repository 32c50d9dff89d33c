#pragma once

// Time slices of a step, as AIPerf's time slicing gives them: the step's requests grouped into
// fixed windows by when each was sent (intended, for one never sent), every metric of each window
// computed on its own requests.

#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/metrics.h"
#include "load/request_record.h"

namespace stagegate::load {

struct Slice {
  int64_t start_ns = 0, end_ns = 0;  // on the records' clock; the last one may be shorter
  PhaseMetrics metrics;              // throughputs over the slice's length, not its requests' span
};

/// At most this many slices a step: a longer step gets slices wider than asked.
inline constexpr int64_t kMaxSlices = 10'000;

/// The slices of [from_ns, to_ns) of `slice_ns` each (the last cut at to_ns), or wider when that
/// would make more than kMaxSlices; warmup records are left out as ComputeMetrics leaves them.
/// Nothing when slice_ns <= 0 or the span is empty.
std::vector<Slice> ComputeSlices(std::span<const RequestRecord> records,
                                 const std::vector<Slo>& slos, int64_t from_ns, int64_t to_ns,
                                 int64_t slice_ns);

/// [{start_s, end_s, requests, throughput, metrics}], seconds from `from_ns`.
nlohmann::json SlicesToJson(const std::vector<Slice>& slices, int64_t from_ns);

}  // namespace stagegate::load
