#include "load/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/files.h"
#include "load/json_line.h"

namespace stagegate::load {
namespace {

using nlohmann::json;

std::string Ms(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", value);
  return buffer;
}

// A length from 1 to kMaxTraceTokens: a larger one would be a prompt no memory holds.
std::optional<int64_t> TokenCount(const json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{kMaxTraceTokens})
    return std::nullopt;
  const int64_t number = value.get<int64_t>();
  if (number <= 0 || number > kMaxTraceTokens) return std::nullopt;
  return number;
}

// Reads the fields of one line's object into `entry`; each problem goes to `problems`.
void ReadEntry(const json& object, TraceEntry& entry, std::vector<std::string>& problems) {
  const auto timestamp = object.find("timestamp");
  if (timestamp == object.end()) {
    problems.push_back("missing 'timestamp'");
  } else if (!timestamp->is_number() || !std::isfinite(timestamp->get<double>()) ||
             timestamp->get<double>() < 0 || timestamp->get<double>() > kMaxTraceMs) {
    problems.push_back("'timestamp' must be a number from 0 to " + Ms(kMaxTraceMs) +
                       " (milliseconds), got " + ShownJson(*timestamp));
  } else {
    entry.timestamp_ms = timestamp->get<double>();
  }

  for (const auto& [key, field] : {std::pair{"input_length", &entry.input_length},
                                   std::pair{"output_length", &entry.output_length}}) {
    const auto value = object.find(key);
    if (value == object.end()) {
      problems.push_back(std::string("missing '") + key + "'");
    } else if (std::optional<int64_t> number = TokenCount(*value)) {
      *field = *number;
    } else {
      problems.push_back(std::string("'") + key + "' must be an integer from 1 to " +
                         std::to_string(kMaxTraceTokens) + ", got " + ShownJson(*value));
    }
  }

  const auto hash_ids = object.find("hash_ids");
  if (hash_ids == object.end()) return;
  const bool integers =
      hash_ids->is_array() && std::all_of(hash_ids->begin(), hash_ids->end(), [](const json& id) {
        return id.is_number_integer() &&
               !(id.is_number_unsigned() &&
                 id.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
      });
  if (!integers) {
    problems.push_back("'hash_ids' must be an array of integers, got " + ShownJson(*hash_ids));
    return;
  }
  entry.hash_ids.reserve(hash_ids->size());
  for (const json& id : *hash_ids)
    entry.hash_ids.push_back(id.get<int64_t>());
}

}  // namespace

Result<std::vector<TraceEntry>> LoadTrace(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();

  std::vector<TraceEntry> entries;
  std::vector<std::string> errors;
  int64_t more_errors = 0;
  auto report = [&](const std::string& where, const std::string& message) {
    if (errors.size() < static_cast<size_t>(kMaxTraceErrors)) {
      errors.push_back(where + ": " + message);
    } else {
      ++more_errors;
    }
  };

  ForEachLine(*text, [&](int64_t number, std::string_view line) {
    const std::string where = path + ":" + std::to_string(number);
    ParsedJson parsed = ParseJson(line);
    if (!parsed.problem.empty()) {
      report(parsed.byte > 0 ? where + ":" + std::to_string(parsed.byte) : where, parsed.problem);
      return;
    }
    const json& object = parsed.value;
    if (!object.is_object()) {
      report(where, "expected a JSON object, got " + ShownJson(object));
      return;
    }
    TraceEntry entry;
    std::vector<std::string> problems;
    ReadEntry(object, entry, problems);
    for (const std::string& problem : problems)
      report(where, problem);
    if (problems.empty()) entries.push_back(std::move(entry));
  });

  if (errors.empty() && entries.empty())
    return Status::InvalidInput(path + ": the trace has no entries");
  if (!errors.empty()) {
    std::string message;
    for (const std::string& error : errors)
      message += (message.empty() ? "" : "\n") + error;
    if (more_errors > 0)
      message += "\n" + path + ": " + std::to_string(more_errors) + " more problems not shown";
    return Status::InvalidInput(message);
  }
  std::stable_sort(entries.begin(), entries.end(), [](const TraceEntry& a, const TraceEntry& b) {
    return a.timestamp_ms < b.timestamp_ms;
  });
  return entries;
}

Result<std::vector<Arrival>> BuildTraceSchedule(const std::vector<TraceEntry>& trace,
                                                const TraceScheduleOptions& options) {
  std::vector<std::string> problems;
  if (trace.empty()) problems.push_back("the trace is empty");
  const auto unsorted = std::adjacent_find(
      trace.begin(), trace.end(),
      [](const TraceEntry& a, const TraceEntry& b) { return a.timestamp_ms > b.timestamp_ms; });
  if (unsorted != trace.end()) {
    const int64_t entry = unsorted - trace.begin() + 1;
    problems.push_back("the trace is not sorted by timestamp: entry " + std::to_string(entry + 1) +
                       " (" + Ms(unsorted[1].timestamp_ms) + " ms) follows entry " +
                       std::to_string(entry) + " (" + Ms(unsorted[0].timestamp_ms) + " ms)");
  }
  if (!std::isfinite(options.speedup) || options.speedup <= 0)
    problems.push_back("'speedup' must be a number > 0");
  if (options.requests && *options.requests < 1)
    problems.push_back("'requests' must be at least 1, got " + std::to_string(*options.requests));
  if (options.duration_s && (!std::isfinite(*options.duration_s) || *options.duration_s <= 0))
    problems.push_back("'duration_s' must be a number > 0");
  if (Status shard = ValidateShard(options.shard); !shard.ok()) problems.push_back(shard.message());
  if (!problems.empty()) {
    std::string message;
    for (const std::string& problem : problems)
      message += (message.empty() ? "" : "\n") + problem;
    return Status::InvalidInput(message);
  }

  const int64_t size = static_cast<int64_t>(trace.size());
  const int64_t limit = std::min(size, options.requests.value_or(size));
  const int64_t end_ns = options.duration_s ? std::llround(*options.duration_s * 1e9)
                                            : std::numeric_limits<int64_t>::max();
  std::vector<Arrival> arrivals;
  arrivals.reserve(static_cast<size_t>(limit / options.shard.count + 1));
  for (int64_t sequence = 0; sequence < limit; ++sequence) {
    const double offset_ns =
        (trace[sequence].timestamp_ms - trace[0].timestamp_ms) / options.speedup * 1e6;
    if (offset_ns > 9e18)
      return Status::InvalidInput("entry " + std::to_string(sequence + 1) +
                                  " would be sent past the latest time a schedule can hold: "
                                  "raise 'speedup'");
    const int64_t intended_ns = std::llround(offset_ns);
    if (intended_ns >= end_ns) break;
    if (sequence % options.shard.count == options.shard.index)
      arrivals.push_back({.sequence = sequence, .intended_ns = intended_ns});
  }
  return arrivals;
}

Result<std::vector<Arrival>> BuildTraceReplay(const std::vector<TraceEntry>& trace, double rate,
                                              std::optional<int64_t> requests,
                                              std::optional<double> duration_s) {
  if (trace.empty()) return Status::InvalidInput("the trace is empty");
  if (!std::is_sorted(trace.begin(), trace.end(), [](const TraceEntry& a, const TraceEntry& b) {
        return a.timestamp_ms < b.timestamp_ms;
      }))
    return Status::InvalidInput("the trace is not sorted by timestamp");
  if (!std::isfinite(rate) || rate <= 0) return Status::InvalidInput("the rate must be > 0");
  if (!requests && !duration_s)
    return Status::InvalidInput("a trace replay needs a request count or a duration");
  const int64_t size = static_cast<int64_t>(trace.size());
  const double span_ms = trace.back().timestamp_ms - trace.front().timestamp_ms;
  if (size > 1 && span_ms <= 0)
    return Status::InvalidInput(
        "every entry of the trace has the same timestamp: it has no rate "
        "to replay at another");
  // In the replay's time: the gap between entries is 1 / rate on average, a pass lasts `size`
  // of them.
  const double scale_ns = size > 1 ? 1e9 * static_cast<double>(size - 1) / (rate * span_ms) : 0;
  const double pass_ns = 1e9 * static_cast<double>(size) / rate;
  const double end_ns = duration_s ? *duration_s * 1e9 : std::numeric_limits<double>::infinity();
  std::vector<Arrival> arrivals;
  for (int64_t sequence = 0; !requests || sequence < *requests; ++sequence) {
    const int64_t entry = sequence % size;
    const double at_ns = static_cast<double>(sequence / size) * pass_ns +
                         (trace[entry].timestamp_ms - trace.front().timestamp_ms) * scale_ns;
    if (at_ns >= end_ns || at_ns > 9e18) break;
    if (sequence == kMaxArrivals)
      return Status::InvalidInput("the replay holds more than " + std::to_string(kMaxArrivals) +
                                  " arrivals: lower the rate, the requests or the duration");
    arrivals.push_back({.sequence = sequence, .intended_ns = std::llround(at_ns)});
  }
  return arrivals;
}

}  // namespace stagegate::load
