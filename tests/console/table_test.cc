#include <catch2/catch.hpp>

#include "console/console.h"

namespace stagegate::console {
namespace {

TEST_CASE("FormatTable sizes each column to its widest cell, two spaces apart") {
  const std::vector<std::string> lines =
      FormatTable({"level", "req/s", "p95"}, {{"c=64", "126121.44", "1.1"}, {"c=1000", "9", ""}});
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "level       req/s  p95");
  CHECK(lines[1] == "c=64    126121.44  1.1");
  CHECK(lines[2] == "c=1000          9");
}

TEST_CASE("FormatTable keeps wide numbers apart and pads short rows") {
  const std::vector<std::string> lines =
      FormatTable({"a", "b"}, {{"1234567890", "1234567890"}, {"x"}});
  CHECK(lines[1] == "1234567890  1234567890");
  CHECK(lines[2] == "x");
  CHECK(lines[0] == "a                    b");
}

}  // namespace
}  // namespace stagegate::console
