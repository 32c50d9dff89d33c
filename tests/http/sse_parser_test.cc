#include "http/sse_parser.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "http/splits.h"
#include "test_util.h"

namespace stagegate::http {
namespace {

using testing::ByteByByte;
using testing::RandomSplit;

using Events = std::vector<SseEvent>;
using namespace std::string_literals;

// One line per event, every byte visible, so a failed CHECK shows exactly what differs.
std::string Show(const Events& events) {
  std::string text;
  for (const SseEvent& event : events) {
    text += "{type=\"" + event.type + "\" data=\"";
    for (unsigned char c : event.data) {
      if (c == '\n') {
        text += "\\n";
      } else if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
        text += escaped;
      } else {
        text += static_cast<char>(c);
      }
    }
    text += "\" id=\"" + event.id + "\"";
    if (event.retry_ms) text += " retry=" + std::to_string(*event.retry_ms);
    text += "}\n";
  }
  return text;
}

// Feeds `pieces` in order to a fresh parser; `truncated` is what Finish returned.
struct Parsed {
  Events events;
  bool truncated = false;
  int64_t comments = 0;
  std::string last_comment;
  std::optional<int64_t> retry_ms;
};

Parsed ParsePieces(const std::vector<std::string_view>& pieces) {
  SseParser parser;
  Parsed parsed;
  Events out;
  for (std::string_view piece : pieces) {
    out.clear();
    parser.Feed(piece, out);
    parsed.events.insert(parsed.events.end(), out.begin(), out.end());
  }
  parsed.truncated = parser.Finish();
  parsed.comments = parser.comments();
  parsed.last_comment = parser.last_comment();
  parsed.retry_ms = parser.retry_ms();
  return parsed;
}

Events Parse(std::string_view stream) {
  return ParsePieces({stream}).events;
}

std::string Describe(const Parsed& parsed) {
  return Show(parsed.events) + "truncated=" + std::to_string(parsed.truncated) +
         " comments=" + std::to_string(parsed.comments) + " last_comment=\"" + parsed.last_comment +
         "\" retry=" + (parsed.retry_ms ? std::to_string(*parsed.retry_ms) : std::string("none")) +
         "\n";
}

TEST_CASE("a blank line dispatches the data lines, one leading space removed", "[sse]") {
  CHECK(Show(Parse("data: hello\n\n")) == Show({{.data = "hello"}}));
  CHECK(Show(Parse("data:x\n\n")) == Show({{.data = "x"}}));             // no space
  CHECK(Show(Parse("data:  two\n\n")) == Show({{.data = " two"}}));      // only one space removed
  CHECK(Show(Parse("data:\tx\n\n")) == Show({{.data = "\tx"}}));         // a tab is not a space
  CHECK(Show(Parse("data: a:b: c\n\n")) == Show({{.data = "a:b: c"}}));  // the first colon splits
  CHECK(Show(Parse("data: x\n")) == Show({}));                           // not yet dispatched
}

TEST_CASE("data lines are joined with LF and the last LF is removed", "[sse]") {
  CHECK(Show(Parse("data: a\ndata: b\ndata: c\n\n")) == Show({{.data = "a\nb\nc"}}));
  CHECK(Show(Parse("data: a\ndata:\n\n")) == Show({{.data = "a\n"}}));
  CHECK(Show(Parse("data: {\"a\":\ndata: 1}\n\n")) == Show({{.data = "{\"a\":\n1}"}}));
}

TEST_CASE("a field name without a colon is a field with an empty value", "[sse]") {
  CHECK(Show(Parse("data\n\n")) == Show({{.data = ""}}));  // one empty data line: an event
  CHECK(Show(Parse("data\ndata\n\n")) == Show({{.data = "\n"}}));
  CHECK(Show(Parse("data: x\nevent\n\n")) == Show({{.data = "x"}}));  // event type reset to ""
}

TEST_CASE("LF, CR and CRLF all end a line, also mixed in one stream", "[sse]") {
  const Events expected = {{.data = "a\nb"}, {.data = "c"}};
  CHECK(Show(Parse("data: a\ndata: b\n\ndata: c\n\n")) == Show(expected));
  CHECK(Show(Parse("data: a\rdata: b\r\rdata: c\r\r")) == Show(expected));
  CHECK(Show(Parse("data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n")) == Show(expected));
  CHECK(Show(Parse("data: a\rdata: b\r\n\ndata: c\n\r")) == Show(expected));
  // LF then CR is two line endings, so the second one is a blank line.
  CHECK(Show(Parse("data: a\n\rdata: b\n\n")) == Show({{.data = "a"}, {.data = "b"}}));
}

TEST_CASE("a CR at the end of one Feed and an LF at the start of the next are one line ending",
          "[sse]") {
  // Were the LF taken as a second line ending, "a" would be dispatched alone.
  Parsed parsed = ParsePieces({"data: a\r", "\ndata: b\r", "\n\r", "\n"});
  CHECK(Show(parsed.events) == Show({{.data = "a\nb"}}));
  CHECK_FALSE(parsed.truncated);
  // An empty Feed in between does not forget the CR.
  CHECK(Show(ParsePieces({"data: a\r", "", "\ndata: b\r", "", "\n\r", "", "\n"}).events) ==
        Show({{.data = "a\nb"}}));
  // Nor does an empty view without data (a null pointer), once the BOM check is past.
  CHECK(Show(ParsePieces({"data: a\r", std::string_view(), "\ndata: b\r", std::string_view(),
                          "\n\r", std::string_view(), "\n"})
                 .events) == Show({{.data = "a\nb"}}));
  // A CR then anything but an LF: the next line starts with that byte.
  CHECK(Show(ParsePieces({"data: a\r", "data: b\r", "\r"}).events) == Show({{.data = "a\nb"}}));
}

TEST_CASE("a UTF-8 BOM at the very start is skipped once, also split across feeds", "[sse]") {
  const std::string bom = "\xEF\xBB\xBF";
  CHECK(Show(Parse(bom + "data: x\n\n")) == Show({{.data = "x"}}));
  CHECK(Show(ParsePieces({"\xEF", "\xBB", "\xBF", "data: x\n\n"}).events) == Show({{.data = "x"}}));
  CHECK(Show(ParsePieces({"\xEF\xBB",
                          "\xBF"
                          "data: x\n\n"})
                 .events) == Show({{.data = "x"}}));
  // A second BOM is part of the line: "\xEF\xBB\xBF" "data" is an unknown field, ignored.
  CHECK(Show(Parse(bom + bom + "data: x\n\ndata: y\n\n")) == Show({{.data = "y"}}));
  // Not at the very start: kept in the data.
  CHECK(Show(Parse("data: " + bom + "x\n\n")) == Show({{.data = bom + "x"}}));
  // The start of a BOM that is not one is content: here it makes the field name unknown.
  CHECK(Show(ParsePieces({"\xEF\xBB", "data: x\n\ndata: y\n\n"}).events) == Show({{.data = "y"}}));
  CHECK(Show(ParsePieces({"\xEF", "\n", "data: y\n\n"}).events) == Show({{.data = "y"}}));
}

TEST_CASE("a UTF-8 character split across feeds arrives whole", "[sse]") {
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";  // café € 😀
  const std::string stream = "data: " + text + "\n\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    INFO("cut at " << cut);
    const std::string_view view = stream;
    CHECK(Show(ParsePieces({view.substr(0, cut), view.substr(cut)}).events) ==
          Show({{.data = text}}));
  }
  CHECK(Show(ParsePieces(ByteByByte(stream)).events) == Show({{.data = text}}));
}

