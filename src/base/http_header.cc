#include "base/http_header.h"

#include <strings.h>

namespace stagegate {
namespace {

bool TokenChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u <= 0x20 || u >= 0x7f) return false;
  return std::string_view("\"(),/:;<=>?@[\\]{}").find(c) == std::string_view::npos;
}

// A printable form of a control character for messages: "\r", "\n", "\x01".
std::string Shown(char c) {
  if (c == '\r') return "\\r";
  if (c == '\n') return "\\n";
  static constexpr char kHex[] = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(c);
  return std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
}

}  // namespace

std::optional<std::string> HeaderProblem(std::string_view name, std::string_view value) {
  if (name.empty()) return "a header name cannot be empty";
  for (char c : name)
    if (!TokenChar(c))
      return "header name '" + std::string(name) + "' holds '" +
             (static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? Shown(c) : std::string(1, c)) +
             "': a name may hold only letters, digits and !#$%&'*+-.^_`|~";
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f)
      return "header '" + std::string(name) + "': its value holds the control character " +
             Shown(c) +
             (c == '\r' || c == '\n' ? " (a line break would start another header)" : "");
  }
  return std::nullopt;
}

bool SameHeaderName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool SafeHeaderLine(std::string_view line) {
  return line.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

}  // namespace stagegate
