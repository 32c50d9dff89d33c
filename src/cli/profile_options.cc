#include "cli/profile_options.h"

#include <cstdlib>
#include <vector>

#include "base/http_header.h"
#include "base/strings.h"

namespace stagegate::cli {

Result<load::RateSpike> ParseSpike(const std::string& text) {
  const std::vector<std::string> parts = Split(text, ':');
  double values[3] = {};
  bool ok = parts.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    char* end = nullptr;
    values[i] = std::strtod(parts[i].c_str(), &end);
    ok = !parts[i].empty() && *end == '\0' && values[i] >= 0 && values[i] <= 604'800;
  }
  ok = ok && values[1] > 0 && values[2] > 0 && values[2] <= 1e5;
  if (!ok)
    return Status::InvalidInput("--spike '" + text +
                                "': expected AT_S:DURATION_S:RATE, each within a week and the "
                                "rate at most 100,000 requests/s");
  return load::RateSpike{.at_s = values[0], .duration_s = values[1], .rate = values[2]};
}

Status CheckHeaders(const std::vector<std::string>& headers, bool api_key_env) {
  std::vector<std::string> errors;
  std::vector<std::string> names;
  for (const std::string& header : headers) {
    const size_t colon = header.find(':');
    if (colon == std::string::npos) {
      errors.push_back("--header '" + header + "': expected 'Name: value'");
      continue;
    }
    const std::string name = header.substr(0, colon);
    std::string_view value = std::string_view(header).substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    if (std::optional<std::string> problem = HeaderProblem(name, value)) {
      errors.push_back("--header: " + *problem);
      continue;
    }
    for (const std::string& earlier : names)
      if (SameHeaderName(earlier, name))
        errors.push_back("--header '" + name + "' is given twice (also as '" + earlier +
                         "'; names are case-insensitive)");
    names.push_back(name);
    if (api_key_env && SameHeaderName(name, "Authorization"))
      errors.push_back("--header '" + name +
                       "' and --api-key-env both send an Authorization "
                       "header; give one of them");
  }
  if (!errors.empty()) return Status::InvalidInput(Join(errors, "\n"));
  return Status::Ok();
}

}  // namespace stagegate::cli
