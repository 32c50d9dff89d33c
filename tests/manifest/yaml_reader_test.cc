#include "manifest/yaml_reader.h"

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "manifest/diagnostics.h"

namespace stagegate::manifest {
namespace {

// Parses `text`, which must be valid YAML.
YAML::Node ParseOk(const YamlFile& file, const std::string& text) {
  std::optional<YAML::Node> node = file.Parse(text);
  REQUIRE(node.has_value());
  return *node;
}

enum class Mode { kOpenLoop, kClosedLoop };
constexpr EnumName<Mode> kModes[] = {
    {Mode::kOpenLoop, "open_loop"},
    {Mode::kClosedLoop, "closed_loop"},
};

TEST_CASE("MapReader reports unknown keys, with a suggestion when one is close", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "temperature: 0.5\ntemprature: 0.7\ncolour: red\n");

  MapReader reader(file, root, "model");
  CHECK(reader.valid());
  CHECK(reader.Number("temperature") == 0.5);
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:2:1: unknown key 'temprature' (did you mean 'temperature'?)\n"
        "t.yaml:3:1: unknown key 'colour'\n");
}

TEST_CASE("MapReader counts a key as known once any accessor asked for it", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "a: 1\nb: 2\nc: x\n");

  MapReader reader(file, root, "thing");
  CHECK(reader.Has("a"));
  CHECK(reader.Get("b").Scalar() == "2");
  CHECK_FALSE(reader.Has("absent"));
  CHECK(reader.String("c") == "x");
  reader.Finish();

  CHECK(diagnostics.empty());
}

TEST_CASE("MapReader reports a duplicate key and reads the first value", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "a: 1\nb: 2\na: 3\n");

  MapReader reader(file, root, "thing");
  CHECK(reader.Integer("a") == 1);
  CHECK(reader.Integer("b") == 2);
  reader.Finish();

  CHECK(diagnostics.ToString() == "t.yaml:3:1: duplicate key 'a' (first at line 1)\n");
}

TEST_CASE("MapReader reports a missing required key at the mapping", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  const YAML::Node root = ParseOk(file, "target:\n  name: x\n");

  MapReader reader(file, root["target"], "target");
  CHECK_FALSE(reader.String("url", Need::kRequired).has_value());
  CHECK_FALSE(reader.String("timeout").has_value());  // optional: absent is fine
  CHECK(reader.String("name", Need::kRequired) == "x");
  reader.Finish();

  CHECK(diagnostics.ToString() == "t.yaml:2:3: target: missing required key 'url'\n");
}

TEST_CASE("MapReader treats a null value as absent", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "x:\ny: ~\nz: null\n");

  MapReader reader(file, root, "thing");
  CHECK_FALSE(reader.String("x", Need::kRequired).has_value());
  CHECK_FALSE(reader.Number("y").has_value());
  CHECK_FALSE(reader.Has("y"));
  CHECK_FALSE(reader.Bool("z", Need::kRequired).has_value());
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:1:1: 'x' needs a value\n"
        "t.yaml:3:1: 'z' needs a value\n");
}

TEST_CASE("MapReader::String reads any scalar and rejects lists and mappings", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "a: 'x: y'\nb: 42\nc: {k: v}\nd: [1]\n");

  MapReader reader(file, root, "thing");
  CHECK(reader.String("a") == "x: y");
  CHECK(reader.String("b") == "42");
  CHECK_FALSE(reader.String("c").has_value());
  CHECK_FALSE(reader.String("d").has_value());
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:3:4: 'c' must be a string, got a mapping\n"
        "t.yaml:4:4: 'd' must be a string, got a list\n");
}

