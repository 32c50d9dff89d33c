#include "load/request_record.h"

#include "base/strings.h"

namespace stagegate::load {

namespace {

constexpr std::pair<Outcome, std::string_view> kOutcomeNames[] = {
    {Outcome::kOk, "ok"},
    {Outcome::kHttpError, "http_error"},
    {Outcome::kShed, "shed"},
    {Outcome::kTimeout, "timeout"},
    {Outcome::kTransportError, "transport_error"},
    {Outcome::kMalformedStream, "malformed_stream"},
    {Outcome::kCancelled, "cancelled"},
    {Outcome::kDenied, "denied"},
    {Outcome::kMemoryLimit, "memory_limit"},
};

}  // namespace

std::string_view OutcomeName(Outcome outcome) {
  for (const auto& [value, name] : kOutcomeNames)
    if (value == outcome) return name;
  return "?";
}

std::optional<Outcome> OutcomeFromName(std::string_view name) {
  for (const auto& [value, text] : kOutcomeNames)
    if (text == name) return value;
  return std::nullopt;
}

void KeepValidUtf8(RequestRecord& record) {
  for (std::string* text :
       {&record.answer_text, &record.reasoning_text, &record.error_message, &record.finish_reason,
        &record.server_timing, &record.tool_calls_json}) {
    if (IsValidUtf8(*text)) continue;
    *text = ValidUtf8(*text);
    record.invalid_utf8 = true;
  }
}

}  // namespace stagegate::load
