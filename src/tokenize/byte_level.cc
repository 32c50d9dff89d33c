#include "tokenize/byte_level.h"

#include "base/strings.h"

namespace stagegate::tokenize {
namespace {

std::string EncodeCodePoint(uint32_t code_point) {
  std::string out;
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else {  // Every character of the alphabet is below U+0800.
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
  return out;
}

bool StandsForItself(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
         (byte >= 0xAE && byte <= 0xFF);
}

}  // namespace

ByteAlphabet::ByteAlphabet() {
  byte_of_code_point_.fill(-1);
  uint32_t next_extra = 256;
  for (int byte = 0; byte < 256; ++byte) {
    const uint32_t code_point = StandsForItself(byte) ? byte : next_extra++;
    chars_[byte] = EncodeCodePoint(code_point);
    byte_of_code_point_[code_point] = static_cast<int16_t>(byte);
  }
}

void ByteAlphabet::AppendBytes(std::string_view token, std::string& out) const {
  while (!token.empty()) {
    const size_t length = Utf8SequenceLength(token);
    if (length == 0) {  // Not UTF-8: keep the byte.
      out += token[0];
      token.remove_prefix(1);
      continue;
    }
    uint32_t code_point = 0;
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(token[i]); };
    if (length == 1) code_point = byte(0);
    if (length == 2) code_point = ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    if (code_point < byte_of_code_point_.size() && byte_of_code_point_[code_point] >= 0 &&
        length <= 2) {
      out += static_cast<char>(byte_of_code_point_[code_point]);
    } else {
      out.append(token.substr(0, length));
    }
    token.remove_prefix(length);
  }
}

}  // namespace stagegate::tokenize
