#include "base/strings.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace stagegate {
namespace {

using Strings = std::vector<std::string>;
using namespace std::string_literals;

TEST_CASE("EditDistance counts insertions, deletions and substitutions", "[strings]") {
  CHECK(EditDistance("", "") == 0u);
  CHECK(EditDistance("", "abc") == 3u);
  CHECK(EditDistance("abc", "") == 3u);
  CHECK(EditDistance("same", "same") == 0u);
  CHECK(EditDistance("abc", "abd") == 1u);   // one substitution
  CHECK(EditDistance("abc", "abxc") == 1u);  // one insertion
  CHECK(EditDistance("abc", "ac") == 1u);    // one deletion
  CHECK(EditDistance("ab", "ba") == 2u);     // a transposition is two edits
  CHECK(EditDistance("kitten", "sitting") == 3u);
  CHECK(EditDistance("sitting", "kitten") == 3u);
  CHECK(EditDistance("flaw", "lawn") == 2u);
  CHECK(EditDistance("temprature", "temperature") == 1u);
}

TEST_CASE("ClosestMatch suggests a likely typo and nothing for a different word", "[strings]") {
  const Strings keys = {"rate", "temperature", "timeout"};
  CHECK(ClosestMatch("temprature", keys) == "temperature");
  CHECK(ClosestMatch("timout", keys) == "timeout");
  CHECK(ClosestMatch("banana", keys) == "");
  CHECK(ClosestMatch("temprature", {}) == "");

  SECTION("the closest candidate wins, ties go to the earlier one") {
    CHECK(ClosestMatch("rat", {"rates", "rate"}) == "rate");
    CHECK(ClosestMatch("rave", {"rate", "race"}) == "rate");
    CHECK(ClosestMatch("rave", {"race", "rate"}) == "race");
  }

  SECTION("the allowed distance is a third of the word's length, at least 1 and at most 3") {
    // "ab": 2 / 3 == 0, raised to 1.
    CHECK(ClosestMatch("ab", {"xb"}) == "xb");
    CHECK(ClosestMatch("ab", {"xy"}) == "");
    // "target": 6 / 3 == 2.
    CHECK(ClosestMatch("target", {"tagret"}) == "tagret");
    CHECK(ClosestMatch("target", {"tar"}) == "");
    // 18 characters: 18 / 3 == 6, capped at 3.
    CHECK(ClosestMatch("abcdefghijklmnopqr", {"XYZdefghijklmnopqr"}) == "XYZdefghijklmnopqr");
    CHECK(ClosestMatch("abcdefghijklmnopqr", {"WXYZefghijklmnopqr"}) == "");
  }
}

TEST_CASE("DidYouMean phrases the suggestion or says nothing", "[strings]") {
  const Strings keys = {"rate", "temperature", "timeout"};
  CHECK(DidYouMean("temprature", keys) == " (did you mean 'temperature'?)");
  CHECK(DidYouMean("banana", keys) == "");
}

TEST_CASE("Join puts the separator between parts only", "[strings]") {
  CHECK(Join({}, ", ") == "");
  CHECK(Join({"a"}, ", ") == "a");
  CHECK(Join({"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(Join({"", "x", ""}, ",") == ",x,");
  CHECK(Join({"a", "b"}, "") == "ab");
}

TEST_CASE("Split keeps every field, empty ones included", "[strings]") {
  CHECK(Split("a,b,c", ',') == Strings{"a", "b", "c"});
  CHECK(Split("abc", ',') == Strings{"abc"});
  CHECK(Split("", ',') == Strings{""});
  CHECK(Split("a,,b", ',') == Strings{"a", "", "b"});
  CHECK(Split(",a,", ',') == Strings{"", "a", ""});
  CHECK(Split(",", ',') == Strings{"", ""});
  CHECK(Split("a b,c", ' ') == Strings{"a", "b,c"});
}

TEST_CASE("Trim removes surrounding spaces, tabs and line ends only", "[strings]") {
  CHECK(Trim("  x y \t\r\n") == "x y");
  CHECK(Trim("\tx") == "x");
  CHECK(Trim("x") == "x");
  CHECK(Trim("") == "");
  CHECK(Trim(" \t\r\n ") == "");
  CHECK(Trim(" a  b ") == "a  b");
}

TEST_CASE("FormatNumber writes numbers without trailing zeros", "[strings]") {
  CHECK(FormatNumber(3.0) == "3");
  CHECK(FormatNumber(0.25) == "0.25");
  CHECK(FormatNumber(1.23456) == "1.235");
  CHECK(FormatNumber(-0.0) == "0");
  CHECK(FormatNumber(-0.0001) == "0");  // rounds to -0
  CHECK(FormatNumber(100.0) == "100");  // zeros before the point stay
  CHECK(FormatNumber(10.5) == "10.5");
  CHECK(FormatNumber(-2.5) == "-2.5");
  CHECK(FormatNumber(1000000.0) == "1000000");
  CHECK(FormatNumber(1.23456, 6) == "1.23456");
  CHECK(FormatNumber(2.6, 0) == "3");
  CHECK(FormatNumber(0.0004) == "0");
}

TEST_CASE("Utf8Prefix never ends inside a UTF-8 sequence", "[strings]") {
  CHECK(Utf8Prefix("hello", 10) == "hello");
  CHECK(Utf8Prefix("hello", 3) == "hel");
  // "é" is C3 A9: a cut between its two bytes drops it whole.
  CHECK(Utf8Prefix("caf\xC3\xA9!", 4) == "caf");
  CHECK(Utf8Prefix("caf\xC3\xA9!", 5) == "caf\xC3\xA9");
  // A four-byte character (U+1F600) cut after one, two or three of its bytes.
  for (size_t n = 1; n <= 3; ++n)
    CHECK(Utf8Prefix("\xF0\x9F\x98\x80x", n).empty());
  CHECK(Utf8Prefix("\xF0\x9F\x98\x80x", 4) == "\xF0\x9F\x98\x80");
}

TEST_CASE("ValidUtf8 replaces each maximal ill-formed part by one U+FFFD", "[strings]") {
  const std::string r = "\xEF\xBF\xBD";
  CHECK(ValidUtf8("caf\xC3\xA9 \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xF0\x9F\x98\x80");
  CHECK(ValidUtf8("a\xFF\xFE"
                  "b") == "a" + r + r + "b");  // invalid lead bytes, one each
  CHECK(ValidUtf8("\xE2\x82"
                  "x") == r + "x");                       // a sequence cut short is one part
  CHECK(ValidUtf8("\xF0\x9F\x98") == r);                  // ... also at the end
  CHECK(ValidUtf8("\xC0\xAF") == r + r);                  // an overlong form: two bytes
  CHECK(ValidUtf8("\xED\xA0\x80") == r + r + r);          // a surrogate: no lead allows A0
  CHECK(ValidUtf8("\xF4\x90\x80\x80") == r + r + r + r);  // above U+10FFFF
  CHECK(ValidUtf8("\x80"
                  "a") == r + "a");  // a lone continuation byte
  CHECK(IsValidUtf8("caf\xC3\xA9"));
  CHECK_FALSE(IsValidUtf8("caf\xC3"));
  CHECK_FALSE(IsValidUtf8("\xFF"));
  CHECK(IsValidUtf8(""));
}

TEST_CASE("CSV records keep quoted commas, quotes and line breaks, with their lines", "[base]") {
  int unclosed = -1;
  const std::vector<CsvRecord> records =
      ParseCsv("a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\n\n\"two\nlines\",\nlast", unclosed);
  CHECK(unclosed == 0);
  REQUIRE(records.size() == 4);
  CHECK(records[0].line == 1);
  CHECK(records[0].fields == std::vector<std::string>{"a", "b"});
  CHECK(records[1].line == 2);
  CHECK(records[1].fields == std::vector<std::string>{"x, y", "say \"hi\""});
  CHECK(records[2].line == 4);  // after the blank line 3
  CHECK(records[2].fields == std::vector<std::string>{"two\nlines", ""});
  CHECK(records[3].line == 6);
  CHECK(records[3].fields == std::vector<std::string>{"last"});
  // What CsvField writes, ParseCsv reads back.
  const std::string hostile = "a \"b\", c\nd";
  CHECK(ParseCsv(CsvField(hostile) + "," + CsvField("plain"), unclosed)[0].fields ==
        std::vector<std::string>{hostile, "plain"});
  ParseCsv("ok\n\"open,\nstill open", unclosed);
  CHECK(unclosed == 2);
  // A lone CR ends a record but not a line (found by the recorded_answers fuzz target: a problem
  // named line 3 of a file of two).
  const std::vector<CsvRecord> cr = ParseCsv("a,b\rc,d\ne\r\"open", unclosed);
  REQUIRE(cr.size() == 4);
  CHECK(cr[0].line == 1);
  CHECK(cr[1].line == 1);
  CHECK(cr[1].fields == std::vector<std::string>{"c", "d"});
  CHECK(cr[2].line == 2);
  CHECK(cr[3].line == 2);
  CHECK(unclosed == 2);
}

TEST_CASE("CsvField neutralises text a spreadsheet would run as a formula", "[base][csv]") {
  CHECK(CsvField("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"");
  CHECK(CsvField("+1+cmd|' /C calc'!A0") == "'+1+cmd|' /C calc'!A0");
  CHECK(CsvField("-2+3") == "'-2+3");
  CHECK(CsvField("@SUM(A1:A2)") == "'@SUM(A1:A2)");
  CHECK(CsvField("\t=1") == "'\t=1");
  CHECK(CsvField("\r=1") == "\"'\r=1\"");
  CHECK(CsvField("-") == "'-");
  CHECK(CsvField("-inf") == "'-inf");
  // Numbers stay numbers, and text that starts otherwise is as it was.
  CHECK(CsvField("-1.5") == "-1.5");
  CHECK(CsvField("+2e3") == "+2e3");
  CHECK(CsvField("a=b") == "a=b");
  CHECK(CsvField("") == "");
  // The quote is part of the cell: ParseCsv reads it back with the text after it.
  int unclosed = -1;
  CHECK(ParseCsv(CsvField("=1,2") + "," + CsvField("x"), unclosed)[0].fields ==
        std::vector<std::string>{"'=1,2", "x"});
}

TEST_CASE("ShownText escapes what a terminal would act on and keeps the rest", "[strings]") {
  CHECK(ShownText("llama-3-8b \"v2\" \\ caf\xC3\xA9 \xE4\xB8\xAD") ==
        "llama-3-8b \"v2\" \\ caf\xC3\xA9 \xE4\xB8\xAD");
  CHECK(ShownText("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(ShownText("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(ShownText("a\0b"s) == "a\\x00b");
  CHECK(ShownText("del\x7f") == "del\\x7f");
  // C1 controls: U+009B is CSI, an escape sequence in one character.
  CHECK(ShownText("\xC2\x9B"
                  "31m \xC2\x85") == "\\u{9b}31m \\u{85}");
  // Bidi embeddings, overrides, isolates and marks; line and paragraph separators.
  CHECK(ShownText("abc\xE2\x80\xAE"
                  "fed") == "abc\\u{202e}fed");
  CHECK(ShownText("\xE2\x80\xAA\xE2\x80\xAB\xE2\x80\xAC\xE2\x80\xAD") ==
        "\\u{202a}\\u{202b}\\u{202c}\\u{202d}");
  CHECK(ShownText("\xE2\x81\xA6\xE2\x81\xA7\xE2\x81\xA8\xE2\x81\xA9") ==
        "\\u{2066}\\u{2067}\\u{2068}\\u{2069}");
  CHECK(ShownText("\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C") == "\\u{200e}\\u{200f}\\u{61c}");
  CHECK(ShownText("a\xE2\x80\xA8"
                  "b\xE2\x80\xA9"
                  "c") == "a\\u{2028}b\\u{2029}c");
  // What is not UTF-8, byte by byte: a lone continuation, a truncated sequence, an overlong form.
  CHECK(ShownText("\x80x\xE2\x80y\xC0\xAF") == "\\x80x\\xe2\\x80y\\xc0\\xaf");
}

TEST_CASE("ShownText cuts long text, never inside an escape or a character, and counts the rest",
          "[strings]") {
  const std::string long_id(100'000, 'm');
  CHECK(ShownText(long_id, 200) == std::string(200, 'm') + "... (99800 more bytes)");
  CHECK(ShownText(std::string(200, 'm'), 200) == std::string(200, 'm'));
  // 199 bytes, then an escape of 4 that does not fit: cut before it, not in it.
  CHECK(ShownText(std::string(199, 'm') + "\x1b" + "xyz") ==
        std::string(199, 'm') + "... (4 more bytes)");
  // 199 bytes, then a character of 2 bytes: cut before it.
  CHECK(ShownText(std::string(199, 'm') + "\xC3\xA9") ==
        std::string(199, 'm') + "... (2 more bytes)");
  CHECK(ShownText("abcdef", 3) == "abc... (3 more bytes)");
  CHECK(ShownText("") == "");
}

TEST_CASE("IsShownAsIs is true exactly when ShownText shows text as it is", "[strings]") {
  for (const std::string& text :
       {"llama-3-8b"s, "org/model \"v2\": # {x} [y] \\ 'z' \xC3\xA9"s, ""s, "a b"s})
    CHECK(IsShownAsIs(text));
  for (const std::string& text : {"a\nb"s, "\x1b[2J"s, "a\0b"s, "\xC2\x9B"s, "x\xE2\x80\xAE"s,
                                  "\xE2\x81\xA6"s, "\xE2\x80\xA8"s, "\xff"s, "\t"s})
    CHECK_FALSE(IsShownAsIs(text));
}

TEST_CASE("IsLayoutControl is true of the characters that reorder or break shown text",
          "[strings]") {
  for (uint32_t c : {0x80u, 0x9Bu, 0x9Fu, 0x61Cu, 0x200Eu, 0x200Fu, 0x202Au, 0x202Eu, 0x2066u,
                     0x2069u, 0x2028u, 0x2029u})
    CHECK(IsLayoutControl(c));
  for (uint32_t c : {0x41u, 0x7Fu, 0xA0u, 0xE9u, 0x200Bu, 0x2027u, 0x202Fu, 0x206Au, 0x1F642u})
    CHECK_FALSE(IsLayoutControl(c));
}

TEST_CASE("ShellWord quotes what /bin/sh would read otherwise", "[strings]") {
  CHECK(ShellWord("reports/stagegate.db") == "reports/stagegate.db");
  CHECK(ShellWord("my store.db") == "'my store.db'");
  CHECK(ShellWord("it's") == "'it'\\''s'");
  CHECK(ShellWord("") == "''");
  CHECK(ShellWord("$(rm -rf /)") == "'$(rm -rf /)'");
}

}  // namespace
TEST_CASE("AsciiLower lowers A-Z alone, and HasControlCharacter finds C0 and DEL", "[strings]") {
  CHECK(AsciiLower("Text/Event-STREAM; \xC3\x89t\xC3\xA9") ==
        "text/event-stream; \xC3\x89t\xC3\xA9");
  CHECK_FALSE(HasControlCharacter("plain \xC3\xA9 text"));
  CHECK(HasControlCharacter(std::string("nul\0inside", 11)));
  CHECK(HasControlCharacter("del\x7f"));
  CHECK(HasControlCharacter("two\nlines"));
  CHECK_FALSE(HasControlCharacter("two\nlines\r\n\tand a tab", true));
  CHECK(HasControlCharacter("bell\a", true));
}

TEST_CASE("DisplayTextProblem names what would make a text read otherwise than it is",
          "[strings]") {
  const auto problem = [](std::string_view text, bool lines = false) {
    return DisplayTextProblem(text, lines).value_or("none");
  };
  CHECK(problem("Dana Ortiz") == "none");
  CHECK(problem("Zo\xC3\xAB \xE6\x9D\x8E \xD8\xB9\xD9\x84\xD9\x8A") == "none");  // Zoë 李 علي
  CHECK(problem("\xF0\x9F\x99\x82") == "none");                                  // an emoji
  CHECK(problem("two\nlines", true) == "none");
  CHECK(problem("two\nlines") == "holds a control character (U+000A at byte 4)");
  CHECK(problem("Dana\x1b[2J") == "holds a control character (U+001B at byte 5)");
  CHECK(problem("del\x7f", true) == "holds a control character (U+007F at byte 4)");
  CHECK(problem("c1 \xC2\x85 next line", true) == "holds a control character (U+0085 at byte 4)");
  CHECK(problem("c1 \xC2\x9F") == "holds a control character (U+009F at byte 4)");
  CHECK(problem("\xC2\xA0no-break space") == "none");  // U+00A0, just past C1
  // U+202E makes "Dana\u202Etpecca" read "Danaaccept"; every bidirectional control is refused.
  CHECK(problem("Dana\xE2\x80\xAEtpecca") ==
        "holds a bidirectional control character (U+202E at byte 5)");
  for (const char* control :
       {"\xD8\x9C", "\xE2\x80\x8E", "\xE2\x80\x8F", "\xE2\x80\xAA", "\xE2\x80\xAB", "\xE2\x80\xAC",
        "\xE2\x80\xAD", "\xE2\x81\xA6", "\xE2\x81\xA7", "\xE2\x81\xA8", "\xE2\x81\xA9"}) {
    INFO(control);
    CHECK(problem(std::string("a") + control, true)
              .starts_with("holds a bidirectional control character (U+"));
  }
  CHECK(problem("Dana\xE2\x80\xA8Ortiz", true) ==
        "holds a line or paragraph separator (U+2028 at byte 5)");
  CHECK(problem("\xE2\x80\xA9", true) == "holds a line or paragraph separator (U+2029 at byte 1)");
  CHECK(problem("\xE2\x80\xAF") == "none");  // U+202F, a narrow no-break space
  // Bytes that are not UTF-8: a stray continuation, a truncated sequence, an overlong form, a
  // surrogate.
  CHECK(problem("Dana\x80") == "is not valid UTF-8 (at byte 5)");
  CHECK(problem("Dana \xE2\x80") == "is not valid UTF-8 (at byte 6)");
  CHECK(problem("\xC0\xAF") == "is not valid UTF-8 (at byte 1)");
  CHECK(problem("x\xED\xA0\x80") == "is not valid UTF-8 (at byte 2)");
}

}  // namespace stagegate
