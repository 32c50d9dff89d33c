#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stagegate {

/// What is wrong with a request header given by a user (a scenario's `headers:`, `--header`), or
/// nullopt when it may be sent: the name must be an HTTP token (letters, digits and
/// !#$%&'*+-.^_`|~), and the value may hold no control character but tab. A CR or LF would let
/// the value start a header (or a body) of its own.
std::optional<std::string> HeaderProblem(std::string_view name, std::string_view value);

/// Whether `a` and `b` name the same header (names compare case-insensitively).
bool SameHeaderName(std::string_view a, std::string_view b);

/// Whether a "Name: value" line may go on the wire as one header: no CR, LF or NUL anywhere.
bool SafeHeaderLine(std::string_view line);

}  // namespace stagegate
