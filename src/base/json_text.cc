#include "base/json_text.h"

#include <charconv>

namespace stagegate {

void AppendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

void AppendJsonNumber(std::string& out, std::optional<int64_t> value) {
  if (!value) {
    out += "null";
    return;
  }
  char buffer[24];
  out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, *value).ptr);
}

void AppendJsonNumber(std::string& out, std::optional<double> value) {
  if (!value) {
    out += "null";
    return;
  }
  char buffer[32];
  out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, *value).ptr);
}

}  // namespace stagegate
