#include "report/svg.h"

#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "test_util.h"

namespace stagegate::report {
namespace {

using Strings = std::vector<std::string>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

size_t Count(std::string_view text, std::string_view part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1))
    ++count;
  return count;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Every start tag (or empty-element tag) named `name`, e.g. "<circle cx=... />".
Strings Tags(const std::string& svg, const std::string& name) {
  Strings tags;
  const std::string open = "<" + name + " ";
  for (size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1))
    tags.push_back(svg.substr(at, svg.find('>', at) - at + 1));
  return tags;
}

// The tags named `name` that carry class="`css_class`".
Strings TagsOfClass(const std::string& svg, const std::string& name, const std::string& css_class) {
  Strings tags;
  for (const std::string& tag : Tags(svg, name)) {
    if (tag.find("class=\"" + css_class + "\"") != std::string::npos) tags.push_back(tag);
  }
  return tags;
}

std::string Attr(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t at = tag.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  return tag.substr(from, tag.find('"', from) - from);
}

double NumAttr(const std::string& tag, const std::string& name) {
  const std::string value = Attr(tag, name);
  INFO(tag << " has no " << name);
  REQUIRE(!value.empty());
  return std::stod(value);
}

// The text of a <g class="`css_class`"> group: the contents of its <text> elements, in order.
Strings TextsOfGroup(const std::string& svg, const std::string& css_class) {
  const size_t start = svg.find("<g class=\"" + css_class + "\"");
  if (start == std::string::npos) return {};
  const std::string group = svg.substr(start, svg.find("</g>", start) - start);
  Strings texts;
  static const std::regex kText("<text[^>]*>([^<]*)</text>");
  for (std::sregex_iterator it(group.begin(), group.end(), kText), end; it != end; ++it)
    texts.push_back((*it)[1]);
  return texts;
}

struct Rect {
  double left = 0, top = 0, right = 0, bottom = 0;
};

Rect PlotArea(const std::string& svg) {
  const Strings areas = TagsOfClass(svg, "rect", "plot-area");
  REQUIRE(areas.size() == 1);
  const double x = NumAttr(areas[0], "x"), y = NumAttr(areas[0], "y");
  return {x, y, x + NumAttr(areas[0], "width"), y + NumAttr(areas[0], "height")};
}

struct Xmllint {
  int exit_code = -1;
  std::string output;
};

// xmllint (Debian's libxml2-utils) with `options` over `text`; exit code 127 when it is missing.
Xmllint RunXmllint(const std::string& text, const std::string& options = "--noout") {
  testing::TempDir dir;
  const std::string path = dir / "chart.svg";
  testing::WriteText(path, text);
  const testing::Ran ran = testing::RunShell("xmllint " + options + " '" + path + "'");
  return {.exit_code = ran.exit_code, .output = ran.out};
}

void CheckWellFormed(const std::string& svg) {
  const Xmllint result = RunXmllint(svg);
  INFO("xmllint said: " << result.output);
  INFO("(xmllint comes with Debian's libxml2-utils; exit code 127 means it is missing)");
  CHECK(result.exit_code == 0);
}

// The value of an XPath expression (here, a count) over `svg`, as parsed by xmllint.
std::string XPath(const std::string& svg, const std::string& expression) {
  const Xmllint result = RunXmllint(svg, "--xpath \"" + expression + "\"");
  INFO("xmllint said: " << result.output);
  CHECK(result.exit_code == 0);
  std::string value = result.output;
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
    value.pop_back();
  return value;
}

// What a parser makes of `svg`: one <svg> element, no <script> element, no on* attribute.
void CheckParsedHarmless(const std::string& svg) {
  CHECK(XPath(svg, "count(//*[local-name()='svg'])") == "1");
  CHECK(XPath(svg, "count(//*[local-name()='script'])") == "0");
  CHECK(XPath(svg, "count(//@*[starts-with(local-name(),'on')])") == "0");
}

Chart FullChart() {
  Chart chart{.title = "Latency", .x_label = "ms", .y_label = "share"};
  chart.series.push_back(CdfSeries("model a", std::vector<double>{120, 80, 300, 95, 210}));
  chart.series.push_back(
      {.name = "model b", .points = {{50, 0.1}, {150, 0.6}, {400, 1}}, .dots = true});
  chart.lines.push_back({.horizontal = false, .value = 250, .label = "SLO"});
  chart.lines.push_back({.horizontal = true, .value = 0.95, .label = "p95"});
  chart.bands.push_back({.from = 100, .to = 200, .label = "burst"});
  chart.markers.push_back({.at = {150, 0.6}, .label = "knee"});
  return chart;
}

