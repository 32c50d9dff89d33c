#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stagegate {

/// Writers of JSON text pieces for hot paths (request bodies, one line per request), where
/// building a JSON tree costs more than the work it records. Everything else uses nlohmann/json.

/// Appends `text` as a quoted JSON string, escaped exactly as nlohmann/json's dump() escapes it:
/// quotes, backslashes and control characters (\b \f \n \r \t, others as \u00XX); valid UTF-8
/// passes through, and each ill-formed part becomes U+FFFD (as ValidUtf8 and dump() with
/// error_handler_t::replace), so the string is always JSON a strict reader accepts.
void AppendJsonString(std::string& out, std::string_view text);
/// Appends an integer, or null when absent.
void AppendJsonNumber(std::string& out, std::optional<int64_t> value);
/// Appends a finite double in its shortest round-trip form, or null when absent.
void AppendJsonNumber(std::string& out, std::optional<double> value);

}  // namespace stagegate
