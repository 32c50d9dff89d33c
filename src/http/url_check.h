#pragma once

#include <string_view>

#include "base/status.h"

namespace stagegate::http {

/// Ok when `url` is an absolute http:// or https:// URL with a host, as libcurl's URL parser reads
/// it; InvalidInput, saying what is wrong, for anything else: another scheme (file://, gopher://),
/// no scheme, no host, spaces or control characters.
Status CheckHttpUrl(std::string_view url);

}  // namespace stagegate::http