TEST_CASE("the event field sets the type of one event only", "[sse]") {
  CHECK(Show(Parse("event: update\ndata: x\n\ndata: y\n\n")) ==
        Show({{.type = "update", .data = "x"}, {.data = "y"}}));
  CHECK(Show(Parse("event: a\nevent: b\ndata: x\n\n")) == Show({{.type = "b", .data = "x"}}));
}

TEST_CASE("a block without data dispatches nothing and resets the type", "[sse]") {
  CHECK(Show(Parse("event: ping\n\n")) == Show({}));
  CHECK(Show(Parse("event: ping\n\ndata: x\n\n")) == Show({{.data = "x"}}));
  CHECK(Show(Parse("\n\n\n\ndata: x\n\n\n\n")) == Show({{.data = "x"}}));
}

TEST_CASE("the last event ID persists across events until set again", "[sse]") {
  CHECK(Show(Parse("id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid\ndata: d\n\n")) ==
        Show({{.data = "a", .id = "1"},
              {.data = "b", .id = "1"},
              {.data = "c", .id = "2"},
              {.data = "d", .id = ""}}));
  // An id in a block without data still sets the last event ID.
  CHECK(Show(Parse("id: 7\n\ndata: a\n\n")) == Show({{.data = "a", .id = "7"}}));
  // The id may come after the data in its block.
  CHECK(Show(Parse("data: a\nid: 3\n\n")) == Show({{.data = "a", .id = "3"}}));
}

