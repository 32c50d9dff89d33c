#include "review/usability_fields.h"

#include "base/strings.h"

namespace stagegate::review {
namespace {

using json = nlohmann::json;

// A day on correcting one answer is already a mistake, as it is for an item's time.
constexpr double kMaxCorrectionSeconds = 86'400;

std::string Shown(const json& value) {
  // A CSV cell is any bytes: invalid UTF-8 is shown as U+FFFD rather than thrown.
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

}  // namespace

CheckedUsability CheckUsability(const std::string& item, const UsabilityFields& fields) {
  CheckedUsability out;
  const std::string prefix = "item '" + item + "': ";
  const json& usability = fields.usability;
  if (!usability.is_null()) {
    if (usability == "as_is" || usability == "corrected" || usability == "unusable")
      out.usability = usability.get<std::string>();
    else
      out.errors.push_back(prefix + "'usability' must be one of as_is, corrected, unusable, got " +
                           Shown(usability));
  }
  const bool corrected = out.usability == "corrected";
  // A text of nothing but spaces is no correction: read as not given, as an empty CSV cell is.
  const bool blank = fields.corrected_text.is_string() &&
                     Trim(fields.corrected_text.get_ref<const std::string&>()).empty();
  const json& text = blank ? json(nullptr) : fields.corrected_text;
  if (!text.is_null()) {
    if (!text.is_string()) {
      out.errors.push_back(prefix + "'corrected_text' must be text, got " + Shown(text));
    } else if (text.get_ref<const std::string&>().size() > kMaxCorrectedText) {
      out.errors.push_back(prefix + "'corrected_text' is " +
                           std::to_string(text.get_ref<const std::string&>().size()) +
                           " bytes, more than " + std::to_string(kMaxCorrectedText));
    } else if (out.usability && !corrected) {
      out.errors.push_back(prefix + "'corrected_text' is given, but 'usability' is " +
                           *out.usability + ", not corrected");
    } else if (!out.usability && usability.is_null()) {
      out.errors.push_back(prefix + "'corrected_text' is given without 'usability': corrected");
    } else {
      out.corrected_text = text.get<std::string>();
    }
  } else if (corrected) {
    out.errors.push_back(prefix + "'usability' is corrected, but 'corrected_text' is missing");
  }
  const json& seconds = fields.correction_seconds;
  if (!seconds.is_null()) {
    if (!seconds.is_number() || !(seconds.get<double>() >= 0) ||
        seconds.get<double>() > kMaxCorrectionSeconds) {
      out.errors.push_back(prefix + "'correction_seconds' must be a number of seconds from 0 to " +
                           FormatNumber(kMaxCorrectionSeconds) + ", got " + Shown(seconds));
    } else if (out.usability && !corrected) {
      out.errors.push_back(prefix + "'correction_seconds' is given, but 'usability' is " +
                           *out.usability + ", not corrected");
    } else if (!out.usability && usability.is_null()) {
      out.errors.push_back(prefix + "'correction_seconds' is given without 'usability': corrected");
    } else {
      out.correction_seconds = seconds.get<double>();
    }
  }
  return out;
}

}  // namespace stagegate::review