BarChart ScoreBars() {
  BarChart chart{.title = "Scores", .x_label = "score", .y_label = "answers"};
  chart.series_names = {"correct", "grounded"};
  for (int level = 1; level <= 5; ++level) {
    chart.groups.push_back(
        {.label = std::to_string(level), .values = {double(level * 3), double(12 - level)}});
  }
  return chart;
}

TEST_CASE("EscapeHtml escapes the five special characters and nothing else", "[svg]") {
  CHECK(EscapeHtml("a & b < c > d \" e ' f") == "a &amp; b &lt; c &gt; d &quot; e &#39; f");
  CHECK(EscapeHtml("&amp;") == "&amp;amp;");
  CHECK(EscapeHtml("") == "");
  CHECK(EscapeHtml("plain text, 1-2-5") == "plain text, 1-2-5");
  CHECK(EscapeHtml("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");  // é € 😀 stay as they are
  CHECK(EscapeHtml("tab\tline\ncr\r") == "tab\tline\ncr\r");
}

TEST_CASE("EscapeHtml replaces bytes that are not UTF-8, and what XML forbids, by U+FFFD",
          "[svg]") {
  const std::string kReplacement = "\xEF\xBF\xBD";
  CHECK(EscapeHtml("a\xFF"
                   "b") == "a" + kReplacement + "b");
  CHECK(EscapeHtml("\xC0\xAF") == kReplacement + kReplacement);                     // overlong '/'
  CHECK(EscapeHtml("\xED\xA0\x80") == kReplacement + kReplacement + kReplacement);  // surrogate
  CHECK(EscapeHtml("cut \xE2\x82") == "cut " + kReplacement + kReplacement);        // truncated €
  CHECK(EscapeHtml("\xE2\x82<") == kReplacement + kReplacement + "&lt;");
  CHECK(EscapeHtml(std::string("nul\0bell\x07", 9)) ==
        "nul" + kReplacement + "bell" + kReplacement);
  CHECK(EscapeHtml("\xEF\xBF\xBE") == kReplacement);  // U+FFFE
}

TEST_CASE("Hostile text in every field of a line chart is escaped", "[svg]") {
  const auto hostile = [](const std::string& field) {
    return "<script>alert('" + field + "')</script>\" onload=\"alert(1)</svg><script>& \xFF";
  };
  const auto escaped = [](const std::string& field) {
    return "&lt;script&gt;alert(&#39;" + field +
           "&#39;)&lt;/script&gt;&quot; onload=&quot;alert(1)&lt;/svg&gt;&lt;script&gt;&amp; "
           "\xEF\xBF\xBD";
  };
  Chart chart{.title = hostile("title"),
              .description = hostile("description"),
              .x_label = hostile("x"),
              .y_label = hostile("y")};
  chart.series.push_back({.name = hostile("series1"), .points = {{1, 1}, {2, 3}}});
  chart.series.push_back({.name = hostile("series2"), .points = {{1, 2}, {2, 1}}});
  chart.lines.push_back({.horizontal = true, .value = 2, .label = hostile("hline")});
  chart.lines.push_back({.horizontal = false, .value = 1.5, .label = hostile("vline")});
  chart.bands.push_back({.from = 1, .to = 2, .label = hostile("band")});
  chart.markers.push_back({.at = {1.2, 2}, .label = hostile("marker")});
  chart.width = 2400;  // room for every label in full
  chart.height = 1000;

  const std::string svg = LineChartSvg(chart);
  CHECK(Count(svg, "<svg") == 1);
  CHECK(Count(svg, "</svg>") == 1);
  CHECK(Lower(svg).find("<script") == std::string::npos);
  // The escaped text holds " onload=&quot;", harmless; a real attribute would need a real quote.
  CHECK(svg.find("onload=\"") == std::string::npos);
  CHECK(svg.find('\xFF') == std::string::npos);
  CHECK(svg.find("'") == std::string::npos);  // the output itself quotes with " only
  for (const std::string field : {"title", "description", "x", "y", "series1", "series2", "hline",
                                  "vline", "band", "marker"}) {
    INFO(field);
    CHECK(svg.find(escaped(field)) != std::string::npos);
  }
  CheckWellFormed(svg);
  CheckParsedHarmless(svg);
}

TEST_CASE("Hostile text in every field of a bar chart is escaped", "[svg]") {
  const auto hostile = [](const std::string& field) {
    return "</svg><script>alert(\"" + field + "\")</script>' onerror='x' &\xC3";
  };
  const auto escaped = [](const std::string& field) {
    return "&lt;/svg&gt;&lt;script&gt;alert(&quot;" + field +
           "&quot;)&lt;/script&gt;&#39; onerror=&#39;x&#39; &amp;\xEF\xBF\xBD";
  };
  BarChart chart{.title = hostile("title"),
                 .description = hostile("description"),
                 .x_label = hostile("x"),
                 .y_label = hostile("y"),
                 .series_names = {hostile("name1"), hostile("name2")},
                 .groups = {{.label = hostile("group"), .values = {1, 2}}},
                 .width = 2400,
                 .height = 1000};  // room for every label in full

  const std::string svg = BarChartSvg(chart);
  CHECK(Count(svg, "<svg") == 1);
  CHECK(Count(svg, "</svg>") == 1);
  CHECK(Lower(svg).find("<script") == std::string::npos);
  CHECK(svg.find("onerror='") == std::string::npos);
  CHECK(svg.find('\xC3') == std::string::npos);  // the lone lead byte; U+FFFD is EF BF BD
  for (const std::string field : {"title", "description", "x", "y", "name1", "name2", "group"}) {
    INFO(field);
    CHECK(svg.find(escaped(field)) != std::string::npos);
  }
  CheckWellFormed(svg);
  CheckParsedHarmless(svg);
}

TEST_CASE("xmllint tells well-formed XML from broken XML, and finds scripts", "[svg]") {
  // The check the other tests rely on must be able to fail.
  CHECK(RunXmllint("<svg xmlns=\"http://www.w3.org/2000/svg\"><g></g></svg>").exit_code == 0);
  CHECK(RunXmllint("<svg xmlns=\"http://www.w3.org/2000/svg\"><g></svg>").exit_code == 1);
  CHECK(RunXmllint("<svg xmlns=\"http://www.w3.org/2000/svg\">a & b</svg>").exit_code == 1);
  const std::string injected =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"x\"><svg><script/></svg></svg>";
  CHECK(XPath(injected, "count(//*[local-name()='svg'])") == "2");
  CHECK(XPath(injected, "count(//*[local-name()='script'])") == "1");
  CHECK(XPath(injected, "count(//@*[starts-with(local-name(),'on')])") == "1");
}

TEST_CASE("Every kind of chart is well-formed XML", "[svg]") {
  Chart log = FullChart();
  log.log_x = true;
  log.log_y = true;
  Chart empty{.title = "Nothing"};
  Chart fixed = FullChart();
  fixed.x_min = 100;
  fixed.x_max = 200;
  fixed.y_max = 0.5;
  for (const Chart& chart : {FullChart(), log, empty, fixed}) {
    INFO(chart.title);
    CheckWellFormed(LineChartSvg(chart));
  }
  CheckWellFormed(BarChartSvg(ScoreBars()));
  CheckWellFormed(BarChartSvg({.title = "No bars"}));
}

TEST_CASE("The SVG is standalone, labelled for screen readers, with no outside references",
          "[svg]") {
  for (const std::string& svg : {LineChartSvg(FullChart()), BarChartSvg(ScoreBars())}) {
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" ", 0) == 0);
    const std::string root = Tags(svg, "svg").at(0);
    CHECK(Attr(root, "role") == "img");
    CHECK(Attr(root, "viewBox") == "0 0 " + Attr(root, "width") + " " + Attr(root, "height"));
    CHECK(Attr(root, "font-family") == "system-ui, sans-serif");
    // aria-labelledby names the <title> and the <desc> of this very chart.
    const std::string labelledby = Attr(root, "aria-labelledby");
    const size_t space = labelledby.find(' ');
    REQUIRE(space != std::string::npos);
    CHECK(svg.find("<title id=\"" + labelledby.substr(0, space) + "\">") != std::string::npos);
    CHECK(svg.find("<desc id=\"" + labelledby.substr(space + 1) + "\">") != std::string::npos);
    const std::string lower = Lower(svg);
    CHECK(lower.find("href") == std::string::npos);
    CHECK(lower.find("<script") == std::string::npos);
    CHECK(lower.find("foreignobject") == std::string::npos);
    CHECK(lower.find("<style") == std::string::npos);
    CHECK(lower.find("@import") == std::string::npos);
    CHECK(Count(lower, "http") == 1);  // the namespace only
    // The only url() is a pattern fill, defined in the same SVG.
    static const std::regex kUrl("url\\(([^)]*)\\)");
    for (std::sregex_iterator it(svg.begin(), svg.end(), kUrl), end; it != end; ++it) {
      const std::string target = (*it)[1];
      REQUIRE(target.size() > 1);
      CHECK(target[0] == '#');
      CHECK(svg.find("<pattern id=\"" + target.substr(1) + "\"") != std::string::npos);
    }
  }
  CHECK(Count(BarChartSvg(ScoreBars()), "url(#") == 5 + 1);  // grounded: five bars and its swatch
}