TEST_CASE("MapReader::Number reads plain numbers and rejects everything else", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root =
      ParseOk(file, "limit: '5'\nrate: fast\nsizes: [1]\nratio: 12.5\nneg: -3e2\nwhole: 7\n");

  MapReader reader(file, root, "thing");
  CHECK_FALSE(reader.Number("limit").has_value());
  CHECK_FALSE(reader.Number("rate").has_value());
  CHECK_FALSE(reader.Number("sizes").has_value());
  CHECK(reader.Number("ratio") == 12.5);
  CHECK(reader.Number("neg") == -300.0);
  CHECK(reader.Number("whole") == 7.0);
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:1:8: 'limit' must be a number, got the quoted string \"5\"\n"
        "t.yaml:2:7: 'rate' must be a number, got 'fast'\n"
        "t.yaml:3:8: 'sizes' must be a number, got a list\n");
}

TEST_CASE("Number ranges accept their bounds and say what is allowed", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file,
                            "rate: -3\n"
                            "zero: 0\n"
                            "level: 100\n"
                            "one: 1\n"
                            "top: 99\n"
                            "p: 1.5\n"
                            "p0: 0\n"
                            "p1: 1\n"
                            "wait: -0.5\n"
                            "none: 0\n"
                            "cap: 11\n"
                            "fine: 2.1234567\n"
                            "small: 0.001\n");

  MapReader reader(file, root, "thing");
  CHECK_FALSE(reader.Number("rate", Need::kOptional, kPositive).has_value());
  CHECK_FALSE(reader.Number("zero", Need::kOptional, kPositive).has_value());
  CHECK(reader.Number("small", Need::kOptional, kPositive) == 0.001);
  CHECK_FALSE(reader.Number("level", Need::kOptional, Range{.min = 1, .max = 99}).has_value());
  CHECK(reader.Number("one", Need::kOptional, Range{.min = 1, .max = 99}) == 1.0);
  CHECK(reader.Number("top", Need::kOptional, Range{.min = 1, .max = 99}) == 99.0);
  CHECK_FALSE(reader.Number("p", Need::kOptional, kProbability).has_value());
  CHECK(reader.Number("p0", Need::kOptional, kProbability) == 0.0);
  CHECK(reader.Number("p1", Need::kOptional, kProbability) == 1.0);
  CHECK_FALSE(reader.Number("wait", Need::kOptional, kNonNegative).has_value());
  CHECK(reader.Number("none", Need::kOptional, kNonNegative) == 0.0);
  CHECK_FALSE(reader.Number("cap", Need::kOptional, Range{.max = 10}).has_value());
  CHECK_FALSE(reader.Number("fine", Need::kOptional, Range{.max = 2}).has_value());
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:1:7: 'rate' must be greater than 0, got -3\n"
        "t.yaml:2:7: 'zero' must be greater than 0, got 0\n"
        "t.yaml:3:8: 'level' must be between 1 and 99, got 100\n"
        "t.yaml:6:4: 'p' must be between 0 and 1, got 1.5\n"
        "t.yaml:9:7: 'wait' must be at least 0, got -0.5\n"
        "t.yaml:11:6: 'cap' must be at most 10, got 11\n"
        "t.yaml:12:7: 'fine' must be at most 2, got 2.123457\n");
}

TEST_CASE("MapReader::Integer reads whole numbers only", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "count: 2.5\nworkers: 7\nquoted: '7'\nfloor: 0\nnegative: -12\n");

  MapReader reader(file, root, "thing");
  CHECK_FALSE(reader.Integer("count").has_value());
  CHECK(reader.Integer("workers") == 7);
  CHECK_FALSE(reader.Integer("quoted").has_value());
  CHECK_FALSE(reader.Integer("floor", Need::kOptional, Range{.min = 1}).has_value());
  CHECK(reader.Integer("negative") == -12);
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:1:8: 'count' must be a whole number, got '2.5'\n"
        "t.yaml:3:9: 'quoted' must be a whole number, got the quoted string \"7\"\n"
        "t.yaml:4:8: 'floor' must be at least 1, got 0\n");
}

