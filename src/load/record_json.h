#pragma once

#include <span>
#include <string>

#include "base/status.h"
#include "load/request_record.h"

namespace stagegate::load {

/// Appends one request as a `requests.jsonl` line (a JSON object and "\n"): ids, input, the raw
/// timestamps (ns from the run start), the derived latencies (ms), outcome, status, tokens in and
/// out with their source, answer, reasoning, tool calls, finish reason, Server-Timing entries,
/// trace id and chunk times. Absent moments are null. Written directly rather than through a
/// JSON tree: a run can have millions of lines. docs/metrics.md lists the fields.
void AppendRecordLine(const RequestRecord& record, std::string& out);

/// Writes one JSON line a record (requests.jsonl) to `path`, through a temporary file renamed at
/// the end.
Status WriteRequestsJsonl(const std::string& path, std::span<const RequestRecord> records);

}  // namespace stagegate::load
