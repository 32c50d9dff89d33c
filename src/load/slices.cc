#include "load/slices.h"

#include <algorithm>

namespace stagegate::load {

std::vector<Slice> ComputeSlices(std::span<const RequestRecord> records,
                                 const std::vector<Slo>& slos, int64_t from_ns, int64_t to_ns,
                                 int64_t slice_ns) {
  std::vector<Slice> slices;
  if (slice_ns <= 0 || to_ns <= from_ns) return slices;
  // A short slice over a long step would make millions: past kMaxSlices, slices widen.
  slice_ns = std::max(slice_ns, (to_ns - from_ns + kMaxSlices - 1) / kMaxSlices);
  const size_t count = static_cast<size_t>((to_ns - from_ns + slice_ns - 1) / slice_ns);
  std::vector<std::vector<RequestRecord>> grouped(count);
  for (const RequestRecord& r : records) {
    const int64_t at = r.sent_ns.value_or(r.intended_ns);
    if (at < from_ns || at >= to_ns) continue;
    grouped[static_cast<size_t>((at - from_ns) / slice_ns)].push_back(r);
  }
  for (size_t i = 0; i < count; ++i) {
    Slice slice{.start_ns = from_ns + static_cast<int64_t>(i) * slice_ns,
                .end_ns = std::min(to_ns, from_ns + static_cast<int64_t>(i + 1) * slice_ns),
                .metrics = ComputeMetrics(grouped[i], slos)};
    // Per second of the slice, whatever span its requests took.
    PhaseMetrics& m = slice.metrics;
    const double seconds = static_cast<double>(slice.end_ns - slice.start_ns) / 1e9;
    const double completed_tokens = m.output_token_throughput * m.window_s;
    m.window_s = seconds;
    m.request_throughput = static_cast<double>(m.completed) / seconds;
    m.output_token_throughput = completed_tokens / seconds;
    m.goodput = static_cast<double>(m.met_slos) / seconds;
    slices.push_back(std::move(slice));
  }
  return slices;
}

nlohmann::json SlicesToJson(const std::vector<Slice>& slices, int64_t from_ns) {
  nlohmann::json out = nlohmann::json::array();
  for (const Slice& s : slices) {
    nlohmann::json slice = MetricsToJson(s.metrics);
    slice["start_s"] = static_cast<double>(s.start_ns - from_ns) / 1e9;
    slice["end_s"] = static_cast<double>(s.end_ns - from_ns) / 1e9;
    out.push_back(std::move(slice));
  }
  return out;
}

}  // namespace stagegate::load