TEST_CASE("an id containing U+0000 is ignored", "[sse]") {
  const std::string stream = "id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n"s;
  CHECK(Show(Parse(stream)) == Show({{.data = "a", .id = "1"}, {.data = "b", .id = "1"}}));
}

TEST_CASE("retry counts only when it is all ASCII digits, on its own event", "[sse]") {
  CHECK(Show(Parse("retry: 1500\ndata: a\n\ndata: b\n\n")) ==
        Show({{.data = "a", .retry_ms = 1500}, {.data = "b"}}));
  for (const char* bad : {"15x0", "-1", "1.5", "", " 15", "+15", "0x10", "99999999999999999999"}) {
    INFO("retry: " << bad);
    Parsed parsed = ParsePieces({std::string("retry: ") + bad + "\ndata: a\n\n"});
    CHECK(Show(parsed.events) == Show({{.data = "a"}}));
    CHECK_FALSE(parsed.retry_ms);
  }
  // A later invalid value leaves the valid one.
  CHECK(Show(Parse("retry: 10\nretry: x\ndata: a\n\n")) == Show({{.data = "a", .retry_ms = 10}}));
  // A retry-only block dispatches no event, but the stream's reconnection time is set.
  Parsed alone = ParsePieces({"retry: 3000\n\ndata: a\n\n"});
  CHECK(Show(alone.events) == Show({{.data = "a"}}));
  CHECK(alone.retry_ms == 3000);
}

TEST_CASE("unknown fields are ignored; field names are case-sensitive and exact", "[sse]") {
  CHECK(Show(Parse("foo: bar\ndata: a\n\n")) == Show({{.data = "a"}}));
  CHECK(Show(Parse("Data: x\nDATA: y\ndata : z\n data: w\ndata: a\n\n")) == Show({{.data = "a"}}));
  // A block of unknown fields only dispatches nothing.
  CHECK(Show(Parse("foo: bar\n\n")) == Show({}));
}

TEST_CASE("comment lines are counted and the last one is kept", "[sse]") {
  Parsed parsed =
      ParsePieces({": keep-alive\n\n:\ndata: a\n: server-timing upstream;dur=12.5\n\n:x\n"});
  CHECK(Show(parsed.events) == Show({{.data = "a"}}));  // a comment does not end the event
  CHECK(parsed.comments == 4);
  CHECK(parsed.last_comment == "x");
  CHECK_FALSE(parsed.truncated);  // a comment is not a partial event
  CHECK(ParsePieces({": server-timing upstream;dur=12.5\n"}).last_comment ==
        "server-timing upstream;dur=12.5");
}

TEST_CASE("Finish discards an event without its blank line and says one was pending", "[sse]") {
  Parsed trailing = ParsePieces({"data: a\n\ndata: b\n"});
  CHECK(Show(trailing.events) == Show({{.data = "a"}}));
  CHECK(trailing.truncated);
  CHECK(ParsePieces({"data: a\n\ndata: b"}).truncated);  // a partial line
  CHECK(ParsePieces({"data: a\n\nid: 1\n"}).truncated);  // a field line without data
  CHECK(ParsePieces({"data: a\n\nda"}).truncated);
  CHECK(ParsePieces({"\xEF\xBB"}).truncated);  // the start of a BOM is a partial line
  CHECK_FALSE(ParsePieces({"data: a\n\n"}).truncated);
  CHECK_FALSE(ParsePieces({"data: a\r\n\r\n"}).truncated);
  CHECK_FALSE(ParsePieces({"data: a\r\r"}).truncated);
  CHECK_FALSE(ParsePieces({""}).truncated);
  CHECK_FALSE(ParsePieces({}).truncated);
}

TEST_CASE("Feed appends to the caller's vector and Reset starts a new stream", "[sse]") {
  SseParser parser;
  Events out = {{.data = "earlier"}};
  parser.Feed("\xEF\xBB\xBFid: 1\ndata: a\n\ndata: b\n\ndata: pending", out);
  CHECK(Show(out) ==
        Show({{.data = "earlier"}, {.data = "a", .id = "1"}, {.data = "b", .id = "1"}}));
  parser.Reset();  // drops the pending event and the last event ID; a BOM is allowed again
  out.clear();
  parser.Feed(
      "\xEF\xBB\xBF"
      "data: c\n\n",
      out);
  CHECK(Show(out) == Show({{.data = "c"}}));
  CHECK_FALSE(parser.Finish());
}

