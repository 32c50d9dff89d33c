#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace stagegate::sim {

/// Server-side send times of the content chunks of requests that asked for them
/// (`X-Sim-Timestamps: on`), keyed by the trace id of their `traceparent` header, so that a
/// benchmark can set each request's client-side times beside the truth. Served at
/// GET /sim/ground-truth. Lives on the server's io thread: not thread-safe.
class GroundTruthLog {
 public:
  /// The most requests kept; later ones are not logged (and `dropped` counts them).
  static constexpr size_t kMaxRequests = 200'000;

  /// Appends the send time (steady clock ns) of one content chunk of the request `trace_id`.
  void RecordChunk(const std::string& trace_id, int64_t sent_ns);
  /// {"requests": [{"trace_id": ..., "chunk_sent_ns": [...]}, ...], "dropped": N}
  std::string Json() const;

 private:
  std::unordered_map<std::string, std::vector<int64_t>> chunks_;
  std::vector<std::string> order_;
  int64_t dropped_ = 0;
};

/// The trace id of a W3C `traceparent` value ("00-<32 hex>-<16 hex>-<2 hex>"); "" when malformed.
std::string TraceIdOf(const std::string& traceparent);

}  // namespace stagegate::sim
