#include "load/json_line.h"

namespace stagegate::load {
namespace {

using nlohmann::json;

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 5: " preamble: the caller puts the position in front in its own form.
std::string ParserDetail(const json::exception& error) {
  const std::string text = error.what();
  const size_t column = text.find("column ");
  const size_t detail = column == std::string::npos ? column : text.find(": ", column);
  if (detail != std::string::npos) return text.substr(detail + 2);
  const size_t bracket = text.find("] ");
  return bracket == std::string::npos ? text : text.substr(bracket + 2);
}

// Whether arrays and objects in `text` nest deeper than kMaxJsonDepth, counted outside strings:
// nlohmann parses any depth, but printing or copying such a value recurses once a level.
bool TooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    if (in_string) {
      if (c == '\\')
        ++at;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

std::string ShownJson(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

ParsedJson ParseJson(std::string_view text) {
  ParsedJson parsed;
  if (TooDeep(text)) {
    parsed.problem =
        "arrays and objects nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return parsed;
  }
  try {
    parsed.value = json::parse(text);
  } catch (const json::parse_error& error) {
    parsed.problem = "not JSON: " + ParserDetail(error);
    parsed.byte = error.byte;
  } catch (const json::exception& error) {
    parsed.problem = ParserDetail(error);
  }
  return parsed;
}

void ForEachLine(std::string_view text,
                 const std::function<void(int64_t number, std::string_view line)>& visit) {
  std::string_view rest = text;
  for (int64_t number = 1; !rest.empty(); ++number) {
    const size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) visit(number, line);
  }
}

}  // namespace stagegate::load
