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

}  // namespace

std::string ShownJson(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

ParsedJson ParseJson(std::string_view text) {
  ParsedJson parsed;
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
