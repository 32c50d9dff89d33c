#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace stagegate::review {

/// The usability fields of one scored item as a scores file gives them (null: not given).
struct UsabilityFields {
  nlohmann::json usability, corrected_text, correction_seconds;
};

/// The fields checked: the judgement when one is given, else none; and every problem found, as
/// "item 'ID': ..." messages. Rules: usability is as_is, corrected or unusable; corrected_text
/// (at most kMaxCorrectedText bytes) is required with corrected and refused without it;
/// correction_seconds (0 to a day) only with corrected.
struct CheckedUsability {
  std::optional<std::string> usability;
  std::optional<std::string> corrected_text;
  std::optional<double> correction_seconds;
  std::vector<std::string> errors;
};

inline constexpr size_t kMaxCorrectedText = 100'000;

CheckedUsability CheckUsability(const std::string& item, const UsabilityFields& fields);

}  // namespace stagegate::review
