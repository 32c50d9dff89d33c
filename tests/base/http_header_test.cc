#include "base/http_header.h"

#include <catch2/catch.hpp>
#include <string>

namespace stagegate {
namespace {

TEST_CASE("HeaderProblem refuses line breaks, control characters and bad names", "[header]") {
  CHECK(HeaderProblem("X-Team", "a value\twith a tab") == std::nullopt);
  CHECK(HeaderProblem("X-Team", "a\r\nX-Injected: yes") ==
        "header 'X-Team': its value holds the control character \\r (a line break would start "
        "another header)");
  CHECK(HeaderProblem("X-Team", "a\nb") ==
        "header 'X-Team': its value holds the control character \\n (a line break would start "
        "another header)");
  CHECK(HeaderProblem("X-Team", std::string("a\0b", 3)) ==
        "header 'X-Team': its value holds the control character \\x00");
  CHECK(HeaderProblem("X\r\nY", "v") ==
        "header name 'X\r\nY' holds '\\r': a name may hold only letters, digits and "
        "!#$%&'*+-.^_`|~");
  CHECK(HeaderProblem("X Team", "v") ==
        "header name 'X Team' holds ' ': a name may hold only letters, digits and "
        "!#$%&'*+-.^_`|~");
  CHECK(HeaderProblem("", "v") == "a header name cannot be empty");
}

TEST_CASE("Header names compare case-insensitively", "[header]") {
  CHECK(SameHeaderName("Authorization", "authorization"));
  CHECK(SameHeaderName("X-A", "x-a"));
  CHECK_FALSE(SameHeaderName("Authorization", "Authorization2"));
}

TEST_CASE("SafeHeaderLine refuses CR, LF and NUL", "[header]") {
  CHECK(SafeHeaderLine("X-A: b"));
  CHECK_FALSE(SafeHeaderLine("X-A: b\r\nX-B: c"));
  CHECK_FALSE(SafeHeaderLine("X-A: b\n"));
  CHECK_FALSE(SafeHeaderLine(std::string("X-A: b\0c", 8)));
}

}  // namespace
}  // namespace stagegate
