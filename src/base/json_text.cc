#include "base/json_text.h"

#include <charconv>
#include <cstring>

#include "base/strings.h"

namespace stagegate {

namespace {

// Whether any of the 8 bytes in `word` is a control character, '"', '\\' or a byte of 0x80 and
// above (which must be checked as UTF-8) (the classic "has a byte less than n" and "has a zero
// byte" bit tricks).
bool AnyNeedsEscape(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const uint64_t control = (word - kOnes * 0x20) & ~word & kHigh;
  const uint64_t quote = word ^ (kOnes * '"');
  const uint64_t backslash = word ^ (kOnes * '\\');
  return (control | (word & kHigh) | ((quote - kOnes) & ~quote & kHigh) |
          ((backslash - kOnes) & ~backslash & kHigh)) != 0;
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < text.size(); ++i) {
    // Eight plain bytes at a time: most text needs no escape at all.
    while (i + 8 <= text.size()) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, sizeof word);
      if (AnyNeedsEscape(word)) break;
      i += 8;
    }
    if (i >= text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const Utf8Sequence sequence = NextUtf8Sequence(text.substr(i));
      if (!sequence.valid) {
        out.append(text.data() + run, i - run);
        out.append(kReplacementCharacter);
        run = i + sequence.length;
      }
      i += sequence.length - 1;
      continue;
    }
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
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
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

namespace {

template <typename Number>
void AppendOptional(std::string& out, std::optional<Number> value) {
  if (!value) {
    out += "null";
    return;
  }
  char buffer[32];  // the longest double, -2.2250738585072014e-308, is 24 characters
  out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, *value).ptr);
}

}  // namespace

void AppendJsonNumber(std::string& out, std::optional<int64_t> value) {
  AppendOptional(out, value);
}

void AppendJsonNumber(std::string& out, std::optional<double> value) {
  AppendOptional(out, value);
}

}  // namespace stagegate
