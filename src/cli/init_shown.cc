#include "cli/init_shown.h"

#include <cstdint>

#include "base/strings.h"

namespace stagegate::cli {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// The code point of a well-formed UTF-8 sequence.
uint32_t CodePoint(std::string_view sequence) {
  const auto byte = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<uint8_t>(sequence[i]));
  };
  switch (sequence.size()) {
    case 1:
      return byte(0);
    case 2:
      return (byte(0) & 0x1f) << 6 | (byte(1) & 0x3f);
    case 3:
      return (byte(0) & 0x0f) << 12 | (byte(1) & 0x3f) << 6 | (byte(2) & 0x3f);
    default:
      return (byte(0) & 0x07) << 18 | (byte(1) & 0x3f) << 12 | (byte(2) & 0x3f) << 6 |
             (byte(3) & 0x3f);
  }
}

bool Escaped(uint32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
         c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

std::string ByteEscape(uint8_t byte) {
  return std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
}

std::string Escape(uint32_t c) {
  if (c == '\n') return "\\n";
  if (c == '\r') return "\\r";
  if (c == '\t') return "\\t";
  if (c < 0x80) return ByteEscape(static_cast<uint8_t>(c));
  std::string digits;
  for (uint32_t rest = c; rest; rest >>= 4)
    digits.insert(digits.begin(), kHex[rest & 15]);
  return "\\u{" + digits + "}";
}

// What InitShown prints for the sequence at the start of `text`, and how many bytes it takes.
std::pair<std::string, size_t> Next(std::string_view text) {
  const Utf8Sequence sequence = NextUtf8Sequence(text);
  if (!sequence.valid) {
    std::string out;
    for (size_t i = 0; i < sequence.length; ++i)
      out += ByteEscape(static_cast<uint8_t>(text[i]));
    return {out, sequence.length};
  }
  const std::string_view piece = text.substr(0, sequence.length);
  const uint32_t c = CodePoint(piece);
  return {Escaped(c) ? Escape(c) : std::string(piece), sequence.length};
}

}  // namespace

std::string InitShown(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    auto [piece, length] = Next(text.substr(at));
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    at += length;
  }
  if (at < text.size()) out += "... (" + std::to_string(text.size() - at) + " more bytes)";
  return out;
}

bool InitPrintable(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const Utf8Sequence sequence = NextUtf8Sequence(text.substr(at));
    if (!sequence.valid || Escaped(CodePoint(text.substr(at, sequence.length)))) return false;
    at += sequence.length;
  }
  return true;
}

}  // namespace stagegate::cli