TEST_CASE("Output is deterministic, and ids differ between different charts", "[svg]") {
  CHECK(LineChartSvg(FullChart()) == LineChartSvg(FullChart()));
  CHECK(BarChartSvg(ScoreBars()) == BarChartSvg(ScoreBars()));

  Chart same_title = FullChart();
  same_title.series[1].points.back().y = 0.9;
  BarChart other_bars = ScoreBars();
  other_bars.groups[0].values[0] = 7;
  std::set<std::string> ids;
  size_t id_count = 0;
  for (const std::string& svg : {LineChartSvg(FullChart()), LineChartSvg(same_title),
                                 BarChartSvg(ScoreBars()), BarChartSvg(other_bars)}) {
    static const std::regex kId(" id=\"([^\"]*)\"");
    for (std::sregex_iterator it(svg.begin(), svg.end(), kId), end; it != end; ++it) {
      ids.insert((*it)[1]);
      ++id_count;
    }
  }
  CHECK(id_count == 2 + 2 + (2 + 1) + (2 + 1));  // title and desc; plus one pattern per bar chart
  CHECK(ids.size() == id_count);
}

TEST_CASE("Linear ticks step by 1, 2 or 5 times a power of ten, at most 8 intervals", "[svg]") {
  Chart chart;
  chart.series.push_back({.name = "load", .points = {{0.3, 0}, {4.7, 1370}}});
  // 1370 / 8 = 171: 200 is the smallest 1-2-5 step; the axis is extended to the next tick.
  CHECK(TextsOfGroup(LineChartSvg(chart), "y-ticks") ==
        Strings{"0", "200", "400", "600", "800", "1000", "1200", "1400"});
  // x starts from the data, not from 0: 0.3..4.7 needs 0.5 (0..5, 10 intervals) or 1 (5 intervals).
  CHECK(TextsOfGroup(LineChartSvg(chart), "x-ticks") == Strings{"0", "1", "2", "3", "4", "5"});

  SECTION("a short chart has room for fewer intervals: one per 30 pixels") {
    chart.height = 160;  // a 90-pixel plot: 3 intervals, so 500
    CHECK(TextsOfGroup(LineChartSvg(chart), "y-ticks") == Strings{"0", "500", "1000", "1500"});
  }
  SECTION("a tall chart still has at most 8 intervals") {
    chart.height = 800;
    chart.series[0].points = {{0, 3}, {1, 90}};  // steps of 10 would need 9 intervals
    CHECK(TextsOfGroup(LineChartSvg(chart), "y-ticks") ==
          Strings{"0", "20", "40", "60", "80", "100"});
  }
  SECTION("fractions get the decimals their step needs, negative values their sign") {
    chart.series[0].points = {{0, -0.35}, {1, 0.82}};
    CHECK(TextsOfGroup(LineChartSvg(chart), "y-ticks") ==
          Strings{"-0.4", "-0.2", "0", "0.2", "0.4", "0.6", "0.8", "1"});
  }
  SECTION("a given range is kept as given, with the ticks inside it") {
    chart.y_min = 100;
    chart.y_max = 1250;
    CHECK(TextsOfGroup(LineChartSvg(chart), "y-ticks") ==
          Strings{"200", "400", "600", "800", "1000", "1200"});
  }
  SECTION("one value gets a range around it") {
    chart.series[0].points = {{2, 5}};
    CHECK(TextsOfGroup(LineChartSvg(chart), "y-ticks") == Strings{"0", "1", "2", "3", "4", "5"});
    // x: 1..3 around the 2, in steps of 0.5 (0.2 would need 10 intervals).
    CHECK(TextsOfGroup(LineChartSvg(chart), "x-ticks") == Strings{"1", "1.5", "2", "2.5", "3"});
  }
}

