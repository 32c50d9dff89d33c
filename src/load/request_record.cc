#include "load/request_record.h"

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

}  // namespace stagegate::load
