// The hot-path JSON writers: what they write is JSON that reads back as what was written.

#include "base/json_text.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <random>

namespace stagegate {
namespace {

using json = nlohmann::json;

std::string Quoted(std::string_view text) {
  std::string out;
  AppendJsonString(out, text);
  return out;
}

TEST_CASE("AppendJsonString escapes quotes, backslashes and control bytes only", "[base]") {
  CHECK(Quoted("") == R"("")");
  CHECK(Quoted("plain text, longer than eight bytes") ==
        R"("plain text, longer than eight bytes")");
  CHECK(Quoted("a\"b\\c\nd\re\tf") == R"("a\"b\\c\nd\re\tf")");
  CHECK(Quoted(std::string("\x00\x01\x1f", 3)) == R"("\u0000\u0001\u001f")");
  CHECK(Quoted("\b\f") == R"("\b\f")");
  CHECK(Quoted("\x7f \xC3\xBC") == "\"\x7f \xC3\xBC\"");  // DEL and UTF-8 pass through
  // An escape at every position of an 8-byte word, and just after one.
  for (size_t at = 0; at < 17; ++at) {
    std::string text(17, 'x');
    text[at] = '"';
    CHECK(json::parse(Quoted(text)) == text);
  }
}

TEST_CASE("AppendJsonString escapes every byte as nlohmann/json's dump does", "[base]") {
  for (int c = 0; c < 0x80; ++c) {
    const std::string text(1, static_cast<char>(c));
    INFO("byte " << c);
    CHECK(Quoted(text) == json(text).dump());
  }
  const std::string text = "long text with \"quotes\", a \\ and \x02 \xC3\xBC in it";
  CHECK(Quoted(text) == json(text).dump());
}

TEST_CASE("AppendJsonString output reads back as the input for random text", "[base]") {
  std::mt19937 random(11);
  const std::string alphabet =
      std::string("abc \"\\\n\r\t\x01\x1f\x7f", 13) + "\xC3\xBC\xE2\x82\xAC";
  std::uniform_int_distribution<size_t> length(0, 40);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  for (int i = 0; i < 2000; ++i) {
    std::string text;
    for (size_t n = length(random); n > 0; --n) {
      const size_t at = pick(random);
      // Keep multi-byte characters whole, so the text stays valid UTF-8.
      if (at >= 13)
        text += at < 15 ? "\xC3\xBC" : "\xE2\x82\xAC";
      else
        text += alphabet[at];
    }
    INFO(json(text).dump());
    REQUIRE(json::parse(Quoted(text)) == text);
  }
}

TEST_CASE("AppendJsonString replaces bytes that are not UTF-8 as dump() with replace does",
          "[base]") {
  const auto dumped = [](const std::string& text) {
    return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
  };
  CHECK(Quoted("a\xFF\xFE"
               "b") ==
        "\"a\xEF\xBF\xBD\xEF\xBF\xBD"
        "b\"");
  // Random bytes, mostly high ones, in runs long enough for the 8-byte fast path.
  std::mt19937 random(5);
  const std::string alphabet = std::string("ab\"\x01", 4) + "\x80\xBF\xC3\xE2\xED\xF0\xF4\xFF";
  std::uniform_int_distribution<size_t> length(0, 30);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    for (size_t n = length(random); n > 0; --n)
      text += alphabet[pick(random)];
    INFO(dumped(text));
    const std::string quoted = Quoted(text);
    REQUIRE(quoted == dumped(text));
    REQUIRE_NOTHROW(json::parse(quoted));
  }
}

TEST_CASE("AppendJsonNumber writes integers, shortest doubles and null", "[base]") {
  std::string out;
  AppendJsonNumber(out, std::optional<int64_t>(-9007199254740993));
  out += ',';
  AppendJsonNumber(out, std::optional<double>(0.1));
  out += ',';
  AppendJsonNumber(out, std::optional<double>(1.5e-7));
  out += ',';
  AppendJsonNumber(out, std::optional<int64_t>());
  out += ',';
  AppendJsonNumber(out, std::optional<double>());
  CHECK(out == "-9007199254740993,0.1,1.5e-07,null,null");
  CHECK(json::parse("[" + out + "]")[2] == 1.5e-7);
}

}  // namespace
}  // namespace stagegate