TEST_CASE("MapReader::Bool reads plain true and false only", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "a: true\nb: false\nc: maybe\nd: 'true'\n");

  MapReader reader(file, root, "thing");
  CHECK(reader.Bool("a") == true);
  CHECK(reader.Bool("b") == false);
  CHECK_FALSE(reader.Bool("c").has_value());
  CHECK_FALSE(reader.Bool("d").has_value());
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:3:4: 'c' must be true or false, got 'maybe'\n"
        "t.yaml:4:4: 'd' must be true or false, got the quoted string \"true\"\n");
}

TEST_CASE("MapReader::StringList reads a list of scalars and reports each bad item", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root =
      ParseOk(file, "tags: [a, 'b', 3]\nbad: [x, [y], {k: v}]\nscalar: x\nnone: []\n");

  MapReader reader(file, root, "thing");
  CHECK(reader.StringList("tags") == std::vector<std::string>{"a", "b", "3"});
  CHECK_FALSE(reader.StringList("bad").has_value());
  CHECK_FALSE(reader.StringList("scalar").has_value());
  CHECK(reader.StringList("none") == std::vector<std::string>{});
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:2:10: 'bad' item must be a string, got a list\n"
        "t.yaml:2:15: 'bad' item must be a string, got a mapping\n"
        "t.yaml:3:9: 'scalar' must be a list of strings, got 'x'\n");
}

TEST_CASE("MapReader::Enum reads a named value and suggests the closest name", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "a: closed_loop\nb: open_lop\nc: sideways\nd: [open_loop]\n");

  MapReader reader(file, root, "load");
  CHECK(reader.Enum("a", kModes) == Mode::kClosedLoop);
  CHECK_FALSE(reader.Enum("b", kModes).has_value());
  CHECK_FALSE(reader.Enum("c", kModes).has_value());
  CHECK_FALSE(reader.Enum("d", kModes).has_value());
  CHECK_FALSE(reader.Enum("e", kModes, Need::kRequired).has_value());
  reader.Finish();

  CHECK(diagnostics.ToString() ==
        "t.yaml:1:1: load: missing required key 'e'\n"
        "t.yaml:2:4: 'b' must be one of open_loop, closed_loop, got 'open_lop' (did you mean "
        "'open_loop'?)\n"
        "t.yaml:3:4: 'c' must be one of open_loop, closed_loop, got 'sideways'\n"
        "t.yaml:4:4: 'd' must be one of open_loop, closed_loop, got a list\n");
}

TEST_CASE("NameOf finds an enum value's name", "[yaml]") {
  CHECK(std::string(NameOf(Mode::kOpenLoop, kModes)) == "open_loop");
  CHECK(std::string(NameOf(Mode::kClosedLoop, kModes)) == "closed_loop");
  CHECK(std::string(NameOf(static_cast<Mode>(9), kModes)) == "?");
}

TEST_CASE("ReadJson types plain scalars and keeps quoted ones as strings", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file,
                            "a: 1\n"
                            "b: '1'\n"
                            "c: true\n"
                            "d: ~\n"
                            "e:\n"
                            "f: 2.5\n"
                            "g: [1, 'x', yes, {h: no}]\n"
                            "j: hello\n"
                            "k: \"true\"\n"
                            "nested:\n"
                            "  list: [-4, 0.5]\n"
                            "  map: {x: null, y: 'null'}\n");

  nlohmann::json json = ReadJson(file, root);

  CHECK(json == nlohmann::json::parse(R"({
    "a": 1, "b": "1", "c": true, "d": null, "e": null, "f": 2.5,
    "g": [1, "x", true, {"h": false}], "j": "hello", "k": "true",
    "nested": {"list": [-4, 0.5], "map": {"x": null, "y": "null"}}
  })"));
  // nlohmann::json compares numbers by value; the kinds matter too.
  CHECK(json["a"].is_number_integer());
  CHECK(json["f"].is_number_float());
  CHECK(json["b"].is_string());
  CHECK(json["nested"]["list"][0].is_number_integer());
  CHECK(json["nested"]["list"][0].get<int64_t>() == -4);
  CHECK(diagnostics.empty());
}