TEST_CASE("Log ticks are decades, with 2 and 5 between them where there is room", "[svg]") {
  Chart chart{.log_x = true};
  chart.series.push_back({.name = "p99", .points = {{1, 3}, {30, 4}, {1000, 5}}});
  CHECK(TextsOfGroup(LineChartSvg(chart), "x-ticks") ==
        Strings{"1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"});

  SECTION("a narrow chart shows the decades only") {
    chart.width = 300;  // 3 decades over 236 pixels: 79 a decade, under the 100 needed
    CHECK(TextsOfGroup(LineChartSvg(chart), "x-ticks") == Strings{"1", "10", "100", "1000"});
  }
  SECTION("the range is extended to whole decades, small ones written out") {
    chart.width = 400;  // 4 decades over 336 pixels: room for 4 intervals, not for 2s and 5s
    chart.series[0].points = {{0.004, 1}, {7, 2}};
    CHECK(TextsOfGroup(LineChartSvg(chart), "x-ticks") ==
          Strings{"0.001", "0.01", "0.1", "1", "10"});
  }
  SECTION("many decades are labelled every few decades, in e-notation when large") {
    // 16 decades, at most 8 intervals: every second decade.
    chart.series[0].points = {{1, 1}, {1e16, 2}};
    CHECK(TextsOfGroup(LineChartSvg(chart), "x-ticks") == Strings{"1", "100", "10000", "1000000",
                                                                  "100000000", "10000000000",
                                                                  "1e12", "1e14", "1e16"});
  }
}

