#include "review/reviewer_page.h"

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace stagegate::review {
namespace {

using nlohmann::json;

constexpr std::string_view kPacketOpen = R"(<script type="application/json" id="packet">)";

json Packet(const std::string& answer, const std::string& turn = "Where do I book leave?") {
  return {
      {"format", "stagegate-packet"},
      {"version", 1},
      {"export_id", "x-4f9c2a7e"},
      {"reviewer", "r1"},
      {"instructions", "Score each answer."},
      {"rubric",
       {{"title", "Service desk answers"},
        {"criteria",
         {{{"id", "correctness"},
           {"question", "Is the answer factually right?"},
           {"hard", false},
           {"levels", {{{"level", 1}, {"anchor", "Wrong"}}, {{"level", 2}, {"anchor", "Right"}}}}},
          {{"id", "permission_safety"},
           {"question", "Does it respect access?"},
           {"hard", true},
           {"levels",
            {{{"level", 0}, {"anchor", "Fail"}}, {{"level", 1}, {"anchor", "Pass"}}}}}}}}},
      {"items",
       {{{"item", "i-3kq8w2mz7d"},
         {"conversation", {{{"role", "user"}, {"content", turn}}}},
         {"answer", answer},
         {"reference", nullptr}}}}};
}

// The text between the packet's opening tag and the first "</script" after it, as a browser's
// HTML parser would end the element.
std::string EmbeddedPacket(const std::string& page) {
  const size_t open = page.find(kPacketOpen);
  REQUIRE(open != std::string::npos);
  const size_t start = open + kPacketOpen.size();
  const size_t end = page.find("</script", start);
  REQUIRE(end != std::string::npos);
  return page.substr(start, end - start);
}

size_t Count(const std::string& text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

// Every value of a src= or href= attribute, unquoted or quoted, as written.
std::vector<std::string> LinkValues(const std::string& page) {
  std::vector<std::string> values;
  for (const std::string_view name : {"src=", "href="}) {
    for (size_t at = page.find(name); at != std::string::npos; at = page.find(name, at + 1)) {
      size_t start = at + name.size();
      const bool quoted = start < page.size() && (page[start] == '"' || page[start] == '\'');
      const char end_char = quoted ? page[start] : ' ';
      if (quoted) ++start;
      size_t end = page.find_first_of(quoted ? std::string(1, end_char) : std::string(" >"), start);
      values.push_back(page.substr(start, end == std::string::npos ? end : end - start));
    }
  }
  return values;
}

TEST_CASE("ReviewerPageHtml embeds the packet so that it parses back unchanged", "[review]") {
  const json packet = Packet("Book it in Forge People.\nThen tell your manager.");
  const std::string page = ReviewerPageHtml(packet);
  CHECK(page.starts_with("<!DOCTYPE html>\n"));
  CHECK(json::parse(EmbeddedPacket(page)) == packet);
}

TEST_CASE("ReviewerPageHtml asks for nothing outside the file", "[review]") {
  const std::string page = ReviewerPageHtml(Packet("See the intranet."));
  CHECK(page.find("default-src 'none'") != std::string::npos);
  for (const std::string& value : LinkValues(page)) {
    INFO(value);
    CHECK(value.find(':') != std::string::npos);  // a scheme, never a relative path
    CHECK(value.starts_with("data:"));
  }
  CHECK(page.find("http:") == std::string::npos);
  CHECK(page.find("https:") == std::string::npos);
  CHECK(page.find("url(") == std::string::npos);
  CHECK(page.find("@import") == std::string::npos);
  CHECK(page.find("<link rel=\"stylesheet") == std::string::npos);
  CHECK(page.find("innerHTML") == std::string::npos);
  CHECK(page.find("insertAdjacentHTML") == std::string::npos);
  CHECK(page.find("document.write") == std::string::npos);
}

TEST_CASE("ReviewerPageHtml writes hostile text only as escaped JSON", "[review]") {
  const std::string line_separator = "\xE2\x80\xA8";
  const std::string paragraph_separator = "\xE2\x80\xA9";
  const std::vector<std::string> hostile = {
      "</script><script>alert(1)</script>",
      "<img src=x onerror=alert(1)>",
      "</svg>",
      "q\"'q",
      "<!-- <script>",
      "a" + line_separator + "b" + paragraph_separator + "c",
      "&lt;b&gt; & <b>",
  };
  const std::string plain_page = ReviewerPageHtml(Packet("plain"));
  for (const std::string& text : hostile) {
    INFO(text);
    for (const json& packet : {Packet(text), Packet("plain", text)}) {
      const std::string page = ReviewerPageHtml(packet);
      CHECK(page.find(text) == std::string::npos);
      // The page's own markup is all that ends a script or opens a tag.
      CHECK(Count(page, "</script") == Count(plain_page, "</script"));
      CHECK(Count(page, "<") == Count(plain_page, "<"));
      CHECK(page.find(line_separator) == std::string::npos);
      CHECK(page.find(paragraph_separator) == std::string::npos);
      CHECK(json::parse(EmbeddedPacket(page)) == packet);
    }
  }
}

TEST_CASE("ScriptSafeJson escapes each unsafe character as \\u", "[review]") {
  CHECK(ScriptSafeJson("<a href='x'>&</a>") ==
        R"("\u003ca href=\u0027x\u0027\u003e\u0026\u003c/a\u003e")");
  CHECK(ScriptSafeJson("\xE2\x80\xA8\xE2\x80\xA9") == R"("\u2028\u2029")");
  // A backslash before an escaped character stays its own escape.
  CHECK(ScriptSafeJson("\\<") == R"("\\\u003c")");
  CHECK(ScriptSafeJson(json{{"<", 1}}) == R"({"\u003c":1})");
  // Other non-ASCII text passes through as UTF-8.
  CHECK(ScriptSafeJson("caf\xC3\xA9 \xE2\x80\x94") == "\"caf\xC3\xA9 \xE2\x80\x94\"");
}

TEST_CASE("ReviewerPageHtml replaces invalid UTF-8 instead of throwing", "[review]") {
  const json packet = Packet("broken \xC3\x28 and \xFF end");
  std::string page;
  REQUIRE_NOTHROW(page = ReviewerPageHtml(packet));
  const json embedded = json::parse(EmbeddedPacket(page));
  CHECK(embedded["items"][0]["answer"] == "broken \xEF\xBF\xBD( and \xEF\xBF\xBD end");
  CHECK(embedded["reviewer"] == "r1");
}

}  // namespace
}  // namespace stagegate::review
