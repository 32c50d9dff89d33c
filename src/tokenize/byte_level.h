#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace stagegate::tokenize {

/// GPT-2's reversible map from bytes to printable characters, which byte-level BPE vocabularies
/// are written in: printable Latin-1 bytes stand for themselves, the other 68 bytes for U+0100
/// onwards, in order.
class ByteAlphabet {
 public:
  ByteAlphabet();

  /// The UTF-8 of the character that stands for `byte`.
  const std::string& CharOf(uint8_t byte) const { return chars_[byte]; }

  /// Appends to `out` the bytes that `token` (a vocabulary entry) stands for; a character outside
  /// the alphabet is appended as its own UTF-8.
  void AppendBytes(std::string_view token, std::string& out) const;

 private:
  std::array<std::string, 256> chars_;
  std::array<int16_t, 324> byte_of_code_point_;  // -1 when the code point stands for no byte
};

}  // namespace stagegate::tokenize
