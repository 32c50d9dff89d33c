#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace stagegate::load {

/// Pieces shared by the readers of JSON-lines inputs (traces, datasets).

/// A JSON value quoted in a message, cut short when long.
std::string ShownJson(const nlohmann::json& value);

/// One JSON text parsed: its value, or why it is not JSON.
struct ParsedJson {
  nlohmann::json value;
  std::string problem;  // "" when it parsed
  size_t byte = 0;      // a syntax error's byte in the text, from 1; 0 for other problems
};

/// The deepest nesting of arrays and objects ParseJson accepts.
inline constexpr int kMaxJsonDepth = 100;

/// Parses `text` as one JSON value. Never throws: a syntax error's problem is "not JSON: " and
/// the parser's own words without its "[json.exception...] at line, column" preamble; a number
/// beyond a double's range (1e400), which nlohmann will not read, and nesting deeper than
/// kMaxJsonDepth are also problems.
ParsedJson ParseJson(std::string_view text);

/// Calls `visit(number, line)` for each line of `text` that is not blank (only spaces, tabs and
/// CRs), numbered from 1, without its LF or CRLF.
void ForEachLine(std::string_view text,
                 const std::function<void(int64_t number, std::string_view line)>& visit);

}  // namespace stagegate::load
