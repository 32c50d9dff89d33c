#include "sim/ground_truth.h"

#include <cctype>
#include <nlohmann/json.hpp>

namespace stagegate::sim {

void GroundTruthLog::RecordChunk(const std::string& trace_id, int64_t sent_ns) {
  auto it = chunks_.find(trace_id);
  if (it == chunks_.end()) {
    if (chunks_.size() >= kMaxRequests) {
      ++dropped_;
      return;
    }
    it = chunks_.emplace(trace_id, std::vector<int64_t>()).first;
    order_.push_back(trace_id);
  }
  it->second.push_back(sent_ns);
}

std::string GroundTruthLog::Json() const {
  nlohmann::json requests = nlohmann::json::array();
  for (const std::string& trace_id : order_)
    requests.push_back({{"trace_id", trace_id}, {"chunk_sent_ns", chunks_.at(trace_id)}});
  return nlohmann::json({{"requests", requests}, {"dropped", dropped_}}).dump();
}

std::string TraceIdOf(const std::string& traceparent) {
  if (traceparent.size() < 55 || traceparent[2] != '-' || traceparent[35] != '-') return "";
  const std::string id = traceparent.substr(3, 32);
  for (char c : id)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
  return id;
}

}  // namespace stagegate::sim
