#pragma once

#include <nlohmann/json.hpp>

#include "load/request_record.h"

namespace stagegate::load {

/// One request as the object of a `requests.jsonl` line: ids, input, the raw timestamps (ns from
/// the run start), the derived latencies (ms), outcome, status, tokens in and out with their
/// source, answer, reasoning, tool calls, finish reason, Server-Timing entries, trace id and chunk
/// times. Absent moments are null. See docs/metrics.md for the field list.
nlohmann::json RecordToJson(const RequestRecord& record);

}  // namespace stagegate::load
