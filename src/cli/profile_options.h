#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "load/schedule.h"
#include "load/synthetic.h"

namespace stagegate::cli {

/// Parsers of `profile`'s option values that take more than a range check. Each fails with
/// InvalidInput naming the option and what it expects.

/// --spike "AT_S:DURATION_S:RATE": seconds, seconds and requests/s.
Result<load::RateSpike> ParseSpike(const std::string& text);

/// Each --header must be "Name: value" with a token for a name and no control character in the
/// value (a CR or LF would inject a header), every name once, and Authorization not beside
/// --api-key-env (`api_key_env`): a request carries one. Messages name headers, never their
/// values; one problem a line.
Status CheckHeaders(const std::vector<std::string>& headers, bool api_key_env);

}  // namespace stagegate::cli
