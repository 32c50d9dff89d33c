#include "cli/init_shown.h"

#include <catch2/catch.hpp>

#include <string>

namespace stagegate::cli {
namespace {

using namespace std::string_literals;

TEST_CASE("InitShown escapes what a terminal would act on and keeps the rest", "[cli][init]") {
  CHECK(InitShown("llama-3-8b \"v2\" \\ caf\xC3\xA9 \xE4\xB8\xAD") ==
        "llama-3-8b \"v2\" \\ caf\xC3\xA9 \xE4\xB8\xAD");
  CHECK(InitShown("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(InitShown("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(InitShown("a\0b"s) == "a\\x00b");
  CHECK(InitShown("del\x7f") == "del\\x7f");
  // C1 controls: U+009B is CSI, an escape sequence in one character.
  CHECK(InitShown("\xC2\x9B"
                  "31m \xC2\x85") == "\\u{9b}31m \\u{85}");
  // Bidi embeddings, overrides, isolates and marks; line and paragraph separators.
  CHECK(InitShown("abc\xE2\x80\xAE"
                  "fed") == "abc\\u{202e}fed");
  CHECK(InitShown("\xE2\x80\xAA\xE2\x80\xAB\xE2\x80\xAC\xE2\x80\xAD") ==
        "\\u{202a}\\u{202b}\\u{202c}\\u{202d}");
  CHECK(InitShown("\xE2\x81\xA6\xE2\x81\xA7\xE2\x81\xA8\xE2\x81\xA9") ==
        "\\u{2066}\\u{2067}\\u{2068}\\u{2069}");
  CHECK(InitShown("\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C") == "\\u{200e}\\u{200f}\\u{61c}");
  CHECK(InitShown("a\xE2\x80\xA8"
                  "b\xE2\x80\xA9"
                  "c") == "a\\u{2028}b\\u{2029}c");
  // What is not UTF-8, byte by byte: a lone continuation, a truncated sequence, an overlong form.
  CHECK(InitShown("\x80x\xE2\x80y\xC0\xAF") == "\\x80x\\xe2\\x80y\\xc0\\xaf");
}

TEST_CASE("InitShown cuts long text, never inside an escape or a character, and counts the rest",
          "[cli][init]") {
  const std::string long_id(100'000, 'm');
  CHECK(InitShown(long_id) == std::string(200, 'm') + "... (99800 more bytes)");
  CHECK(InitShown(std::string(200, 'm')) == std::string(200, 'm'));
  // 199 bytes, then an escape of 4 that does not fit: cut before it, not in it.
  CHECK(InitShown(std::string(199, 'm') + "\x1b" + "xyz") ==
        std::string(199, 'm') + "... (4 more bytes)");
  // 199 bytes, then a character of 2 bytes: cut before it.
  CHECK(InitShown(std::string(199, 'm') + "\xC3\xA9") ==
        std::string(199, 'm') + "... (2 more bytes)");
  CHECK(InitShown("abcdef", 3) == "abc... (3 more bytes)");
  CHECK(InitShown("") == "");
}

TEST_CASE("InitPrintable is true exactly when InitShown shows text as it is", "[cli][init]") {
  for (const std::string& text :
       {"llama-3-8b"s, "org/model \"v2\": # {x} [y] \\ 'z' \xC3\xA9"s, ""s, "a b"s})
    CHECK(InitPrintable(text));
  for (const std::string& text : {"a\nb"s, "\x1b[2J"s, "a\0b"s, "\xC2\x9B"s, "x\xE2\x80\xAE"s,
                                  "\xE2\x81\xA6"s, "\xE2\x80\xA8"s, "\xff"s, "\t"s})
    CHECK_FALSE(InitPrintable(text));
}

}  // namespace
}  // namespace stagegate::cli
