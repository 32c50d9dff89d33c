#pragma once

#include <string_view>

#include "base/status.h"

namespace stagegate::http {

/// Ok when `url` is an absolute http:// or https:// URL with a host, as libcurl's URL parser reads
/// it; InvalidInput, saying what is wrong, for anything else: another scheme (file://, gopher://),
/// no scheme, no host, spaces or control characters.
Status CheckHttpUrl(std::string_view url);

/// CheckHttpUrl, and more for a base URL that a file or manifest will hold and paths will be
/// appended to: no user or password (a file would then hold a secret), no query string (every
/// request would go to "/v1?q/v1/chat/completions", and a key in it would sit in the file), no
/// fragment (never sent), and not a full endpoint such as ".../chat/completions" (its path would
/// be appended again). InvalidInput says what to give instead.
Status CheckBaseUrlToKeep(std::string_view url);

}  // namespace stagegate::http