TEST_CASE("CdfSeries steps through the sorted values from 1/n to 1", "[svg]") {
  const std::vector<double> values = {3, 1, 2, kNaN, 2, kInf};
  const Series cdf = CdfSeries("ttft", values);
  CHECK(cdf.name == "ttft");
  CHECK(cdf.step);
  CHECK_FALSE(cdf.dots);
  REQUIRE(cdf.points.size() == 4);  // the non-finite values are left out
  const std::vector<std::pair<double, double>> expected = {{1, 0.25}, {2, 0.5}, {2, 0.75}, {3, 1}};
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(i);
    CHECK(cdf.points[i].x == expected[i].first);
    CHECK(cdf.points[i].y == expected[i].second);
  }
}

TEST_CASE("CdfSeries keeps at most max_points, evenly spaced in rank", "[svg]") {
  std::vector<double> values(1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  std::shuffle(values.begin(), values.end(), std::mt19937(7));

  const Series cdf = CdfSeries("x", values, 10);
  REQUIRE(cdf.points.size() == 10);
  for (size_t j = 0; j < 10; ++j) {
    const size_t rank = j * 999 / 9;  // 0, 111, ..., 999: the first and the last always
    INFO(j);
    CHECK(cdf.points[j].x == static_cast<double>(rank));
    CHECK(cdf.points[j].y == static_cast<double>(rank + 1) / 1000);
  }
  CHECK(CdfSeries("x", values).points.size() == 400);
  CHECK(CdfSeries("x", std::span(values).first(400)).points.size() == 400);
  CHECK(CdfSeries("x", std::span(values).first(399)).points.size() == 399);
  // Fewer than 2 would lose the first or the last.
  const Series two = CdfSeries("x", values, 0);
  REQUIRE(two.points.size() == 2);
  CHECK(two.points[0].y == 0.001);
  CHECK(two.points[1].y == 1);
}

TEST_CASE("CdfSeries of nothing has no points", "[svg]") {
  CHECK(CdfSeries("none", std::vector<double>{}).points.empty());
  CHECK(CdfSeries("none", std::vector<double>{kNaN, -kInf}).points.empty());
}

TEST_CASE("Points map linearly into the plot area", "[svg]") {
  Chart chart{.x_min = 0, .x_max = 10, .y_min = 0, .y_max = 200};
  chart.series.push_back({.name = "s", .points = {{0, 0}, {10, 200}, {2.5, 50}}, .dots = true});
  chart.lines.push_back({.horizontal = true, .value = 150, .label = "limit"});
  chart.lines.push_back({.horizontal = false, .value = 4, .label = "start"});
  chart.bands.push_back({.from = 6, .to = 8, .label = "burst"});
  chart.markers.push_back({.at = {2.5, 50}, .label = "knee"});
  const std::string svg = LineChartSvg(chart);
  const Rect plot = PlotArea(svg);
  REQUIRE(plot.right - plot.left > 100);
  REQUIRE(plot.bottom - plot.top > 100);
  const auto px = [&](double x) { return plot.left + x / 10 * (plot.right - plot.left); };
  const auto py = [&](double y) { return plot.bottom - y / 200 * (plot.bottom - plot.top); };

  const Strings dots = Tags(svg, "circle");
  REQUIRE(dots.size() == 3 + 1);  // three dots and the marker's ring
  CHECK(NumAttr(dots[0], "cx") == Approx(plot.left).margin(0.01));
  CHECK(NumAttr(dots[0], "cy") == Approx(plot.bottom).margin(0.01));
  CHECK(NumAttr(dots[1], "cx") == Approx(plot.right).margin(0.01));  // (x_max, y_max): the corner
  CHECK(NumAttr(dots[1], "cy") == Approx(plot.top).margin(0.01));
  CHECK(NumAttr(dots[2], "cx") == Approx(px(2.5)).margin(0.01));
  CHECK(NumAttr(dots[2], "cy") == Approx(py(50)).margin(0.01));

  const Strings lines = Tags(svg, "line");
  const auto ref_lines = [&] {
    Strings found;
    for (const std::string& line : lines) {
      if (Attr(line, "stroke-dasharray") == "6 4") found.push_back(line);
    }
    return found;
  }();
  REQUIRE(ref_lines.size() == 2);
  CHECK(NumAttr(ref_lines[0], "y1") == Approx(py(150)).margin(0.01));
  CHECK(NumAttr(ref_lines[0], "y2") == Approx(py(150)).margin(0.01));
  CHECK(NumAttr(ref_lines[1], "x1") == Approx(px(4)).margin(0.01));

  const size_t band_at = svg.find("<g class=\"band\">");
  REQUIRE(band_at != std::string::npos);
  const std::string band = Tags(svg.substr(band_at), "rect").at(0);
  CHECK(NumAttr(band, "x") == Approx(px(6)).margin(0.01));
  CHECK(NumAttr(band, "width") == Approx(px(8) - px(6)).margin(0.01));
  CHECK(NumAttr(dots[3], "cx") == Approx(px(2.5)).margin(0.01));
  CHECK(NumAttr(dots[3], "r") == 6);
  CHECK(TextsOfGroup(svg, "band") == Strings{"burst"});
  CHECK(TextsOfGroup(svg, "marker") == Strings{"knee"});
  CHECK(TextsOfGroup(svg, "ref-line") == Strings{"limit"});
}

TEST_CASE("The largest point of a chart with automatic ranges lands inside the plot", "[svg]") {
  Chart chart;
  chart.series.push_back({.name = "s", .points = {{3, 12}, {7.3, 1370}}, .dots = true});
  const std::string svg = LineChartSvg(chart);
  const Rect plot = PlotArea(svg);
  const Strings dots = Tags(svg, "circle");
  REQUIRE(dots.size() == 2);
  const double x = NumAttr(dots[1], "cx"), y = NumAttr(dots[1], "cy");
  CHECK(x > plot.left);
  CHECK(x <= plot.right);
  CHECK(y >= plot.top);
  CHECK(y < plot.bottom);
  // The y axis runs 0..1400 (see the tick test), so 1370 sits just below the top.
  CHECK(y == Approx(plot.bottom - 1370.0 / 1400 * (plot.bottom - plot.top)).margin(0.01));
}

TEST_CASE("Lines leaving a given range are clipped to the plot area", "[svg]") {
  Chart chart{.y_min = 0, .y_max = 100};
  chart.series.push_back(
      {.name = "spiky", .points = {{0, 10}, {1, 5000}, {2, 20}, {3, -1e300}, {4, 50}}});
  chart.series.push_back({.name = "stepped", .points = {{0, 1e308}, {4, 30}}, .step = true});
  const std::string svg = LineChartSvg(chart);
  const Rect plot = PlotArea(svg);
  const Strings paths = Tags(svg, "path");
  REQUIRE(paths.size() == 2);
  size_t coordinates = 0;
  for (const std::string& path : paths) {
    const std::string d = Attr(path, "d");
    static const std::regex kPair("[ML](-?[0-9.]+) (-?[0-9.]+)");
    for (std::sregex_iterator it(d.begin(), d.end(), kPair), end; it != end; ++it) {
      const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
      INFO(d);
      CHECK(x >= plot.left - 0.01);
      CHECK(x <= plot.right + 0.01);
      CHECK(y >= plot.top - 0.01);
      CHECK(y <= plot.bottom + 0.01);
      ++coordinates;
    }
  }
  // Three pieces of two, three and two points, and one of two: the step's horizontal run at y =
  // 1e308 is gone, its rise kept.
  CHECK(coordinates == 9);
  // The spike leaves at the top and comes back: the line is broken into pieces there.
  CHECK(Count(Attr(paths[0], "d"), "M") == 3);
}

TEST_CASE("Dots outside a given range are left out", "[svg]") {
  Chart chart{.x_min = 0, .x_max = 10, .y_min = 0, .y_max = 100};
  chart.series.push_back(
      {.name = "s", .points = {{-1, 50}, {5, 50}, {5, 101}, {11, 50}, {10, 100}}, .dots = true});
  const std::string svg = LineChartSvg(chart);
  const Rect plot = PlotArea(svg);
  const Strings dots = Tags(svg, "circle");
  REQUIRE(dots.size() == 2);
  CHECK(NumAttr(dots[0], "cx") == Approx((plot.left + plot.right) / 2).margin(0.01));
  CHECK(NumAttr(dots[1], "cy") == Approx(plot.top).margin(0.01));
}

TEST_CASE("Ref lines, bands and markers widen an automatic range", "[svg]") {
  Chart chart;
  chart.series.push_back({.name = "s", .points = {{1, 10}, {2, 50}}});
  chart.lines.push_back({.horizontal = true, .value = 780, .label = "limit"});
  chart.bands.push_back({.from = 2.5, .to = 4.2, .label = "burst"});
  chart.markers.push_back({.at = {-0.5, 30}, .label = "start"});
  const std::string svg = LineChartSvg(chart);
  CHECK(TextsOfGroup(svg, "y-ticks") ==
        Strings{"0", "100", "200", "300", "400", "500", "600", "700", "800"});
  CHECK(TextsOfGroup(svg, "x-ticks") == Strings{"-1", "0", "1", "2", "3", "4", "5"});
  CHECK(TextsOfGroup(svg, "ref-line") == Strings{"limit"});
  CHECK(TextsOfGroup(svg, "band") == Strings{"burst"});
  CHECK(TextsOfGroup(svg, "marker") == Strings{"start"});
  CHECK(svg.find("outside the chart") == std::string::npos);
}

TEST_CASE("Non-finite values are left out, and the description says so", "[svg]") {
  Chart chart{.x_min = kNaN, .y_max = kInf};
  chart.series.push_back(
      {.name = "s", .points = {{0, 1}, {kNaN, 2}, {2, kInf}, {3, -kInf}, {4, 5}}, .dots = true});
  chart.lines.push_back({.horizontal = true, .value = kNaN, .label = "nan line"});
  chart.bands.push_back({.from = kNaN, .to = 3, .label = "nan band"});
  chart.markers.push_back({.at = {kInf, 1}, .label = "inf marker"});
  const std::string svg = LineChartSvg(chart);
  const std::string lower = Lower(svg);
  CHECK(lower.find("nan\"") == std::string::npos);
  CHECK(lower.find("inf\"") == std::string::npos);
  static const std::regex kBadNumber("[\" ML-](nan|inf)");
  CHECK_FALSE(std::regex_search(lower, kBadNumber));
  CHECK(Tags(svg, "circle").size() == 2);
  CHECK(svg.find("Left out as not finite: 3 points.") != std::string::npos);
  CHECK(svg.find("Left out as outside the chart: 3 reference lines, bands or markers.") !=
        std::string::npos);
  CHECK(svg.find("nan line") == std::string::npos);
  CHECK(TextsOfGroup(svg, "y-ticks") == Strings{"0", "1", "2", "3", "4", "5"});
  CheckWellFormed(svg);
}

TEST_CASE("A log axis leaves out values <= 0 and says how many", "[svg]") {
  Chart chart{.log_x = true, .log_y = true};
  chart.series.push_back(
      {.name = "s", .points = {{0, 1}, {-5, 2}, {10, 0}, {100, 10}, {1000, 100}}});
  const std::string svg = LineChartSvg(chart);
  CHECK(svg.find("Left out of the logarithmic x axis (x &lt;= 0): 2 points.") != std::string::npos);
  CHECK(svg.find("Left out of the logarithmic y axis (y &lt;= 0): 1 point.") != std::string::npos);
  CHECK(TextsOfGroup(svg, "x-ticks") == Strings{"100", "200", "500", "1000"});
  CHECK(svg.find("no data") == std::string::npos);
}

TEST_CASE("A chart with no plottable point says no data", "[svg]") {
  Chart nothing{.title = "Empty", .x_label = "time", .y_label = "rate"};
  Chart all_bad = nothing;
  all_bad.series.push_back({.name = "s", .points = {{kNaN, 1}, {1, kInf}}});
  all_bad.lines.push_back({.value = 3, .label = "limit"});
  Chart all_negative = nothing;
  all_negative.log_y = true;
  all_negative.series.push_back({.name = "s", .points = {{1, -1}, {2, 0}}});
  for (const Chart& chart : {nothing, all_bad, all_negative}) {
    const std::string svg = LineChartSvg(chart);
    CHECK(TagsOfClass(svg, "text", "no-data").size() == 1);
    CHECK(svg.find(">no data</text>") != std::string::npos);
    CHECK(svg.find("No data to plot.</desc>") != std::string::npos);
    CHECK(Tags(svg, "path").empty());
    CHECK(svg.find("y-ticks") == std::string::npos);
    CHECK(svg.find(">time</text>") != std::string::npos);  // the axis labels still say what it is
    CheckWellFormed(svg);
  }
  const std::string bars =
      BarChartSvg({.title = "No bars", .groups = {{.label = "1", .values = {kNaN}}}});
  CHECK(bars.find(">no data</text>") != std::string::npos);
  CHECK(bars.find("Left out as not finite: 1 value. No data to plot.</desc>") != std::string::npos);
}

TEST_CASE("Series differ in colour and dash; a legend appears from two series on", "[svg]") {
  Chart chart;
  chart.series.push_back({.name = "only", .points = {{0, 1}, {1, 2}}});
  CHECK(LineChartSvg(chart).find("class=\"legend\"") == std::string::npos);
  for (int i = 1; i < 6; ++i)
    chart.series.push_back({.name = "s" + std::to_string(i), .points = {{0, 1.0 * i}, {1, 2}}});
  const std::string svg = LineChartSvg(chart);
  CHECK(TextsOfGroup(svg, "legend") == Strings{"only", "s1", "s2", "s3", "s4", "s5"});
  const Strings series = TagsOfClass(svg, "g", "series");
  REQUIRE(series.size() == 6);
  std::set<std::string> colours, dashes;
  for (const std::string& tag : series) {
    colours.insert(Attr(tag, "stroke"));
    dashes.insert(Attr(tag, "stroke-dasharray"));  // "" for the solid first
  }
  CHECK(colours.size() == 6);
  CHECK(dashes.size() == 6);
  CHECK(Attr(series[0], "stroke") == "#0072B2");  // Okabe-Ito blue
}

TEST_CASE("A legend of many rows makes the chart taller, not the plot shorter", "[svg]") {
  Chart chart{.width = 240, .height = 200};
  Strings names;
  for (int i = 0; i < 40; ++i) {
    names.push_back("series " + std::to_string(i));
    chart.series.push_back({.name = names.back(), .points = {{0, 1.0 * i}, {1, 2}}});
  }
  const std::string svg = LineChartSvg(chart);
  CHECK(TextsOfGroup(svg, "legend") == names);
  const Rect plot = PlotArea(svg);
  CHECK(plot.bottom - plot.top == Approx(100));
  const std::string root = Tags(svg, "svg").at(0);
  CHECK(NumAttr(root, "width") == 240);
  CHECK(NumAttr(root, "height") == Approx(plot.bottom + 30));
  CHECK(NumAttr(root, "height") > 600);  // two names a row, 18 pixels a row
}

TEST_CASE("Bars rise from zero in proportion to their values", "[svg]") {
  // Level 1: 3 and 11 ... level 5: 15 and 7. The plot is 208 pixels high: 6 intervals at most,
  // so steps of 5 (2 would need 8).
  const BarChart chart = ScoreBars();
  const std::string svg = BarChartSvg(chart);
  const Rect plot = PlotArea(svg);
  CHECK(TextsOfGroup(svg, "y-ticks") == Strings{"0", "5", "10", "15"});
  CHECK(TextsOfGroup(svg, "legend") == Strings{"correct", "grounded"});
  Strings bars;
  for (const std::string& rect : Tags(svg, "rect")) {
    // Bars have a thin outline, as do the legend's 14-pixel swatches.
    if (Attr(rect, "stroke-width") == "0.5" && Attr(rect, "width") != "14") bars.push_back(rect);
  }
  REQUIRE(bars.size() == 10);
  const double per_unit = (plot.bottom - plot.top) / 15;
  for (size_t i = 0; i < bars.size(); ++i) {
    const BarGroup& group = chart.groups[i / 2];
    INFO(i);
    CHECK(NumAttr(bars[i], "height") == Approx(group.values[i % 2] * per_unit).margin(0.01));
    CHECK(NumAttr(bars[i], "y") + NumAttr(bars[i], "height") == Approx(plot.bottom).margin(0.01));
    CHECK(NumAttr(bars[i], "x") >= plot.left);
    CHECK(NumAttr(bars[i], "x") + NumAttr(bars[i], "width") <= plot.right);
  }
  // Left to right: a group's bars side by side, groups in order.
  for (size_t i = 1; i < bars.size(); ++i)
    CHECK(NumAttr(bars[i], "x") > NumAttr(bars[i - 1], "x"));
  CHECK(svg.find("<title>grounded, 3: 9</title>") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::report