TEST_CASE("every split of a stream into two or three pieces yields the same events", "[sse]") {
  const std::string stream =
      "\xEF\xBB\xBFretry: 250\r\n: hi\r\nid: 1\revent: a\ndata: x\r\ndata:\xC3\xA9\r\r"
      "data\n\ndata: y\rid: 2\0z\n\n"
      "foo\r\n\r\ndata: tail"s;
  const std::string_view view = stream;
  const std::string expected = Describe(ParsePieces({view}));
  REQUIRE(Show(ParsePieces({view}).events) ==
          Show({{.type = "a", .data = "x\n\xC3\xA9", .id = "1", .retry_ms = 250},
                {.data = "", .id = "1"},
                {.data = "y", .id = "1"}}));
  for (size_t first = 0; first <= view.size(); ++first) {
    for (size_t second = first; second <= view.size(); ++second) {
      const std::string got = Describe(ParsePieces(
          {view.substr(0, first), view.substr(first, second - first), view.substr(second)}));
      if (got != expected) {
        INFO("cuts at " << first << " and " << second);
        REQUIRE(got == expected);
      }
    }
  }
}

TEST_CASE("every fixture parses the same whole, byte by byte and in random splits", "[sse]") {
  const std::filesystem::path folder = testing::Testdata("sse");
  std::vector<std::filesystem::path> fixtures;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().extension() == ".sse") fixtures.push_back(entry.path());
  std::sort(fixtures.begin(), fixtures.end());
  REQUIRE(fixtures.size() >= 12);
  for (const std::filesystem::path& path : fixtures) {
    INFO(path.filename().string());
    const std::string stream = testing::ReadText(path.string());
    REQUIRE(!stream.empty());
    const Parsed whole = ParsePieces({stream});
    CHECK(!whole.events.empty());
    const std::string expected = Describe(whole);
    CHECK(Describe(ParsePieces(ByteByByte(stream))) == expected);
    std::mt19937 random(20240611);
    for (int split = 0; split < 200; ++split) {
      const std::string got = Describe(ParsePieces(RandomSplit(stream, random)));
      if (got != expected) {
        INFO("random split " << split);
        REQUIRE(got == expected);
      }
    }
  }
}

}  // namespace
}  // namespace stagegate::http

namespace stagegate::http {
namespace {

// FeedEach over `pieces`, keeping a copy of every event it hands out.
std::vector<SseEvent> EachOverPieces(const std::vector<std::string_view>& pieces) {
  SseParser parser;
  std::vector<SseEvent> events;
  for (std::string_view piece : pieces)
    parser.FeedEach(piece, [&events](const SseEvent& event) { events.push_back(event); });
  parser.Finish();
  return events;
}

TEST_CASE("FeedEach hands out the same events as Feed, whole, byte by byte and in random splits",
          "[sse]") {
  const std::filesystem::path folder = testing::Testdata("sse");
  int fixtures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".sse") continue;
    ++fixtures;
    INFO(entry.path().filename().string());
    const std::string stream = testing::ReadText(entry.path().string());
    const std::vector<SseEvent> expected = ParsePieces({stream}).events;
    REQUIRE(!expected.empty());
    CHECK(EachOverPieces({stream}) == expected);
    CHECK(EachOverPieces(ByteByByte(stream)) == expected);
    std::mt19937 random(7);
    for (int split = 0; split < 50; ++split)
      REQUIRE(EachOverPieces(RandomSplit(stream, random)) == expected);
  }
  CHECK(fixtures >= 12);
}

TEST_CASE("FeedEach reuses its buffers: the type and data do not leak into the next event",
          "[sse]") {
  SseParser parser;
  std::vector<SseEvent> events;
  parser.FeedEach("event: long\ndata: a much longer first payload\n\ndata: b\n\n",
                  [&events](const SseEvent& event) { events.push_back(event); });
  REQUIRE(events.size() == 2);
  CHECK(events[0] == SseEvent{.type = "long", .data = "a much longer first payload"});
  CHECK(events[1] == SseEvent{.type = "", .data = "b"});
}

}  // namespace
}  // namespace stagegate::http