TEST_CASE("ReadJson reports a key that is not a string and skips it", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);
  YAML::Node root = ParseOk(file, "{[a]: 1, b: 2}\n");

  CHECK(ReadJson(file, root) == nlohmann::json::parse(R"({"b": 2})"));
  CHECK(diagnostics.ToString() == "t.yaml:1:2: mapping keys must be strings\n");
}

TEST_CASE("YamlFile::Parse reports a syntax error at its place and returns nothing", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);

  SECTION("an unclosed flow list") {
    CHECK_FALSE(file.Parse("a: [1, 2\n").has_value());
    CHECK(diagnostics.ToString() ==
          "t.yaml:2:1: YAML syntax error: end of sequence flow not found\n");
  }
  SECTION("a bad indentation") {
    CHECK_FALSE(file.Parse("a: 1\n  b: 2\n").has_value());
    CHECK(diagnostics.ToString() == "t.yaml:2:4: YAML syntax error: illegal map value\n");
  }
}

TEST_CASE("YamlFile with a first line offsets every line number", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics, 5);

  SECTION("node positions") {
    YAML::Node root = ParseOk(file, "a: 1\nbogus: 2\n");
    CHECK(file.Pos(root).ToString() == "t.yaml:5:1");
    MapReader reader(file, root, "front matter");
    CHECK(reader.Integer("a") == 1);
    reader.Finish();
    CHECK(diagnostics.ToString() == "t.yaml:6:1: unknown key 'bogus'\n");
  }
  SECTION("syntax errors") {
    CHECK_FALSE(file.Parse("key: value\nfoo: [1,\n").has_value());
    CHECK(diagnostics.ToString() ==
          "t.yaml:7:1: YAML syntax error: end of sequence flow not found\n");
  }
}

TEST_CASE("MapReader on a node that is not a mapping reports it once", "[yaml]") {
  Diagnostics diagnostics;
  YamlFile file("t.yaml", diagnostics);

  SECTION("a list") {
    YAML::Node root = ParseOk(file, "- a\n- b\n");
    MapReader reader(file, root, "scenario");
    CHECK_FALSE(reader.valid());
    // Every accessor finds nothing, and says nothing more.
    CHECK_FALSE(reader.String("a", Need::kRequired).has_value());
    CHECK_FALSE(reader.Has("b"));
    reader.Finish();
    CHECK(diagnostics.ToString() == "t.yaml:1:1: scenario must be a mapping, got a list\n");
  }
  SECTION("a nested list") {
    const YAML::Node root = ParseOk(file, "phases:\n  - a\n");
    MapReader reader(file, root["phases"], "phases");
    CHECK_FALSE(reader.valid());
    CHECK(diagnostics.ToString() == "t.yaml:2:3: phases must be a mapping, got a list\n");
  }
  SECTION("a scalar") {
    YAML::Node root = ParseOk(file, "just text\n");
    MapReader reader(file, root, "scenario");
    CHECK_FALSE(reader.valid());
    CHECK(diagnostics.ToString() == "t.yaml:1:1: scenario must be a mapping, got 'just text'\n");
  }
  SECTION("an empty document") {
    YAML::Node root = ParseOk(file, "");
    MapReader reader(file, root, "scenario");
    CHECK_FALSE(reader.valid());
    CHECK(diagnostics.ToString() == "t.yaml: scenario must be a mapping, got nothing\n");
  }
}

TEST_CASE("Describe shows what was found", "[yaml]") {
  CHECK(Describe(YAML::Node()) == "nothing");
  CHECK(Describe(YAML::Load("[1]")) == "a list");
  CHECK(Describe(YAML::Load("{a: 1}")) == "a mapping");
  CHECK(Describe(YAML::Load("word")) == "'word'");
  CHECK(Describe(YAML::Load("'word'")) == "the quoted string \"word\"");
  CHECK(Describe(YAML::Load("\"5\"")) == "the quoted string \"5\"");
}

}  // namespace
}  // namespace stagegate::manifest
